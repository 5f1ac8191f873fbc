# SPDX-License-Identifier: MIT
"""nmtzoo.Translator against nmtzoo-translate: the same translations, scores, alignments and error
messages; threads sharing a Translator; the GIL released while it works; torch and nmtzoo in one
process in either import order; the README's example; the package installed into a prefix.

Run by tests/python/run_python_tests.sh, which trains the checkpoint and sets
NMTZOO_TEST_CHECKPOINT, NMTZOO_BIN_DIR, NMTZOO_BUILD_DIR, NMTZOO_SOURCE_DIR and PYTHONPATH.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import nmtzoo

CHECKPOINT = os.environ["NMTZOO_TEST_CHECKPOINT"]
BIN_DIR = os.environ["NMTZOO_BIN_DIR"]
SOURCE_DIR = os.environ["NMTZOO_SOURCE_DIR"]
BUILD_DIR = os.environ.get("NMTZOO_BUILD_DIR", "")
PYTHON = os.environ.get("NMTZOO_PYTHON", sys.executable)
REQUIRE_ALL = os.environ.get("NMTZOO_REQUIRE_ALL") == "1"

SOURCES = ["alpha bravo charlie", "delta echo foxtrot golf", "hotel india", "",
           "juliet alpha bravo charlie delta", "golf golf golf echo"]

# Keyword options and the same as nmtzoo-translate flags.
OPTION_SETS = [
    {},
    {"beam": 1},
    {"beam": 4, "nbest": 3, "length_penalty": "wu", "alpha": 0.6},
    {"beam": 2, "max_len_a": 0.5, "max_len_b": 2, "min_len": 2},
    {"sampling": True, "nbest": 2, "seed": 7, "top_k": 5, "temperature": 0.8},
]


def yaml_value(value):
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def app_flags(options):
    flags = []
    for key, value in options.items():
        flags += ["--set", f"decoding.{key}={yaml_value(value)}"]
    return flags


def run_app(args, lines, checkpoints=(CHECKPOINT,)):
    """nmtzoo-translate -c ... --threads 1 -q ARGS with LINES on stdin: (status, stdout, stderr)."""
    command = [os.path.join(BIN_DIR, "nmtzoo-translate")]
    for checkpoint in checkpoints:
        command += ["-c", checkpoint]
    command += ["--threads", "1", "-q"] + list(args)
    done = subprocess.run(command, input="".join(line + "\n" for line in lines), capture_output=True,
                          text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def app_translations(args, lines, **kwargs):
    status, out, err = run_app(args, lines, **kwargs)
    if status != 0:
        raise AssertionError(f"nmtzoo-translate {' '.join(args)} failed: {err}")
    return out


def app_error(args, lines=("alpha bravo",), **kwargs):
    """The message nmtzoo-translate prints after 'error: '."""
    status, _, err = run_app(args, lines, **kwargs)
    if status == 0 or "error: " not in err:
        raise AssertionError(f"nmtzoo-translate {' '.join(args)} did not fail: {err}")
    return err[err.index("error: ") + len("error: "):].rstrip("\n")


def split_where(message):
    """[(where, problem)] per line of a schema error: 'beam: decoding.beam must ...'."""
    return [tuple(line.split(": ", 1)) for line in message.split("\n")]


def torch_available():
    return subprocess.run([PYTHON, "-c", "import torch"], capture_output=True, check=False).returncode == 0


class TranslatorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.translator = nmtzoo.Translator(CHECKPOINT, threads=1)

    def test_translations_are_the_apps(self):
        for options in OPTION_SETS:
            with self.subTest(options=options):
                results = self.translator.translate_batch(SOURCES, **options)
                self.assertEqual(len(results), len(SOURCES))
                app = app_translations(app_flags(options) + ["--format", "jsonl"], SOURCES).splitlines()
                self.assertEqual(len(app), len(SOURCES))
                for result, line in zip(results, app):
                    expected = json.loads(line)
                    nbest = expected.get("nbest", [expected])
                    self.assertEqual(result.hypotheses, [h["text"] for h in nbest])
                    self.assertEqual(result.scores, [h["score"] for h in nbest])
                    self.assertEqual(result.log_probs, [h.get("log_prob") for h in nbest])
                    self.assertEqual(result.tokens, [h["tokens"] for h in nbest])
                    self.assertEqual(result.warnings, expected.get("warnings", []))
                if options.get("nbest", 1) == 1:  # plain text: the best translation a line
                    plain = app_translations(app_flags(options), SOURCES)
                    self.assertEqual(plain, "".join(r.hypotheses[0] + "\n" for r in results))

    def test_empty_source_has_one_empty_hypothesis_without_score(self):
        result = self.translator.translate_batch([""])[0]
        self.assertEqual(result.hypotheses, [""])
        self.assertEqual(result.scores, [None])
        self.assertEqual(result.log_probs, [None])

    def test_ctrl_c_stops_a_long_call_between_decoding_steps(self):
        # SIGINT used to wait for the whole call (21.8 s in the report; this call takes ~15 s
        # here): Python's handler ran once translate_batch had returned. Now it runs between
        # decoding steps, a few ms after the signal here; 3 s leaves room for any machine.
        class Stop(Exception):
            pass

        times = {}

        def handler(signum, frame):
            times["handled"] = time.monotonic()
            raise Stop()

        def send():
            times["sent"] = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)

        previous = signal.signal(signal.SIGINT, handler)
        sender = threading.Timer(0.3, send)
        results = None
        try:
            sender.start()
            results = self.translator.translate_batch(SOURCES * 6000, beam=5, max_len_a=3,
                                                      max_len_b=50)
        except Stop:
            pass
        finally:
            sender.join()
            signal.signal(signal.SIGINT, previous)
        self.assertIsNone(results, "the call ended before the signal was sent")
        self.assertLess(times["handled"] - times["sent"], 3.0,
                        "the handler ran only once the call had returned")
        # The Translator is usable after an interrupted call.
        self.assertEqual(len(self.translator.translate_batch(SOURCES)), len(SOURCES))

    def test_source_tokens_do_not_need_attention(self):
        # They were empty unless return_attention=True.
        plain = self.translator.translate_batch(SOURCES + [""])
        with_attention = self.translator.translate_batch(SOURCES + [""], return_attention=True)
        for result, expected in zip(plain, with_attention):
            self.assertEqual(result.source_tokens, expected.source_tokens)
        self.assertEqual(plain[-1].source_tokens, [])
        self.assertEqual(plain[0].source_tokens[-1], "</s>")
        self.assertGreater(len(plain[0].source_tokens), 1)

    def test_alignments_and_attention_are_the_apps(self):
        results = self.translator.translate_batch(SOURCES, beam=3, nbest=2, return_alignment=True,
                                                  return_attention=True)
        hard = app_translations(["--nbest", "2", "--format", "jsonl", "--alignment", "hard"], SOURCES)
        soft = app_translations(["--nbest", "2", "--format", "jsonl", "--alignment", "soft"], SOURCES)
        for result, hard_line, soft_line in zip(results, hard.splitlines(), soft.splitlines()):
            hard_nbest = json.loads(hard_line)["nbest"]
            self.assertEqual(result.alignments, [h.get("alignment", "") for h in hard_nbest])
            for k, expected in enumerate(json.loads(soft_line)["nbest"]):
                if "attention" not in expected:
                    self.assertEqual(result.attention[k], [])
                    continue
                self.assertEqual(result.source_tokens, expected["attention"]["source"])
                matrix = expected["attention"]["matrix"]
                self.assertEqual(len(result.attention[k]), len(matrix))
                for row, expected_row in zip(result.attention[k], matrix):
                    self.assertEqual(len(row), len(expected_row))
                    for value, rounded in zip(row, expected_row):
                        self.assertLessEqual(abs(value - rounded), 0.5e-4 + 1e-9)
                self.assertEqual(len(result.attention[k]), len(result.tokens[k]) + 1)

    def test_target_prefix_is_the_apps_tsv_prefix(self):
        sources = ["alpha bravo charlie", "delta echo"]
        prefixes = ["charlie", None]
        results = self.translator.translate_batch(sources, target_prefix=prefixes)
        app = app_translations(["--input-format", "tsv"], ["alpha bravo charlie\tcharlie", "delta echo"])
        self.assertEqual(app, "".join(r.hypotheses[0] + "\n" for r in results))
        self.assertTrue(results[0].hypotheses[0].startswith("charlie"))

    def test_an_ensemble_is_the_apps(self):
        ensemble = nmtzoo.Translator([CHECKPOINT, CHECKPOINT], threads=1, weights=[0.7, 0.3],
                                     ensemble_mode="logprob")
        results = ensemble.translate_batch(SOURCES, beam=3)
        app = app_translations(["--beam", "3", "--weights", "0.7,0.3", "--ensemble-mode", "logprob"], SOURCES,
                               checkpoints=(CHECKPOINT, CHECKPOINT))
        self.assertEqual(app, "".join(r.hypotheses[0] + "\n" for r in results))

    def test_scores_are_the_searchs_log_probs_of_its_outputs(self):
        sources = [s for s in SOURCES if s]
        results = self.translator.translate_batch(sources, beam=3)
        scored = self.translator.score_batch(sources, [r.hypotheses[0] for r in results])
        compared = 0
        for result, score in zip(results, scored):
            self.assertEqual(len(score.tokens), len(score.token_log_probs))
            self.assertEqual(score.tokens[-1], "</s>")
            self.assertAlmostEqual(score.log_prob, sum(score.token_log_probs), places=9)
            self.assertFalse(score.truncated)
            if score.tokens[:-1] == result.tokens[0]:  # the text tokenizes back to the same pieces
                self.assertAlmostEqual(score.log_prob, result.log_probs[0], delta=1e-4)
                compared += 1
        self.assertGreater(compared, 0)
        with self.assertRaises(ValueError) as raised:
            self.translator.score_batch(["a", "b"], ["a"])
        self.assertEqual(str(raised.exception), "score_batch: 2 sources for 1 targets")

    def test_option_errors_are_the_apps(self):
        cases = [
            {"beam": 0},
            {"length_penalty": "bogus"},
            {"beam": 2, "nbest": 3},
            {"top_p": 2.0, "alpha": -1},
            {"beam": 2.5},
        ]
        for options in cases:
            with self.subTest(options=options):
                with self.assertRaises(nmtzoo.ConfigError) as raised:
                    self.translator.translate_batch(["alpha bravo"], **options)
                self.assertIsInstance(raised.exception, ValueError)
                ours = split_where(str(raised.exception))
                apps = split_where(app_error(app_flags(options)))
                self.assertEqual([problem for _, problem in ours], [problem for _, problem in apps])
                self.assertEqual([where for where, _ in apps], [f"--set decoding.{where}" for where, _ in ours])
                for where, _ in ours:
                    self.assertIn(where, options)
        # Not schema errors: the very messages, as nmtzoo-translate prints them.
        with self.assertRaises(ValueError) as raised:
            self.translator.translate_batch(["alpha bravo"], return_alignment=True, alignment_layer=5)
        self.assertEqual(str(raised.exception),
                         app_error(["--alignment", "hard", "--alignment-layer", "5"]))
        missing = os.path.join(tempfile.gettempdir(), "no-such-nmtzoo-checkpoint.pt")
        with self.assertRaises(FileNotFoundError) as raised:
            nmtzoo.Translator(missing)
        self.assertEqual(str(raised.exception), app_error([], checkpoints=(missing,)))
        with self.assertRaises(nmtzoo.ConfigError) as raised:
            nmtzoo.Translator(CHECKPOINT, dtype="int16")
        self.assertEqual(split_where(str(raised.exception))[0][1], split_where(app_error(["--dtype", "int16"]))[0][1])

    def test_the_target_language_is_the_apps(self):
        # A bilingual model translates into its own target only: naming it changes nothing, and
        # another language is refused with nmtzoo-translate's message.
        named = self.translator.translate_batch(SOURCES[:3], target_lang="tgt")
        default = self.translator.translate_batch(SOURCES[:3])
        self.assertEqual([r.hypotheses for r in named], [r.hypotheses for r in default])
        self.assertEqual([r.scores for r in named], [r.scores for r in default])
        with self.assertRaises(ValueError) as raised:
            self.translator.translate_batch(["alpha bravo"], target_lang="fr")
        # named as the NUL-byte refusal names a source (0-based); the app says "stdin: line 1: ..."
        self.assertTrue(str(raised.exception).startswith("sources[0]: "))
        self.assertEqual(app_error(["--target-lang", "fr"]),
                         "stdin: line 1: " + str(raised.exception)[len("sources[0]: "):])
        self.assertIn("translates into tgt, not 'fr'", str(raised.exception))

    def test_bad_calls_raise_python_errors(self):
        with self.assertRaises(TypeError) as raised:
            self.translator.translate_batch(["alpha"], beam_size=5)
        self.assertIn("'beam_size'", str(raised.exception))
        with self.assertRaises(TypeError):
            self.translator.translate_batch("alpha bravo")
        with self.assertRaises(TypeError):
            self.translator.translate_batch(["alpha"], beam=[1, 2])
        with self.assertRaises(ValueError) as raised:
            self.translator.translate_batch(["alpha", "a\0b"])
        self.assertEqual(str(raised.exception), "sources[1]: a NUL byte at byte 2")
        with self.assertRaises(ValueError) as raised:
            self.translator.translate_batch(["alpha", "bravo"], target_prefix=["", " ".join(["alpha"] * 5000)])
        self.assertTrue(str(raised.exception).startswith("target_prefix[1]: the prefix has "), str(raised.exception))
        with self.assertRaises(ValueError):
            nmtzoo.Translator(CHECKPOINT, device="tpu")
        with self.assertRaises(ValueError):
            nmtzoo.Translator(CHECKPOINT, threads=-1)

    def test_bad_checkpoints_and_arguments_raise_what_python_users_expect(self):
        # They all raised RuntimeError; threads=10**6 hung; beam='5', bytes sources, 1e300 and 2**62
        # were accepted.
        work = tempfile.mkdtemp()
        try:
            with open(CHECKPOINT, "rb") as f:
                data = f.read()
            paths = {name: os.path.join(work, name) for name in ("empty.pt", "truncated.pt", "corrupt.pt")}
            open(paths["empty.pt"], "wb").close()
            with open(paths["truncated.pt"], "wb") as f:
                f.write(data[:len(data) // 3])
            corrupt = bytearray(data)
            corrupt[len(data) // 2:len(data) // 2 + 64] = b"x" * 64
            with open(paths["corrupt.pt"], "wb") as f:
                f.write(bytes(corrupt))
            with self.assertRaises(FileNotFoundError) as raised:
                nmtzoo.Translator(os.path.join(work, "missing.pt"))
            self.assertIn("missing.pt", str(raised.exception))
            with self.assertRaises(IsADirectoryError):
                nmtzoo.Translator(work)
            for name, path in paths.items():
                with self.assertRaises(ValueError, msg=name) as raised:
                    nmtzoo.Translator(path)
                self.assertIn(name, str(raised.exception))
            with self.assertRaises(ValueError) as raised:
                nmtzoo.Translator(CHECKPOINT + "\0.pt")
            self.assertIn("NUL", str(raised.exception))
        finally:
            shutil.rmtree(work)
        with self.assertRaises(ValueError) as raised:
            nmtzoo.Translator(CHECKPOINT, device="cuda")  # no GPU here (nor in CI)
        self.assertIn("cuda", str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            nmtzoo.Translator(CHECKPOINT, threads=10**6)
        self.assertIn("cores", str(raised.exception))
        with self.assertRaises(TypeError) as raised:
            self.translator.translate_batch(["alpha"], beam="5")
        self.assertIn("beam", str(raised.exception))
        with self.assertRaises(TypeError) as raised:
            self.translator.translate_batch(["alpha", b"bravo"])
        self.assertIn("sources[1]", str(raised.exception))
        for option in ({"max_len_a": 1e300}, {"max_len_b": 2**62}, {"nbest": 20000, "sampling": True}):
            with self.assertRaises(nmtzoo.ConfigError, msg=str(option)):
                self.translator.translate_batch(["alpha"], **option)
        # None in a prefix list still means no prefix.
        self.translator.translate_batch(["alpha", "bravo"], target_prefix=[None, "alpha"])

    def test_keywords_reach_the_schema_as_typed(self):
        options = self.translator.decoding_options(beam=4, alpha=0.6, sampling=False, length_penalty="wu",
                                                   top_p=1e-3, max_len_b=None)
        self.assertEqual(options["beam"], "4")
        self.assertEqual(options["length_penalty"], "wu")
        self.assertEqual(options["sampling"], "false")
        self.assertEqual(float(options["alpha"]), 0.6)
        self.assertEqual(float(options["top_p"]), 1e-3)
        self.assertEqual(options["max_len_b"], "5")  # None: the checkpoint's value
        # A smaller beam than the checkpoint's narrows its n-best with it, as in nmtzoo-translate.
        self.assertEqual(self.translator.decoding_options(beam=1)["nbest"], "1")
        self.assertEqual(nmtzoo.Translator(CHECKPOINT, dtype="bf16").decoding_options()["dtype"], "bf16")

    def test_threads_sharing_a_translator_get_their_own_answers(self):
        expected = {i: self.translator.translate_batch(SOURCES, **options) for i, options in enumerate(OPTION_SETS)}
        got = {}
        errors = []

        def work(i):
            try:
                for _ in range(3):
                    got.setdefault(i, []).append(self.translator.translate_batch(SOURCES, **OPTION_SETS[i]))
            except Exception as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(OPTION_SETS))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        for i, results in got.items():
            for result in results:
                self.assertEqual(result, expected[i])

    def test_other_threads_run_while_it_translates(self):
        running = threading.Event()
        stop = threading.Event()
        ticks = [0]

        def tick():
            running.set()
            while not stop.is_set():
                ticks[0] += 1

        ticker = threading.Thread(target=tick)
        ticker.start()
        running.wait()
        sources = [" ".join(SOURCES[i % len(SOURCES)] for i in range(j, j + 4)) for j in range(150)]
        before = ticks[0]
        start = time.monotonic()
        self.translator.translate_batch(sources, beam=6)
        seconds = time.monotonic() - start
        during = ticks[0] - before
        stop.set()
        ticker.join()
        # Holding the GIL, the call would let the ticker run only at its very start.
        self.assertGreater(during, 1000, f"{during} ticks in {seconds:.2f} s of translation")

    def test_torch_and_nmtzoo_import_in_either_order(self):
        if not torch_available():
            if REQUIRE_ALL:
                self.fail("python3-torch is missing (NMTZOO_REQUIRE_ALL=1; scripts/setup.sh installs it)")
            self.skipTest("python3-torch is missing")
        expected = app_translations(["--beam", "3"], ["alpha bravo charlie"])
        program = (
            f"translator = nmtzoo.Translator({CHECKPOINT!r}, threads=1)\n"
            "print(translator.translate_batch(['alpha bravo charlie'], beam=3)[0].hypotheses[0])\n"
            "a = torch.randn(64, 48)\n"  # LibTorch's products, now through oneDNN, still right
            "assert torch.allclose(a @ a.T, (a.double() @ a.double().T).float(), atol=1e-4)\n"
        )
        for imports in ("import torch\nimport nmtzoo\n", "import nmtzoo\nimport torch\n"):
            with self.subTest(imports=imports):
                done = subprocess.run([PYTHON, "-c", imports + program], capture_output=True, text=True,
                                      check=False)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(done.stdout, expected)

    def test_the_readme_example_runs_and_is_the_readmes(self):
        example_path = os.path.join(SOURCE_DIR, "tests", "python", "readme_example.py")
        with open(example_path, encoding="utf-8") as file:
            example = file.read()
        with open(os.path.join(SOURCE_DIR, "README.md"), encoding="utf-8") as file:
            readme = file.read()
        # The README shows the example without the file's license line.
        shown = [line for line in example.splitlines(True) if not line.startswith("# SPDX-License-Identifier")]
        indented = "".join(("    " + line if line.strip() else line) for line in shown)
        self.assertIn(indented, readme, "README.md shows tests/python/readme_example.py, indented by four spaces")
        with tempfile.TemporaryDirectory() as folder:
            checkpoints = os.path.join(folder, "runs", "multi30k_quickstart", "checkpoints")
            os.makedirs(checkpoints)
            os.symlink(CHECKPOINT, os.path.join(checkpoints, "checkpoint_best.pt"))
            done = subprocess.run([PYTHON, example_path], cwd=folder, capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreaterEqual(len(done.stdout.splitlines()), 4, done.stdout)

    def test_the_installed_package_uses_the_installed_libraries(self):
        if not BUILD_DIR or shutil.which("cmake") is None:
            self.skipTest("needs NMTZOO_BUILD_DIR and cmake")
        with tempfile.TemporaryDirectory() as prefix:
            done = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], capture_output=True,
                                  text=True, check=False)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            package = os.path.join(prefix, "lib", "python3", "dist-packages")
            self.assertTrue(os.path.isdir(os.path.join(package, "nmtzoo")))
            program = (
                "import importlib.metadata, nmtzoo, os\n"
                f"assert nmtzoo.__file__.startswith({prefix!r}), nmtzoo.__file__\n"
                "metadata = importlib.metadata.metadata('nmtzoo')\n"
                "assert metadata['License-Expression'] == 'MIT', metadata['License-Expression']\n"
                "license = importlib.metadata.distribution('nmtzoo').read_text('licenses/LICENSE') or ''\n"
                "assert license.startswith('MIT License'), license[:40]\n"
                f"translator = nmtzoo.Translator({CHECKPOINT!r}, threads=1)\n"
                "print(translator.translate_batch(['alpha bravo charlie'], beam=3)[0].hypotheses[0])\n"
                "libraries = {line.split()[-1] for line in open('/proc/self/maps') if 'libnmtzoo_' in line}\n"
                f"outside = [path for path in libraries if not os.path.realpath(path).startswith(os.path.realpath({prefix!r}))]\n"
                "assert libraries and not outside, outside\n"
            )
            environment = {k: v for k, v in os.environ.items()
                           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "NMTZOO_SPM_SHIM")}
            environment["PYTHONPATH"] = package
            done = subprocess.run([PYTHON, "-c", program], capture_output=True, text=True, check=False,
                                  env=environment, cwd=prefix)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout, app_translations(["--beam", "3"], ["alpha bravo charlie"]))


if __name__ == "__main__":
    unittest.main()
