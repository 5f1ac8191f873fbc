#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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

source "$project/tests/scripts/tiny_checkpoint.sh"
if ! train_tiny_checkpoint "$build/bin/nmtzoo-train" "$scratch" 2 200; then
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
