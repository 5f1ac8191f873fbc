#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measures how preparation and training scale with the corpus (the "Large corpora" figures of
# docs/performance.md): synthetic corpora of 100k, 1M and 5M pairs made from Multi30k
# (make_synthetic_corpus.py, under runs/scale/, never committed), then for each size:
# preparation time, pairs/s, size on disk and peak RSS; training's time from process start to the
# first update, peak RSS and target tokens/s over 30 updates (transformer_small, 4,096-token
# batches, 2 threads). Then preparation on 1 core against 2 (A B A B, at 1M), training tokens/s
# at 5M against Multi30k's 29k (A B A B; and against the pre-dataset in-memory binary when
# OLD_TRAIN=path/to/old/nmtzoo-train is set), and two single-threaded ranks at 1M.
#   experiments/measure/large_corpora.sh [SIZES...]        (default: 100000 1000000 5000000)
# Writes reports/scale/scale.md and the logs beside it. Resumable: corpora are reused.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
prepare_workspace
bin=build/bin
py=/usr/bin/python3
sizes=("${args[@]}")
((${#sizes[@]})) || sizes=(100000 1000000 5000000)
work=runs/scale
out=reports/scale
mkdir -p "$work" "$out"
report="$out/scale.md.partial"
log="$out/measure.log"
: > "$log"

config_for() {  # N RUN_NAME [extra yaml lines] -> config path
  local n="$1" name="$2" path="$work/$2.yaml"
  cat > "$path" <<YAML
data: {dir: $work/corpus-$n, src_lang: de, tgt_lang: en, test: [], bin_dir: $work/bin-$n}
tokenizer: {vocab_size: 8000, prefix: $work/spm}
model: {arch: transformer_small}
training: {output_dir: $work/$name, max_steps: ${STEPS:-30}, max_tokens: 4096, valid_every: 0,
           valid_bleu: false, best_metric: loss, log_every: 10, threads: 2}
YAML
  echo "$path"
}
json() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
drop_caches() { sync; if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then echo dropped; else echo "not dropped"; fi; }

prepare() {  # CONFIG [prepare args...] -> "seconds pairs_per_s peak_rss_mb"
  local config="$1"; shift
  local text
  text="$(${PIN:-} "$bin/nmtzoo-prepare" "$config" --force -q "$@" 2>&1)"
  echo "$text" >> "$log"
  local seconds rate rss
  seconds="$(sed -nE 's/^prepared in ([0-9.]+) s.*/\1/p' <<< "$text")"
  rate="$(sed -nE 's/^prepared in .*\(([0-9]+) pairs\/s\).*/\1/p' <<< "$text")"
  rss="$(sed -nE 's/^prepared in .*peak RSS ([0-9]+) MB$/\1/p' <<< "$text")"
  echo "$seconds $rate $rss"
}

train() {  # CONFIG [train args...] -> "first_update_s setup_rss_mb peak_rss_mb tokens_per_s"
  local config="$1"; shift
  local run; run="$(sed -nE 's/.*output_dir: ([^,]+),.*/\1/p' "$config")"
  rm -rf "$run"
  local timer=(); [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f "time: peak RSS %M kB")
  "${timer[@]}" "${TRAIN:-$bin/nmtzoo-train}" --config "$config" "$@" > "$work/train.err" 2>&1
  cat "$work/train.err" >> "$log"
  local peak; peak="$(sed -nE 's/^time: peak RSS ([0-9]+) kB$/\1/p' "$work/train.err")"
  printf '%.1f %.0f %.0f %.0f\n' "$(json "$run/training_summary.json" first_update_seconds 2>/dev/null || echo -1)" \
    "$(json "$run/training_summary.json" setup_rss_mb 2>/dev/null || echo -1)" \
    "$((${peak:--1024} / 1024))" "$(json "$run/training_summary.json" target_tokens_per_second)"
}

{
  echo "# Scale measurements"
  echo
  echo "Measured by \`experiments/measure/large_corpora.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores," \
       "$(sed -nE 's/^model name\s*: //p' /proc/cpuinfo | head -1), commit $(git rev-parse --short HEAD)."
  echo "Synthetic corpora of Multi30k pairs (a third of them joined with a second pair; mean 19.7"
  echo "source tokens). transformer_small, 4,096-token batches, 2 threads, ${STEPS:-30} updates. RSS is the"
  echo "peak resident set (VmHWM, from /usr/bin/time or the process itself): the page cache is not"
  echo "counted, pages of the mapped dataset the process touched are. Preparation's RSS is its own,"
  echo "before nmtzoo-prepare computes its statistics."
  echo
} > "$report"

for n in "${sizes[@]}"; do
  [[ -f "$work/corpus-$n/train.en" ]] || "$py" experiments/measure/make_synthetic_corpus.py "$n" "$work/corpus-$n"
done
# The tokenizer, once (trained on the smallest corpus's bounded sample), shared by every size.
"$bin/nmtzoo-prepare" "$(config_for "${sizes[0]}" "prep-${sizes[0]}")" -q >> "$log" 2>&1

{
  echo "## Per corpus size"
  echo
  echo "| pairs | input text | prepare s | pairs/s | dataset on disk | prepare RSS MB | first update s | RSS before it MB | train peak RSS MB | train tok/s |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >> "$report"
for n in "${sizes[@]}"; do
  config="$(config_for "$n" "run-$n")"
  caches="$(drop_caches)"
  read -r p_seconds p_rate p_rss <<< "$(prepare "$config")"
  disk="$(du -sb "$work/bin-$n" | cut -f1)"
  text="$(cat "$work/corpus-$n"/train.de "$work/corpus-$n"/train.en | wc -c)"
  caches="$caches, $(drop_caches)"
  read -r t_first t_setup t_rss t_rate <<< "$(train "$config")"
  printf '| %s | %.0f MB | %s | %s | %.0f MB | %s | %s | %s | %s | %s |\n' "$n" "$((text / 1000000))" \
    "$p_seconds" "$p_rate" "$((disk / 1000000))" "$p_rss" "$t_first" "$t_setup" "$t_rss" "$t_rate" >> "$report"
  echo "size $n done (page cache: $caches)" >&2
done
echo >> "$report"
echo "Page cache before each preparation and training: $(drop_caches) (root can drop it; otherwise it is warm)." >> "$report"

mid=1000000; [[ " ${sizes[*]} " == *" $mid "* ]] || mid="${sizes[0]}"
config="$(config_for "$mid" "prep-scaling")"
{
  echo
  echo "## Preparation on 1 core and on 2 ($mid pairs, A B A B)"
  echo
  echo "| run | cores | seconds | pairs/s |"
  echo "|---|---:|---:|---:|"
} >> "$report"
for round in 1 2; do
  read -r s1 r1 _ <<< "$(PIN="taskset -c 0" prepare "$config" --threads 1)"
  echo "| A$round | 1 (taskset -c 0, --threads 1) | $s1 | $r1 |" >> "$report"
  read -r s2 r2 _ <<< "$(prepare "$config" --threads 2)"
  echo "| B$round | 2 (--threads 2) | $s2 | $r2 |" >> "$report"
done

# Training throughput: the mapped dataset at the largest size against Multi30k (29k pairs).
large="${sizes[-1]}"
small_config="$work/multi30k.yaml"
sed -E "s#dir: $work/corpus-$large#dir: data/multi30k#; s#bin_dir: $work/bin-$large#bin_dir: $work/bin-multi30k#; s#output_dir: [^,]+#output_dir: $work/run-multi30k#" \
  "$(config_for "$large" "run-large")" > "$small_config"
large_config="$work/run-large.yaml"
{
  echo
  echo "## Training throughput: $large pairs against Multi30k's 29,000 (A B A B, ${STEPS:-30} updates each)"
  echo
  echo "| run | corpus | data path | target tokens/s | peak RSS MB |"
  echo "|---|---|---|---:|---:|"
} >> "$report"
"$bin/nmtzoo-prepare" "$small_config" -q >> "$log" 2>&1
for round in 1 2; do
  read -r _ _ rss rate <<< "$(train "$small_config")"
  echo "| A$round | Multi30k, 29,000 | mapped dataset | $rate | $rss |" >> "$report"
  read -r _ _ rss rate <<< "$(train "$large_config")"
  echo "| B$round | synthetic, $large | mapped dataset | $rate | $rss |" >> "$report"
  if [[ -n "${OLD_TRAIN:-}" ]]; then
    sed -E 's#, bin_dir: [^}]*##; s#output_dir: [^,]+#output_dir: '"$work"'/run-multi30k-old#' "$small_config" > "$work/multi30k-old.yaml"
    read -r _ _ rss rate <<< "$(TRAIN="$OLD_TRAIN" train "$work/multi30k-old.yaml")"
    echo "| C$round | Multi30k, 29,000 | in memory (the binary from before the dataset) | $rate | $rss |" >> "$report"
  fi
done

# Two single-threaded ranks on this machine: each maps the dataset and reads only its batches.
two="$(config_for "$mid" "run-2ranks")"
rm -rf "$work/run-2ranks"
NMTZOO_LOG_DIR="$work" NMTZOO_THREADS_PER_RANK=1 MASTER_PORT=29611 \
  scripts/launch.sh 2 "$bin/nmtzoo-train" --config "$two" > "$work/rank0.log" 2>&1
{
  echo
  echo "## Two ranks at $mid pairs (1 thread each, c10d on loopback)"
  echo
  for r in 0 1; do
    echo "- rank $r: $(grep -oE 'peak RSS [0-9]+ MB' "$work/rank$r.log" | tail -1)"
  done
  echo "- together: $(json "$work/run-2ranks/training_summary.json" target_tokens_per_second | cut -d. -f1) target tokens/s over ${STEPS:-30} updates"
} >> "$report"
mv "$report" "$out/scale.md"
cat "$out/scale.md"
