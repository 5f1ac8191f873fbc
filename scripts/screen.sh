#!/usr/bin/env bash
# Recipe screening on val only (never a test set): one training run of a fixed budget per call,
# scored by its best validation BLEU (decoded as training validates), one row appended to
# reports/tuning/screening.md with the overrides, so the tuning log is the commands' own output.
#   scripts/screen.sh NAME CONFIG [KEY=VALUE ...]     (budget: SCREEN_TIME, default 15m)
# Trains runs/screen/NAME (resumed when interrupted); a finished run is not retrained and its row
# is not written twice. Run one at a time: the budget is wall-clock time of this machine.
# SCREEN_BIN=DIR trains with the nmtzoo-train already built in DIR instead of building the tree
# (a queue of screens keeps one binary while the source changes under it).
# SCREEN_DECODE=1 also keeps what compare.sh would keep of the run, in reports/tuning/screens/NAME:
# the checkpoint and length penalty chosen on val (scripts/tune_decoding.sh), the test sets
# translated with them but not scored, the metrics, the resolved config and, last, the training
# summary. A screen whose run is lost with its machine can still become a model's seed
# (scripts/adopt_screen.sh); its test outputs are scored only then, by compare.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(($# >= 2)) || { sed -n '2,14p' "$0" >&2; exit 2; }
name="$1"
config="$2"
shift 2
budget="${SCREEN_TIME:-15m}"
[[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "screen.sh: NAME '$name' may hold only letters, digits, _ . -" >&2; exit 2; }
[[ -f "$root/$config" || -f "$config" ]] || { echo "screen.sh: no config '$config'" >&2; exit 2; }
source "$root/scripts/data-dir.sh"
bin="${SCREEN_BIN:-}"
if [[ -z "$bin" ]]; then
  "$root/scripts/build.sh" >/dev/null
  bin="$root/build/bin"
fi
cd "$root"
run="runs/screen/$name"
# compare.sh's plumbing: a screened run may become a model's seed 1 (scripts/adopt_screen.sh).
source scripts/model_run.sh
mapfile -t sets < <(run_plumbing "$run")
sets+=(--set "training.max_time=$budget")
for override in "$@"; do sets+=(--set "$override"); done
[[ -f "$run/training_summary.json" ]] || echo "== screening $name ($config ${*:-}), log in $run.log" >&2
train_run "$run" 0 "$config" "${sets[@]}"
if [[ "${SCREEN_DECODE:-0}" == 1 ]]; then
  kept="reports/tuning/screens/$name"
  if [[ ! -f "$kept/training_summary.json" ]]; then
    # decode_run's settings, as compare.sh's start_experiment sets them for the run's language pair
    src="$(sed -n 's/^  src_lang: "\{0,1\}\([^ "]*\).*/\1/p' "$run/config.yaml")"
    tgt="$(sed -n 's/^  tgt_lang: "\{0,1\}\([^ "]*\).*/\1/p' "$run/config.yaml")"
    tests=(test_2016_flickr test_2017_flickr test_2017_mscoco)
    report="$kept"
    mkdir -p "$kept"
    gzip -dc "data/multi30k/test_2016_flickr.$src.gz" | sed -n 1,3p > "$kept/attention_sources.txt"
    decode_run "$run" "$kept" 1
    cp "$run/config.yaml" "$kept/config.yaml"
    cp "$run/training_summary.json" "$kept/training_summary.json"
  fi
fi
log=reports/tuning/screening.md
mkdir -p reports/tuning
if [[ ! -f "$log" ]]; then
  {
    echo "# Recipe screening on Multi30k val (scripts/screen.sh)"
    echo
    echo "Each row is one run of the stated budget on this machine, scored by its best validation BLEU"
    echo "(greedy, as training validates). Test sets are never scored here."
    echo
    echo "| run | config | overrides | budget | best val BLEU | at update | updates | epochs | target tok/s | date |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
  } > "$log"
fi
grep -q "^| $name |" "$log" && { grep "^| $name |" "$log"; exit 0; }
row=$(/usr/bin/env python3 - "$run/training_summary.json" "$name" "$config" "$budget" "$*" <<'PY'
import datetime, json, sys
path, name, config, budget, overrides = sys.argv[1:]
s = json.load(open(path))
print(f"| {name} | {config} | {overrides or '(none)'} | {budget} | {s['best_score']:.2f} | {s['best_step']} | "
      f"{s['updates']} | {s['epochs']} | {s['target_tokens_per_second']:.0f} | {datetime.date.today()} |")
PY
)
# The row goes after the table's last row, above the Decisions written below it; the log is
# replaced atomically.
/usr/bin/env python3 - "$log" "$row" <<'PY'
import os, sys
path, row = sys.argv[1:]
lines = open(path).read().splitlines()
last = max(i for i, line in enumerate(lines) if line.startswith("|"))
first_heading = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
if last > first_heading:  # rows appended below the Decisions by an earlier version
    last = max(i for i, line in enumerate(lines[:first_heading]) if line.startswith("|"))
lines.insert(last + 1, row)
with open(path + ".tmp", "w") as out:
    out.write("\n".join(lines) + "\n")
os.replace(path + ".tmp", path)
PY
echo "$row"
