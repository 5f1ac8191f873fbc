#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""TensorBoard's view of a training run, read back without nmtzoo's own reader.

nmtzoo-train trains a tiny Transformer for 9 updates (a train record each update, a validation
every 3), is resumed from its checkpoint of update 6 (as after a crash past it) up to 12; then its
event file is read with the messages of TensorBoard's event.proto and summary.proto
(tensorboard_event.proto beside this file, compiled by protoc for python3-protobuf), each
record's framing checked with a CRC-32C written here, and every scalar and step compared with
metrics.jsonl.

  /usr/bin/python3 tests/tensorboard/test_tensorboard_events.py PROJECT_ROOT NMTZOO_TRAIN

Exit status 77 (skipped) without protoc or python3-protobuf, a failure instead under
NMTZOO_REQUIRE_ALL=1 (scripts/setup.sh installs protobuf-compiler and python3-protobuf).
"""
import glob
import importlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

PROJECT, TRAIN = (os.path.abspath(arg) for arg in sys.argv[1:3])


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    """The records of a TFRecord file, each framing checked."""
    with open(path, "rb") as f:
        data = f.read()
    out, at = [], 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert length_crc == masked(crc32c(header)), f"length checksum of the record at byte {at}"
        record = data[at + 12:at + 12 + length]
        (record_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert len(record) == length and record_crc == masked(crc32c(record)), \
            f"checksum of the record at byte {at}"
        out.append(record)
        at += 16 + length
    return out


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def event_file(run):
    files = glob.glob(os.path.join(run, "*tfevents*"))
    assert len(files) == 1, f"one event file in the run folder, found {files}"
    return files[0]


class TensorBoardEvents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        protos = os.path.join(PROJECT, "tests", "tensorboard")
        subprocess.run(["protoc", f"--proto_path={protos}", f"--python_out={cls.tmp}",
                        os.path.join(protos, "tensorboard_event.proto")], check=True)
        sys.path.insert(0, cls.tmp)
        cls.pb = importlib.import_module("tensorboard_event_pb2")

        folder = os.path.join(cls.tmp, "train")
        every_update = ["--set", "training.log_every=1", "--set", "training.valid_every=3"]
        train = subprocess.run(
            ["bash", "-c", 'source "$0"; train_tiny_checkpoint "$@"',
             os.path.join(PROJECT, "tests", "scripts", "tiny_checkpoint.sh"), TRAIN, folder, "1",
             "9"] + every_update)
        cls.run_dir = os.path.join(folder, "tiny-run")
        if train.returncode != 0:
            raise AssertionError(open(os.path.join(folder, "train.log")).read()[-3000:])
        cls.first_records = records(event_file(cls.run_dir))
        checkpoints = os.path.join(cls.run_dir, "checkpoints")
        os.remove(os.path.join(checkpoints, "checkpoint_last.pt"))
        shutil.copy(os.path.join(checkpoints, "checkpoint_6.pt"),
                    os.path.join(checkpoints, "checkpoint_last.pt"))
        resumed = subprocess.run(
            [TRAIN, "--config", os.path.join(folder, "tiny.yaml"), "--resume", "--set",
             "training.max_steps=12"] + every_update, capture_output=True, text=True)
        if resumed.returncode != 0:
            raise AssertionError(resumed.stderr[-3000:])
        cls.records = records(event_file(cls.run_dir))
        cls.events = []
        for record in cls.records:
            event = cls.pb.Event()
            event.ParseFromString(record)
            cls.events.append(event)
        with open(os.path.join(cls.run_dir, "metrics.jsonl")) as f:
            cls.metrics = [json.loads(line) for line in f]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_byte_is_one_of_tensorboards_fields(self):
        for record, event in zip(self.records, self.events):
            copy = self.pb.Event()
            copy.CopyFrom(event)
            copy.DiscardUnknownFields()
            self.assertEqual(copy.SerializeToString(), record, event)

    def test_the_file_starts_with_its_version(self):
        self.assertEqual(self.events[0].WhichOneof("what"), "file_version")
        self.assertEqual(self.events[0].file_version, "brain.Event:2")
        self.assertTrue(all(e.WhichOneof("what") == "summary" for e in self.events[1:]))

    def test_each_step_once_after_the_resume(self):
        def steps(prefix):
            return [e.step for e in self.events[1:] if e.summary.value[0].tag.startswith(prefix)]
        self.assertEqual(steps("train/"), list(range(1, 13)))
        self.assertEqual(steps("valid/"), [3, 6, 9, 12])

    def test_what_was_written_up_to_the_checkpoint_is_kept_byte_for_byte(self):
        kept = [r for r, e in zip(self.records, self.events) if e.step <= 6]
        self.assertEqual(kept, self.first_records[:len(kept)])
        self.assertGreater(len(self.first_records), len(kept), "the first run went past step 6")

    def test_every_scalar_is_metrics_jsonl_s(self):
        expected = []
        for m in self.metrics:
            if m["type"] == "train":
                expected.append((m["step"], {
                    "train/loss": m["loss"], "train/ppl": math.exp(m["nll"]), "train/lr": m["lr"],
                    "train/tokens_per_second": m["tokens_per_second"],
                    "train/grad_norm": m["grad_norm"]}))
            else:
                expected.append((m["step"], {
                    "valid/loss": m["loss"], "valid/ppl": m["ppl"], "valid/bleu": m["bleu"],
                    "valid/chrf": m["chrf"]}))
        got = [(e.step, {v.tag: v.simple_value for v in e.summary.value}) for e in self.events[1:]]
        self.assertEqual([step for step, _ in got], [step for step, _ in expected])
        for (step, scalars), (_, want) in zip(got, expected):
            self.assertEqual(sorted(scalars), sorted(want), f"step {step}")
            for tag, value in want.items():
                # ppl: exp computed by C++ and by Python may differ in the last bit of a double.
                self.assertTrue(math.isclose(scalars[tag], float32(value), rel_tol=1e-6),
                                f"step {step} {tag}: {scalars[tag]} vs {value}")
        self.assertTrue(all(s["train/grad_norm"] > 0 for _, s in got if "train/grad_norm" in s))

    def test_wall_times_are_seconds_since_the_epoch_in_order(self):
        times = [e.wall_time for e in self.events]
        self.assertEqual(times[1:], sorted(times[1:]))
        self.assertGreater(times[0], 1.7e9)


def missing_tools():
    missing = [] if shutil.which("protoc") else ["protoc (protobuf-compiler)"]
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        missing.append("python3-protobuf")
    return missing


if __name__ == "__main__":
    missing = missing_tools()
    if missing:
        required = os.environ.get("NMTZOO_REQUIRE_ALL") == "1"
        print(f"{'FAILED' if required else 'skipped'}: missing {', '.join(missing)} "
              "(scripts/setup.sh installs them)", file=sys.stderr)
        sys.exit(1 if required else 77)
    unittest.main(argv=[sys.argv[0], "-v"])
