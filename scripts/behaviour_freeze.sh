#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that a change of structure changed no behaviour: two builds of nmtzoo (BEFORE and AFTER,
# their bin/ folders) train the Transformer and the Bahdanau RNN for 50 updates on Multi30k from
# the same seed, then translate, score and serve with each build. Identical means:
#   - every logged training loss (full precision, metrics.jsonl, one record per update) equal;
#   - test_2016_flickr translated by each build's own checkpoints byte for byte equal: greedy,
#     beam 5, int8, sampling with a seed (jsonl, 2 samples), lexical constraints and a prefix
#     (tsv in, jsonl out), hard alignments, soft alignments (jsonl), and the ensemble of the two
#     architectures (jsonl, 2-best);
#   - AFTER translating the checkpoints BEFORE wrote, in every mode above, gives the same lines
#     (old checkpoints load, and decoding is compared on the same weights even when a change of
#     training makes each build's own checkpoints differ);
#   - nmtzoo-evaluate's output (BLEU, chrF, TER with a paired bootstrap test, text and JSON) equal;
#   - nmtzoo-serve's answers equal: LibreTranslate's /translate byte for byte, /v1/translate's
#     texts, scores and tokens for every hypothesis.
#
#   scripts/behaviour_freeze.sh BEFORE_BIN AFTER_BIN WORK_DIR
#
# BEFORE's outputs are kept in WORK_DIR/before and reused when complete (delete it to redo).
# Exit status 0 when everything is identical, 1 otherwise (the differences are printed).
set -euo pipefail
if [[ $# -ne 3 ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
before_bin="$(cd "$1" && pwd)"
after_bin="$(cd "$2" && pwd)"
mkdir -p "$3"
work="$(cd "$3" && pwd)"
data="$root/data/multi30k"
[[ -f "$data/train.de.gz" ]] || source "$root/scripts/data-dir.sh"
archs=(transformer rnn)
steps=50
threads=2
python=/usr/bin/python3

config_of() {
  case "$1" in
    transformer) echo "$root/configs/multi30k_de_en_transformer.yaml" ;;
    rnn) echo "$root/configs/multi30k_de_en_rnn.yaml" ;;
  esac
}

# The inputs every build translates: the test set, and for the guided modes its first 300 lines
# with the reference's longest word as a constraint (and its first word as a prefix every 3rd line).
make_inputs() {
  mkdir -p "$work/inputs"
  gzip -dc "$data/test_2016_flickr.de.gz" >"$work/inputs/test.de"
  gzip -dc "$data/test_2016_flickr.en.gz" >"$work/inputs/test.en"
  paste "$work/inputs/test.de" "$work/inputs/test.en" | awk -F'\t' 'NR <= 300 {
      n = split($2, w, " "); best = w[1];
      for (i = 2; i <= n; i++) if (length(w[i]) > length(best)) best = w[i];
      prefix = (NR % 3 == 0) ? w[1] : "";
      print $1 "\t" prefix "\t" best }' >"$work/inputs/guided.tsv"
  awk 'NR <= 100' "$work/inputs/test.de" >"$work/inputs/test100.de"
}

