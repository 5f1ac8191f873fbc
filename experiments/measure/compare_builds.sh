#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compares two builds' speed side by side, alternating A B A B so the machine's drift hits both
# (a benchmark, never a test):
#   experiments/measure/compare_builds.sh BIN_A BIN_B OUT_DIR [--rounds N] [--arch transformer|rnn]
#                       [--checkpoint CKPT] [--sentences N] [--threads N] [--set KEY=VALUE ...]
# Each round runs BIN_A/nmtzoo-bench then BIN_B/nmtzoo-bench on the same config (training
# tokens/s) and, with --checkpoint, the same trained model (greedy, beam 5 and batch-1 decoding
# of test_2016_flickr), with 2 threads unless --threads says otherwise. Prints every run, the best
# of each build, and B / A, with each update's milliseconds in products and outside them.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
rounds=2 arch=transformer sentences=300 threads=2
parse_args "rounds: arch: checkpoint: sentences: threads: set+" "$@"
expect_args 3
bin_a="$(cd "${args[0]}" && pwd)"; bin_b="$(cd "${args[1]}" && pwd)"; out="${args[2]}"
checkpoint_args=()
[[ -n "$checkpoint" ]] && checkpoint_args=(--checkpoint "$checkpoint" --no-uncached)
mkdir -p "$out"
cd "$root"
for ((round = 1; round <= rounds; ++round)); do
  for side in a b; do
    bin="$bin_a"; [[ $side == b ]] && bin="$bin_b"
    json="$out/$arch.$side.$round.json"
    echo "== round $round, build ${side^^} ($bin)"
    "$bin/nmtzoo-bench" --config "configs/multi30k_de_en_$arch.yaml" --threads "$threads" \
      --warmup 2 --steps 10 --repeats 2 --sentences "$sentences" "${set_args[@]}" "${checkpoint_args[@]}" \
      --json "$json" | tee "${json%.json}.txt" | grep -E "^(machine|training  |           [0-9]|           per update|decoding)"
  done
done
/usr/bin/python3 - "$out" "$arch" "$rounds" "$threads" <<'PY'
import json, re, sys
out, arch, rounds, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def load(side, r):
    run = json.load(open(f"{out}/{arch}.{side}.{r}.json"))
    # The split of an update (printed, not in the JSON of older builds).
    text = open(f"{out}/{arch}.{side}.{r}.txt").read()
    split = re.search(r"per update: (\d+) ms in matrix products .* (\d+) ms in everything else", text)
    if split:
        run["training"]["ms in products"] = float(split.group(1))
        run["training"]["ms outside products"] = float(split.group(2))
    return run
runs = {side: [load(side, r) for r in range(1, rounds + 1)] for side in "ab"}
def figures(run):
    f = {"training target tokens/s": run["training"]["tgt_tokens_per_second"],
         "training MFU": run["training"]["mfu"]}
    for key in ("ms in products", "ms outside products"):
        if key in run["training"]:
            f["training " + key] = run["training"][key]
    for mode in run.get("decoding", []):
        f[mode["mode"] + ", sentences/s"] = mode["sentences_per_second"]
    return f
print(f"\n{arch}: best of {rounds} runs per build ({threads} threads; for milliseconds the lowest)")
for key in figures(runs["a"][0]):
    a = [figures(r)[key] for r in runs["a"]]
    b = [figures(r)[key] for r in runs["b"]]
    best = min if key.startswith("training ms") else max
    print(f"  {key:<40} A {best(a):9.3f}  B {best(b):9.3f}  B/A {best(b) / best(a):5.3f}"
          f"   (A runs {', '.join(f'{x:.3f}' for x in a)}; B runs {', '.join(f'{x:.3f}' for x in b)})")
PY
