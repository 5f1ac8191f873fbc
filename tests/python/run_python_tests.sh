#!/usr/bin/env bash
# The Python package's tests (tests/python/test_*.py), run by /usr/bin/python3 on the build tree's
# package (PYTHONPATH=BUILD_DIR/python). The translator's tests need a trained checkpoint: the
# build's nmtzoo-train first trains a tiny Transformer for a few updates on a synthetic
# word-reversal task (seconds), whose path they get in NMTZOO_TEST_CHECKPOINT.
#
#   tests/python/run_python_tests.sh PROJECT_ROOT BUILD_DIR [TEST_FILE ...] [--keep]
#
# TEST_FILE: the tests to run (default: tests/python/test_translator.py); --keep: keep the
# scratch folder (printed). NMTZOO_PYTHON overrides the interpreter.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
project="$(cd "$1" && pwd)"
build="$(cd "$2" && pwd)"
shift 2
keep=0
tests=()
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    *) tests+=("$(realpath "$arg")") ;;
  esac
done
((${#tests[@]})) || tests=("$project/tests/python/test_translator.py")
python="${NMTZOO_PYTHON:-/usr/bin/python3}"
scratch="$(mktemp -d)"
if ((keep)); then echo "scratch folder: $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi

data="$scratch/data"
mkdir -p "$data"
make_split() {  # SPLIT PAIRS SEED: sentences of 2 to 6 words, the target in reverse order
  awk -v pairs="$2" -v seed="$3" -v src="$data/$1.src" -v tgt="$data/$1.tgt" 'BEGIN {
    n_words = split("alpha bravo charlie delta echo foxtrot golf hotel india juliet", words, " ")
    srand(seed)
    for (i = 0; i < pairs; i++) {
      n = 2 + int(rand() * 5)
      for (w = 1; w <= n; w++) sentence[w] = words[1 + int(rand() * n_words)]
      s = sentence[1]; t = sentence[n]
      for (w = 2; w <= n; w++) { s = s " " sentence[w]; t = t " " sentence[n + 1 - w] }
      print s > src; print t > tgt
    }
  }'
}
make_split train 400 1
make_split valid 40 2
make_split test 20 3
cat >"$scratch/tiny.yaml" <<YAML
data:
  dir: $data
  src_lang: src
  tgt_lang: tgt
  train: train
  valid: valid
  test: [test]
  max_len: 40
tokenizer:
  vocab_size: 40
model:
  arch: transformer
  d_model: 32
  heads: 2
  ffn_dim: 64
  encoder_layers: 2
  decoder_layers: 2
  dropout: 0.0
  max_positions: 64
training:
  output_dir: $scratch/tiny-run
  device: cpu
  threads: 1
  max_tokens: 400
  lr: 0.003
  warmup_steps: 10
  max_steps: 200
  valid_every: 0
  log_every: 10
decoding:
  beam: 3
  max_len_a: 1.2
  max_len_b: 5
YAML
if ! "$build/bin/nmtzoo-train" --config "$scratch/tiny.yaml" >"$scratch/train.log" 2>&1; then
  echo "FAILED: nmtzoo-train; the end of its log:" >&2
  tail -n 40 "$scratch/train.log" >&2
  exit 1
fi

export NMTZOO_TEST_CHECKPOINT="$scratch/tiny-run/checkpoints/checkpoint_last.pt"
export NMTZOO_BIN_DIR="$build/bin" NMTZOO_BUILD_DIR="$build" NMTZOO_SOURCE_DIR="$project"
export NMTZOO_PYTHON="$python"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$scratch"
status=0
for test in "${tests[@]}"; do
  "$python" "$test" -v || status=1
done
exit "$status"
