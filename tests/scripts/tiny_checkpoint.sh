# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the tests that need a trained checkpoint of their own without Multi30k
# (tests/scripts/package_examples.sh, tests/python/run_python_tests.sh):
#   train_tiny_checkpoint NMTZOO_TRAIN FOLDER LAYERS STEPS [NMTZOO_TRAIN ARGUMENTS...]
# writes a synthetic word-reversal task (400 training pairs of 2 to 6 words, 40 valid, 20 test)
# and a tiny Transformer config (d_model 32, LAYERS encoder and decoder layers) into FOLDER, and
# trains it with NMTZOO_TRAIN for STEPS updates on one thread (seconds); its log is
# FOLDER/train.log and its checkpoint FOLDER/tiny-run/checkpoints/checkpoint_last.pt.
# Returns nmtzoo-train's status.
train_tiny_checkpoint() {
  local train="$1" folder="$2" layers="$3" steps="$4"
  shift 4
  local extra=("$@")
  local data="$folder/data"
  mkdir -p "$data"
  local split
  for split in "train 400 1" "valid 40 2" "test 20 3"; do
    set -- $split
    # Sentences of 2 to 6 words; the target is the source in reverse order.
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
  done
  cat >"$folder/tiny.yaml" <<YAML
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
  encoder_layers: $layers
  decoder_layers: $layers
  dropout: 0.0
  max_positions: 64
training:
  output_dir: $folder/tiny-run
  device: cpu
  threads: 1
  max_tokens: 400
  lr: 0.003
  warmup_steps: 10
  max_steps: $steps
  valid_every: 0
  log_every: 10
decoding:
  beam: 3
  max_len_a: 1.2
  max_len_b: 5
YAML
  "$train" --config "$folder/tiny.yaml" "${extra[@]}" >"$folder/train.log" 2>&1
}