# translate BIN PREFIX CHECKPOINT...: PREFIX.<mode> for every mode.
translate() {
  local bin="$1" prefix="$2"
  shift 2
  local checkpoints=()
  for c in "$@"; do checkpoints+=(-c "$c"); done
  local t=("$bin/nmtzoo-translate" "${checkpoints[@]}" --threads $threads --device cpu -q)
  if (($# > 1)); then
    "${t[@]}" -i "$work/inputs/test.de" -o "$prefix.ensemble" --beam 5 --nbest 2 --format jsonl
    return
  fi
  "${t[@]}" -i "$work/inputs/test.de" -o "$prefix.greedy" --beam 1
  "${t[@]}" -i "$work/inputs/test.de" -o "$prefix.beam5" --beam 5
  "${t[@]}" -i "$work/inputs/test.de" -o "$prefix.int8" --beam 5 --dtype int8
  "${t[@]}" -i "$work/inputs/test.de" -o "$prefix.sampling" --sampling --nbest 2 --seed 7 --format jsonl
  "${t[@]}" -i "$work/inputs/guided.tsv" -o "$prefix.constraints" --input-format tsv --constraints ordered \
    --beam 5 --format jsonl
  "${t[@]}" -i "$work/inputs/test100.de" -o "$prefix.hard_alignment" --beam 5 --alignment hard
  "${t[@]}" -i "$work/inputs/test100.de" -o "$prefix.soft_alignment" --beam 5 --alignment soft --format jsonl
}
modes=(greedy beam5 int8 sampling constraints hard_alignment soft_alignment)

# evaluate BIN OUT: BEFORE's beam-5 outputs scored and compared by BIN, as text and as JSON (the
# same files for both builds, named relative to the work folder: the output names them).
evaluate() {
  local bin="$1" out="$2"
  (cd "$work" && "$bin/nmtzoo-evaluate" inputs/test.en -i before/transformer.beam5 before/rnn.beam5 \
    -m bleu chrf ter --paired-bs --paired-bs-n 200 >"$out/evaluate.txt" 2>&1)
  (cd "$work" && "$bin/nmtzoo-evaluate" inputs/test.en -i before/transformer.beam5 -m bleu chrf ter \
    --confidence --confidence-n 200 -f json >"$out/evaluate.json" 2>&1)
}

# serve BIN OUT CHECKPOINT: the server's answers to a fixed set of requests.
serve() {
  local bin="$1" out="$2" checkpoint="$3"
  "$bin/nmtzoo-serve" -c "$checkpoint" --port 0 --threads $threads 2>"$out/serve.log" &
  local pid=$!
  local port=""
  for _ in $(seq 1 200); do
    port=$(sed -nE 's#.*listening on http://127.0.0.1:([0-9]+)/.*#\1#p' "$out/serve.log")
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || { echo "behaviour_freeze: $bin/nmtzoo-serve did not start"; cat "$out/serve.log"; kill $pid; return 1; }
  "$python" - "$port" "$work/inputs/test100.de" >"$out/serve.answers" <<'EOF'
import json, sys, urllib.request
port, path = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8").read().splitlines()[:20]
def post(endpoint, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{endpoint}", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return answer.read().decode()
for line in lines[:5]:
    print("translate", post("/translate", {"q": line, "source": "de", "target": "en"}))
print("translate", post("/translate", {"q": lines, "source": "auto", "target": "en", "alternatives": 2}))
v1 = json.loads(post("/v1/translate", {"text": lines, "beam": 4, "nbest": 3, "return_tokens": True}))
for t in v1["translations"]:
    print("v1", json.dumps([[h["text"], h["score"], h["log_prob"], h["tokens"]] for h in t["nbest"]]))
EOF
  kill $pid
  wait $pid || true
}

# run BIN OUT: trains each arch, translates, scores and serves with its checkpoints.
run() {
  local bin="$1" out="$2"
  mkdir -p "$out"
  for arch in "${archs[@]}"; do
    local run_dir="$out/$arch"
    rm -rf "$run_dir"
    "$bin/nmtzoo-train" --config "$(config_of "$arch")" \
      --set data.dir="$data" --set tokenizer.prefix="$work/spm" \
      --set training.output_dir="$run_dir" --set training.max_steps=$steps \
      --set training.log_every=1 --set training.valid_every=0 --set training.valid_bleu=false \
      --set training.best_metric=loss --set training.threads=$threads --set training.seed=7 \
      --set training.max_time=0 >"$out/$arch.train.log" 2>&1
    # type, step and loss of every train record, as written (17 significant digits).
    grep '"type":"train"' "$run_dir/metrics.jsonl" |
      sed -E 's/.*"loss":([^,}]*).*"step":([0-9]+).*/\2 \1/' >"$out/$arch.losses"
    translate "$bin" "$out/$arch" "$run_dir/checkpoints/checkpoint_last.pt"
  done
  translate "$bin" "$out/mixed" "$out/transformer/checkpoints/checkpoint_last.pt" \
    "$out/rnn/checkpoints/checkpoint_last.pt"
  evaluate "$bin" "$out"
  serve "$bin" "$out" "$out/transformer/checkpoints/checkpoint_last.pt"
}

make_inputs
if [[ ! -f "$work/before/done" ]]; then
  echo "behaviour_freeze: running BEFORE ($before_bin)"
  run "$before_bin" "$work/before"
  touch "$work/before/done"
fi
echo "behaviour_freeze: running AFTER ($after_bin)"
run "$after_bin" "$work/after"
# AFTER decoding BEFORE's checkpoints in every mode: the decoding is compared on the same weights
# even when a change of training (a fused kernel) makes AFTER's own checkpoints differ.
for arch in "${archs[@]}"; do
  translate "$after_bin" "$work/after/$arch.old_checkpoint" "$work/before/$arch/checkpoints/checkpoint_last.pt"
done
translate "$after_bin" "$work/after/mixed.old_checkpoint" "$work/before/transformer/checkpoints/checkpoint_last.pt" \
  "$work/before/rnn/checkpoints/checkpoint_last.pt"

status=0
compare() {
  local what="$1" a="$2" b="$3"
  if cmp -s "$a" "$b"; then
    echo "identical  $what ($(wc -l <"$a") lines)"
  else
    echo "DIFFERENT  $what"
    diff "$a" "$b" | head -10 || true
    status=1
  fi
}
for arch in "${archs[@]}"; do
  [[ $(wc -l <"$work/before/$arch.losses") -eq $steps ]] || { echo "missing losses for $arch"; status=1; }
  compare "$arch: training losses of $steps updates" "$work/before/$arch.losses" "$work/after/$arch.losses"
  for mode in "${modes[@]}"; do
    compare "$arch: test_2016_flickr $mode" "$work/before/$arch.$mode" "$work/after/$arch.$mode"
  done
  for mode in "${modes[@]}"; do
    compare "$arch: test_2016_flickr $mode, BEFORE's checkpoint decoded by AFTER" \
      "$work/before/$arch.$mode" "$work/after/$arch.old_checkpoint.$mode"
  done
done
compare "transformer + rnn ensemble: test_2016_flickr beam 5, 2-best jsonl" \
  "$work/before/mixed.ensemble" "$work/after/mixed.ensemble"
compare "transformer + rnn ensemble, BEFORE's checkpoints decoded by AFTER" \
  "$work/before/mixed.ensemble" "$work/after/mixed.old_checkpoint.ensemble"
compare "nmtzoo-evaluate: BLEU, chrF, TER and paired bootstrap (text)" \
  "$work/before/evaluate.txt" "$work/after/evaluate.txt"
compare "nmtzoo-evaluate: BLEU, chrF, TER with confidence intervals (JSON)" \
  "$work/before/evaluate.json" "$work/after/evaluate.json"
compare "nmtzoo-serve: /translate bodies and /v1/translate hypotheses" \
  "$work/before/serve.answers" "$work/after/serve.answers"
exit $status
