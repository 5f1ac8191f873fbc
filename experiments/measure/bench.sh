#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The performance figures of docs/performance.md, in one command (a benchmark, never a test):
#   experiments/measure/bench.sh [--threads N] [--no-python]
# For transformer_small and rnn_bahdanau_small on Multi30k de->en: training tokens/s, FLOPs and
# MFU against the matmul ceiling measured in the same run, peak memory, decoding speed of the
# trained, averaged models from experiments/compare.sh (greedy, beam 5, batch size 1, one sentence
# per call; float32, bf16 and int8), and the Python peer (experiments/measure/python_peer.py, needs
# scripts/setup.sh --with-python) on the same batches and weights. Then transformer_base's training figures (the preset a WMT-sized run
# uses; Multi30k batches of 4,096 tokens, 5 timed updates) to plan such a run from. Writes
# reports/bench/*.json and prints everything.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
threads="$(nproc)"
parse_args "threads: no-python" "$@"
expect_args 0
prepare_workspace
out=reports/bench
mkdir -p "$out"
for model in transformer rnn; do
  run="runs/multi30k_de_en_$model"
  checkpoint=()
  if [[ -f "$run/averaged.pt" ]]; then
    checkpoint=(--checkpoint "$run/averaged.pt" --no-uncached --bf16-decoding --int8-decoding --latency)
  else
    echo "$script: no $run/averaged.pt (run experiments/compare.sh first): training figures only" >&2
  fi
  export_args=()
  ((!no_python)) && [[ $model == transformer && ${#checkpoint[@]} -gt 0 ]] &&
    export_args=(--export-for-python "$out/python_peer")
  echo "== $model"
  build/bin/nmtzoo-bench --config "configs/multi30k_de_en_$model.yaml" --threads "$threads" \
    "${checkpoint[@]}" "${export_args[@]}" --json "$out/$model.json"
  if ((${#export_args[@]})); then
    echo "== Python peer (torch.nn.Transformer, same batches and weights, $threads threads)"
    experiments/measure/python_peer.py "$out/python_peer" --threads "$threads" --compare "$out/$model.json" \
      2> >(grep -v -e "nested tensors" -e "_nested_tensor_from_mask" >&2) | tee "$out/python.txt"
  fi
done
echo "== transformer_base (training only)"
build/bin/nmtzoo-bench --config configs/multi30k_de_en_transformer.yaml --threads "$threads" \
  --set model.arch=transformer_base --set training.max_tokens=4096 --warmup 1 --steps 5 --repeats 2 \
  --json "$out/transformer_base.json"
