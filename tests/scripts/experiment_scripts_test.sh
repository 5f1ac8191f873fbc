#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The experiment scripts' plumbing (experiments/compare.sh, lib/model_run.sh, distill.sh,
# try_recipe.sh, promote_recipe.sh, tune_decoding.sh) in a scratch copy of the project whose build/bin holds stand-ins for the apps: each records its
# arguments and writes what the real one would (checkpoints, one hypothesis per input line,
# scores, speed). What is checked is what the scripts decide: the order of the runs, seeds,
# resume, the length penalty chosen on val reaching the test sets, kept folders, a changed recipe
# stopping the script, the distilled corpus and the student's data override.
# Experiment plans (run_plan.sh) run with the real nmtzoo-plan, which checks the plan and writes
# the grid's report from the stand-ins' outputs.
#   tests/scripts/experiment_scripts_test.sh PROJECT_ROOT NMTZOO_PLAN
set -euo pipefail
project="$(cd "${1:-$(dirname "$0")/../..}" && pwd)"
nmtzoo_plan="${2:-$project/build/bin/nmtzoo-plan}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0
check() {  # DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what" >&2; failures=$((failures + 1)); fi
}

mkdir -p "$scratch"/{scripts,experiments,build/bin,configs,data/multi30k}
cp -r "$project"/experiments/{lib,compare.sh,run_plan.sh,distill.sh,tune_decoding.sh,promote_recipe.sh,try_recipe.sh} "$scratch/experiments/"
cp "$project"/configs/multi30k_de_en_{transformer,rnn}.yaml "$scratch/configs/"
printf '#!/usr/bin/env bash\n' > "$scratch/scripts/build.sh"
printf ': # Multi30k stand-in: made below\n' > "$scratch/scripts/data-dir.sh"
chmod +x "$scratch"/scripts/*.sh "$scratch"/experiments/*.sh
for split in train val test_2016_flickr test_2017_flickr test_2017_mscoco; do
  for lang in de en fr; do seq 1 5 | sed "s/^/$split $lang /" | gzip > "$scratch/data/multi30k/$split.$lang.gz"; done
done

calls="$scratch/calls.log"
cat > "$scratch/build/bin/nmtzoo-train" <<EOF
#!/usr/bin/env bash
echo "train \$*" >> "$calls"
out=""; prev=""
for arg in "\$@"; do
  [[ "\$prev" == --set && "\$arg" == training.output_dir=* ]] && out="\${arg#*=}"
  prev="\$arg"
done
mkdir -p "\$out/checkpoints"
touch "\$out/checkpoints/checkpoint_last.pt" "\$out/checkpoints/checkpoint_best.pt"
config=""; sets=(); prev=""
for arg in "\$@"; do  # the resolved config, as the real one writes it
  if [[ "\$prev" == --config ]]; then config="\$arg"; elif [[ "\$arg" != --config && "\$arg" != --resume ]]; then sets+=("\$arg"); fi
  prev="\$arg"
done
"\$(dirname "\$0")/nmtzoo-config" "\$config" "\${sets[@]}" > "\$out/config.yaml"
[[ " \$* " == *" training.keep_best=5 "* ]] && echo '{"metric": "bleu"}' > "\$out/checkpoints/scores.json"
echo '{"step": 1}' > "\$out/metrics.jsonl"
[[ -n "\${STUB_FAILED:-}" ]] && exit 3
[[ -n "\${STUB_INTERRUPTED:-}" ]] && exit 0  # as a signal leaves a run: checkpoints, no summary
echo '{"parameters": 7600000, "updates": 1234, "best_score": 40.5, "best_step": 1000, "epochs": 7,
  "target_tokens_per_second": 5000.0}' > "\$out/training_summary.json"
EOF
cat > "$scratch/build/bin/nmtzoo-average" <<EOF
#!/usr/bin/env bash
echo "average \$*" >> "$calls"
touch "\${@: -1}"
EOF
# Hypotheses carry the decoding settings, so the evaluate stand-in can prefer one of them.
cat > "$scratch/build/bin/nmtzoo-translate" <<EOF
#!/usr/bin/env bash
echo "translate \$*" >> "$calls"
if [[ -n "\${STUB_STOP_AT:-}" ]]; then  # the STUB_STOP_AT-th call fails, as a stopped one would
  count=\$((\$(cat "$scratch/translate_count" 2>/dev/null || echo 0) + 1))
  echo "\$count" > "$scratch/translate_count"
  ((count < STUB_STOP_AT)) || exit 1
fi
input=""; output=""; stats=""; prev=""; svg=""
for arg in "\$@"; do
  case "\$prev" in -i) input="\$arg" ;; -o) output="\$arg" ;; --stats) stats="\$arg" ;; --attention-svg) svg="\$arg" ;; esac
  prev="\$arg"
done
[[ -n "\$svg" ]] && { mkdir -p "\$svg"; touch "\$svg/attention_0001.svg"; }
settings="\$(echo "\$*" | grep -oE -- '(-c [^ ]+ )+|--length-penalty [a-z]+ --alpha [0-9.]+( --weights [0-9.,]+ --ensemble-mode [a-z]+)?' | tr '\\n' ' ' || true)"
if [[ -n "\$output" ]]; then
  { if [[ "\$input" == *.gz ]]; then gzip -dc "\$input"; else cat "\$input"; fi } |
    sed "s%^%\$settings| %" > "\$output"
  [[ -n "\${DROP_A_LINE:-}" ]] && sed -i '\$d' "\$output"
fi
[[ -n "\$stats" ]] && echo '{"sentences": 5, "seconds": 2.5, "sentences_per_second": 2.0, "threads": 2}' > "\$stats"
exit 0
EOF
cat > "$scratch/build/bin/nmtzoo-evaluate" <<EOF
#!/usr/bin/env bash
echo "evaluate \$*" >> "$calls"
hyp=""; prev=""
for arg in "\$@"; do [[ "\$prev" == -i ]] && hyp="\$arg"; prev="\$arg"; done
if [[ " \$* " == *" --json "* ]]; then
  echo '[{"name": "BLEU", "score": 40.1}, {"name": "chrF2", "score": 60.2}, {"name": "TER", "score": 41.3}]'
elif [[ -n "\${ALPHA_PEAK:-}" ]]; then  # BLEU falls with the distance of alpha from the peak
  alpha="\$(grep -oE -- '--alpha [0-9.]+' "\$hyp" | head -1 | cut -d' ' -f2)"
  awk -v alpha="\${alpha:-0}" -v peak="\$ALPHA_PEAK" 'BEGIN { d = alpha - peak; printf "%.2f\n", 40 - (d < 0 ? -d : d) }'
elif [[ " \$* " == *" -b "* ]]; then
  # alpha 1.4 wins; with it, the best checkpoint of a Transformer, the average of the last
  # checkpoints of the RNN's seed 1, the average of the best ones of its seed 2, and for an
  # ensemble the first member weighted 0.6 in logprob mode.
  if ! grep -q -- '--length-penalty avg --alpha 1.4' "\$hyp"; then echo 30.0
  elif grep -q -- '--weights' "\$hyp" && ! grep -q -- '--weights 0.6,0.4 --ensemble-mode logprob' "\$hyp"; then echo 44.0
  elif grep -qE 'transformer[^ ]*/checkpoints/checkpoint_best.pt|rnn/averaged.pt|rnn_seed2/best_averaged.pt' "\$hyp"; then echo 45.0
  else echo 35.0; fi
else
  echo "BLEU = 40.1"
fi
EOF
# The resolved config: the file without its comments, then the overrides, one a line, but for
# those setting a key to the value the file has.
cat > "$scratch/build/bin/nmtzoo-config" <<EOF
#!/usr/bin/env bash
resolved="\$(sed -e 's/ *#.*//' -e '/^\$/d' "\$1")"; shift
echo "\$resolved"
while ((\$#)); do
  if [[ "\$1" == --set ]]; then
    key="\${2%%=*}"
    grep -qx " *\${key##*.}: \${2#*=}" <<< "\$resolved" || printf '%s\\n' "\$1" "\$2"
    shift 2
  else
    echo "\$1"; shift
  fi
done
EOF
cat > "$scratch/build/bin/nmtzoo-report" <<EOF
#!/usr/bin/env bash
echo "report \$*" >> "$calls"
echo "# report" > reports/multi30k_de_en/results.md
EOF
chmod +x "$scratch"/build/bin/*
ln -s "$(realpath "$nmtzoo_plan")" "$scratch/build/bin/nmtzoo-plan"
cd "$scratch"

# distill.sh before its teachers exist: a clear error, nothing made.
if experiments/distill.sh > distill_early.out 2>&1; then
  check "distill.sh without teachers fails" false
else
  check "distill.sh without teachers names what to run first" grep -q "experiments/compare.sh" distill_early.out
fi

experiments/compare.sh --models "transformer rnn" --seeds 2 --ensemble "transformer rnn" > compare.out 2>&1 ||
  { cat compare.out >&2; echo "FAILED: compare.sh" >&2; exit 1; }
trained() { grep '^train ' "$calls" | grep -oE 'output_dir=runs/[^ ]+' | sed 's#output_dir=runs/multi30k_de_en_##' | tr '\n' ' '; }
check "seed by seed, every model's seed 1 first" \
  test "$(trained)" == "transformer rnn transformer_seed2 rnn_seed2 "
check "seed 1 keeps the config's seed, seed 2 sets it" \
  test "$(grep -c 'training.seed=2' "$calls")" -eq 2 -a "$(grep -c 'training.seed=1' "$calls")" -eq 0
for folder in transformer rnn transformer_seed2 rnn_seed2 ensemble_transformer+rnn; do
  for test in test_2016_flickr test_2017_flickr test_2017_mscoco; do
    check "$folder $test: one hypothesis per source line" test "$(wc -l < "reports/multi30k_de_en/$folder/$test.hyp")" -eq 5
    check "$folder $test: decoded with the penalty chosen on val" \
      grep -q -- '--length-penalty avg --alpha 1.4' "reports/multi30k_de_en/$folder/$test.hyp"
    check "$folder $test: scored" test -s "reports/multi30k_de_en/$folder/$test.scores.json"
  done
done
for folder in transformer transformer_seed2; do
  check "$folder: its best checkpoint, chosen on val, decodes the test sets" \
    grep -q "^-c runs/multi30k_de_en_$folder/checkpoints/checkpoint_best.pt " "reports/multi30k_de_en/$folder/test_2016_flickr.hyp"
done
check "rnn: its averaged checkpoint, chosen on val, decodes the test sets" \
  grep -q "^-c runs/multi30k_de_en_rnn/averaged.pt " "reports/multi30k_de_en/rnn/test_2016_flickr.hyp"
check "rnn_seed2: its average of the best checkpoints, chosen on val, decodes the test sets" \
  grep -q "^-c runs/multi30k_de_en_rnn_seed2/best_averaged.pt " "reports/multi30k_de_en/rnn_seed2/test_2016_flickr.hyp"
check "every run keeps its 5 best checkpoints, and they are averaged" \
  test "$(grep -c '^train .*--set training.keep_best=5' "$calls")" -eq 4 -a \
  "$(grep -c '^average --dir runs/multi30k_de_en_[a-z_0-9]*/checkpoints --best 5 -o runs/multi30k_de_en_[a-z_0-9]*/best_averaged.pt$' "$calls")" -eq 4
check "the report names the checkpoint each model was decoded with" \
  grep -qF -- '- transformer_seed2: `runs/multi30k_de_en_transformer_seed2/checkpoints/checkpoint_best.pt`' \
  reports/multi30k_de_en/results.md
check "the ensemble's members are the seed-1 checkpoints chosen on val" grep -q \
  "^-c runs/multi30k_de_en_transformer/checkpoints/checkpoint_best.pt -c runs/multi30k_de_en_rnn/averaged.pt " \
  reports/multi30k_de_en/ensemble_transformer+rnn/test_2016_flickr.hyp
check "seed 1 draws attention, seed 2 does not" \
  test -d reports/multi30k_de_en/transformer/attention -a ! -d reports/multi30k_de_en/transformer_seed2/attention
check "results keep the config they were made with" \
  cmp -s reports/multi30k_de_en/rnn/compare_config.yaml configs/multi30k_de_en_rnn.yaml
check "the ensemble is tested against its first member" \
  grep -q 'Ensemble of the seed-1 models: transformer + rnn' reports/multi30k_de_en/results.md
ensemble_tuning=reports/multi30k_de_en/ensemble_transformer+rnn/val_tuning.tsv
check "the ensemble's val search: 5 penalties, 9 more weights and modes, 4 more penalties" \
  test "$(tail -n +2 "$ensemble_tuning" | wc -l)" -eq 18 -a "$(head -1 "$ensemble_tuning" | cut -f7-)" == "$(printf 'weights\tmode')"
check "the ensemble's weights and mode chosen on val decode the test sets" \
  grep -q -- '--alpha 1.4 --weights 0.6,0.4 --ensemble-mode logprob' \
  reports/multi30k_de_en/ensemble_transformer+rnn/test_2016_flickr.hyp
ALPHA_PEAK=2.6 experiments/tune_decoding.sh runs/multi30k_de_en_transformer de en alpha_search.tsv > alpha_search.out
check "an alpha beyond the grid's 1.8 is chosen when val prefers it" test "$(cut -d' ' -f1,2 alpha_search.out)" == "avg 2.6"
check "alphas grow by 0.4 past 1.8 until one is worse" \
  test "$(awk -F'\t' '$1 == "averaged" && $3 == "avg" && $4 > 1.8 { print $4 }' alpha_search.tsv | tr '\n' ' ')" == "2.2 2.6 3.0 "

# A tuning stopped midway (its 5th decoding fails) resumes: what it decodes again, and its result.
val_decodings() { grep -c '^translate .* -i data/multi30k/val.de.gz' "$calls"; }
stop_tuning() {  # OUT.tsv: the tuning stopped at its 5th decoding
  rm -f "$scratch/translate_count"
  ! ALPHA_PEAK=2.6 STUB_STOP_AT=5 experiments/tune_decoding.sh runs/multi30k_de_en_transformer de en "$1" > /dev/null 2>&1
}
check "a stopped tuning fails" stop_tuning stopped.tsv
check "a stopped tuning writes no OUT.tsv, and its 4 rows to OUT.tsv.partial" \
  test ! -e stopped.tsv -a "$(tail -n +2 stopped.tsv.partial | wc -l)" -eq 4
printf 'averaged\t5\tavg' >> stopped.tsv.partial  # a row cut short by the stop
before="$(val_decodings)"
ALPHA_PEAK=2.6 experiments/tune_decoding.sh runs/multi30k_de_en_transformer de en stopped.tsv > resumed.out 2> resumed.err
check "the resumed tuning decodes only the settings without a whole row" \
  test "$(($(val_decodings) - before))" -eq "$(($(wc -l < alpha_search.tsv) - 1 - 4))"
check "the resumed tuning says so" grep -q "resuming stopped.tsv.partial: 4 settings decoded before" resumed.err
check "the resumed tuning's rows are an uninterrupted one's, in its order" cmp -s stopped.tsv alpha_search.tsv
check "the resumed tuning's choice is an uninterrupted one's" cmp -s resumed.out alpha_search.out
check "a finished tuning leaves no partial files" test ! -e stopped.tsv.partial -a ! -e stopped.tsv.partial.inputs
stop_tuning changed.tsv
touch runs/multi30k_de_en_transformer/averaged.pt  # as averaged again
before="$(val_decodings)"
ALPHA_PEAK=2.6 experiments/tune_decoding.sh runs/multi30k_de_en_transformer de en changed.tsv > /dev/null 2>&1
check "a stopped tuning whose checkpoints changed starts over" \
  test "$(($(val_decodings) - before))" -eq "$(($(wc -l < alpha_search.tsv) - 1))"
# ... which a stopped decoding's next run can resume only if it does not average them again.
averagings() { grep -c '^average ' "$calls"; }
average_last() {
  (bin=build/bin && source experiments/lib/model_run.sh && average_checkpoints runs/multi30k_de_en_transformer --last 5 averaged.pt)
}
before="$(averagings)"
average_last
check "an average newer than the checkpoints is not made again" test "$(averagings)" -eq "$before"
touch runs/multi30k_de_en_transformer/checkpoints/checkpoint_last.pt
average_last
check "an average older than a checkpoint is made again" test "$(averagings)" -eq "$((before + 1))"
check "the report says how the ensemble combines its members" \
  grep -q 'next-token log-probabilities summed with weights 0.6,0.4, beam 5' reports/multi30k_de_en/results.md

: > "$calls"
experiments/compare.sh --models "transformer rnn" --seeds 2 > compare_again.out 2>&1
check "complete folders are kept, not retrained" test -z "$(trained)"

# A fresh clone has the committed folders but no runs: the report is rebuilt from them.
ensemble_test_decodes() { grep -c '^translate -c [^ ]* -c [^ ]* -i data/multi30k/test_' "$calls" || true; }
mv runs runs_aside
: > "$calls"
experiments/compare.sh --models "transformer rnn" --seeds 2 --ensemble "transformer rnn" > compare_no_runs.out 2>&1 ||
  { cat compare_no_runs.out >&2; check "compare.sh rebuilds the report from complete folders without runs" false; }
check "a complete ensemble is kept: nothing trained or decoded" test -z "$(trained)" -a "$(grep -c '^translate' "$calls")" -eq 0
check "a kept ensemble's decoding chosen on val is still reported" \
  grep -q 'next-token log-probabilities summed with weights 0.6,0.4, beam 5, length penalty avg (alpha 1.4)' \
  reports/multi30k_de_en/results.md
mv runs_aside runs
echo '{"parameters": 7600000, "updates": 999}' > reports/multi30k_de_en/rnn/training_summary.json
: > "$calls"
experiments/compare.sh --models "transformer rnn" --seeds 2 --ensemble "transformer rnn" > compare_member.out 2>&1 ||
  { cat compare_member.out >&2; check "compare.sh redoes an ensemble whose member changed" false; }
check "an ensemble whose member was retrained is tuned and decoded again" test "$(ensemble_test_decodes)" -eq 3

rm -rf reports/multi30k_de_en/rnn_seed2 runs/multi30k_de_en_rnn_seed2/training_summary.json
: > "$calls"
experiments/compare.sh --models "transformer rnn" --seeds 2 > compare_resume.out 2>&1
check "an interrupted run is resumed" grep -q 'output_dir=runs/multi30k_de_en_rnn_seed2 .*--resume' "$calls"

rm -rf reports/multi30k_de_en/rnn_seed2 runs/multi30k_de_en_rnn_seed2/training_summary.json
if STUB_INTERRUPTED=1 experiments/compare.sh --models "transformer rnn" --seeds 2 > compare_interrupted.out 2>&1; then
  check "compare.sh fails when a training is interrupted" false
else
  check "an interrupted compare.sh says the same command resumes it" \
    grep -q 'runs/multi30k_de_en_rnn_seed2 was interrupted .*the same command resumes it' compare_interrupted.out
fi
if STUB_FAILED=1 experiments/compare.sh --models "transformer rnn" --seeds 2 > compare_failed.out 2>&1; then
  check "compare.sh fails when a training fails" false
else
  check "a failed training is reported with its exit status" \
    grep -q 'training runs/multi30k_de_en_rnn_seed2 failed (exit 3)' compare_failed.out
fi
experiments/compare.sh --models "transformer rnn" --seeds 2 > compare_resumed.out 2>&1
check "the rerun finishes it" test -f reports/multi30k_de_en/rnn_seed2/training_summary.json

cp configs/multi30k_de_en_rnn.yaml configs/rnn_as_compared.yaml
sed -i -E 's/^(  dropout:) [0-9.]+/\1 0.45/' configs/multi30k_de_en_rnn.yaml
if experiments/compare.sh --models "transformer rnn" > compare_changed.out 2>&1; then
  check "a changed config stops compare.sh" false
else
  check "a changed config stops compare.sh, showing the change" grep -q 'dropout: 0.45' compare_changed.out
fi
cp configs/rnn_as_compared.yaml configs/multi30k_de_en_rnn.yaml

sed -i -E 's/^(  dropout: [0-9.]+).*/\1  # a comment edited after the runs/' configs/multi30k_de_en_rnn.yaml
: > "$calls"
if experiments/compare.sh --models "transformer rnn" > compare_commented.out 2>&1; then
  check "an edited comment is the same recipe: the folders are kept" test -z "$(trained)"
else
  cat compare_commented.out >&2
  check "an edited comment does not stop compare.sh" false
fi
mv configs/rnn_as_compared.yaml configs/multi30k_de_en_rnn.yaml

: > "$calls"
experiments/distill.sh > distill.out 2>&1 || { cat distill.out >&2; echo "FAILED: distill.sh" >&2; exit 1; }
distilled=data/multi30k_distilled_de_en
check "the ensemble translated the training source" \
  grep -q 'translate -c runs/multi30k_de_en_transformer/checkpoints/checkpoint_best.pt -c runs/multi30k_de_en_rnn/averaged.pt -i data/multi30k/train.de.gz' "$calls"
check "with the weights and mode chosen on val" \
  grep -q 'translate .* -i data/multi30k/train.de.gz .*--weights 0.6,0.4 --ensemble-mode logprob' "$calls"
check "distill.sh reuses the kept ensemble's choice instead of tuning it on val again" \
  test "$(grep -c '^translate -c [^ ]* -c [^ ]* -i data/multi30k/val' "$calls")" -eq 0
check "distillation.md names where that choice was made" \
  grep -qF '`ensemble_transformer+rnn/val_tuning.tsv`' reports/multi30k_de_en/distillation.md
check "distilled targets: one per training source" test "$(gzip -dc "$distilled/train.en.gz" | wc -l)" -eq 5
check "the student's source, val and test sets are the real ones" \
  test -L "$distilled/train.de.gz" -a -L "$distilled/val.en.gz" -a -L "$distilled/test_2016_flickr.en.gz"
check "the student trains on the distilled corpus" \
  grep -q "output_dir=runs/multi30k_de_en_transformer_distilled .*--set data.dir=$distilled" "$calls"
check "the student's recipe records the override" \
  grep -q "#   --set data.dir=$distilled" reports/multi30k_de_en/transformer_distilled/compare_config.yaml
check "distillation.md compares student, teacher architecture and ensemble" \
  test "$(grep -cE '^\| (transformer|transformer_distilled|ensemble_transformer\+rnn) \|' reports/multi30k_de_en/distillation.md)" -eq 3

rm -rf "$distilled" reports/multi30k_de_en/transformer_distilled runs/multi30k_de_en_transformer_distilled
if DROP_A_LINE=1 experiments/distill.sh > distill_short.out 2>&1; then
  check "a short distilled corpus stops distill.sh" false
else
  check "a short distilled corpus stops distill.sh, naming the file" grep -q 'has 4 lines for 5 sources' distill_short.out
  check "and leaves no distilled targets behind" test ! -e "$distilled/train.en.gz"
fi

# A tried recipe's run becomes a model's seed 1 only when it was trained with the config as it is.
tried_run() {  # NAME CONFIG_FILE [KEY=VALUE ...]: a finished run as try_recipe.sh leaves it
  local name="$1" config="$2"
  shift 2
  mkdir -p "runs/screen/$name/checkpoints"
  touch "runs/screen/$name/checkpoints/checkpoint_last.pt" "runs/screen/$name/checkpoints/checkpoint_best.pt"
  echo '{"updates": 99}' > "runs/screen/$name/training_summary.json"
  echo '{"step": 1}' > "runs/screen/$name/metrics.jsonl"
  echo "screen log" > "runs/screen/$name.log"
  local sets
  mapfile -t sets < <(source experiments/lib/model_run.sh && run_plumbing "runs/screen/$name")
  for override in "$@"; do sets+=(--set "$override"); done
  build/bin/nmtzoo-config "$config" "${sets[@]}" > "runs/screen/$name/config.yaml"
}
mv reports/multi30k_de_en/rnn reports/rnn_aside
mv runs/multi30k_de_en_rnn runs/rnn_aside
tried_run R_other configs/multi30k_de_en_rnn.yaml model.dropout=0.45
if experiments/promote_recipe.sh R_other rnn > adopt_other.out 2>&1; then
  check "a run of another recipe is not promoted" false
else
  check "a run of another recipe is refused, showing the difference" grep -q 'model.dropout=0.45' adopt_other.out
  check "and stays where it was" test -d runs/screen/R_other -a ! -e runs/multi30k_de_en_rnn
fi
sed -E 's/^(  dropout:) [0-9.]+/\1 0.45/' configs/multi30k_de_en_rnn.yaml > configs/screened.yaml
tried_run R_same configs/screened.yaml
# Written by another version of the apps: another text, the same recipe once resolved again.
echo "# a line an older nmtzoo-train wrote" >> runs/screen/R_same/config.yaml
cp configs/screened.yaml configs/multi30k_de_en_rnn.yaml
experiments/promote_recipe.sh R_same rnn > adopt.out 2>&1 || { cat adopt.out >&2; check "promote_recipe.sh promotes a run of the config" false; }
check "the promoted run is the model's run, with its log" \
  test -f runs/multi30k_de_en_rnn/training_summary.json -a -f runs/multi30k_de_en_rnn.log
check "the promoted run keeps the recipe compare.sh compares" \
  cmp -s runs/multi30k_de_en_rnn/compare_config.yaml configs/multi30k_de_en_rnn.yaml
check "the tried recipe's path links to the promoted run" test -L runs/screen/R_same -a -f runs/screen/R_same/training_summary.json
: > "$calls"
experiments/compare.sh --models rnn > compare_adopted.out 2>&1 || { cat compare_adopted.out >&2; check "compare.sh runs on a promoted run" false; }
check "compare.sh decodes the promoted run without training it" \
  test -z "$(trained)" -a -f reports/multi30k_de_en/rnn/test_2016_flickr.hyp
tried_run R_late configs/multi30k_de_en_rnn.yaml
if experiments/promote_recipe.sh R_late rnn > adopt_twice.out 2>&1; then
  check "a model with a run takes no second promotion" false
else
  check "a model with a run takes no second promotion, saying why" grep -q 'already has a run of rnn' adopt_twice.out
fi

# A run trained with training.seed=K becomes seed K's run.
mv runs/multi30k_de_en_rnn_seed2 runs/rnn_seed2_aside
mv reports/multi30k_de_en/rnn_seed2 reports/rnn_seed2_aside
tried_run R_seed1_again configs/multi30k_de_en_rnn.yaml
if experiments/promote_recipe.sh R_seed1_again rnn --seed 2 > adopt_wrong_seed.out 2>&1; then
  check "a run of seed 1 is not promoted as seed 2" false
else
  check "a run of seed 1 is refused as seed 2, showing the seed" grep -q 'training.seed=2' adopt_wrong_seed.out
fi
tried_run R_seed2 configs/multi30k_de_en_rnn.yaml training.seed=2
experiments/promote_recipe.sh R_seed2 rnn --seed 2 > adopt_seed2.out 2>&1 ||
  { cat adopt_seed2.out >&2; check "promote_recipe.sh --seed 2 promotes a run of seed 2" false; }
check "the run of seed 2 is the model's seed-2 run" \
  test -f runs/multi30k_de_en_rnn_seed2/training_summary.json -a -L runs/screen/R_seed2
: > "$calls"
experiments/compare.sh --models rnn --seeds 2 > compare_seed2.out 2>&1 || { cat compare_seed2.out >&2; check "compare.sh runs on an promoted seed 2" false; }
check "compare.sh decodes the promoted seed 2 without training it" \
  test -z "$(trained)" -a -f reports/multi30k_de_en/rnn_seed2/test_2016_flickr.hyp

if STUB_INTERRUPTED=1 experiments/try_recipe.sh --bin build/bin R_interrupted configs/multi30k_de_en_rnn.yaml \
  > screen_interrupted.out 2>&1; then
  check "try_recipe.sh fails when its training is interrupted" false
else
  check "an interrupted try says the same command resumes it" grep -q 'the same command resumes it' screen_interrupted.out
  check "an interrupted try writes no row" bash -c '! grep -qs "^| R_interrupted |" reports/tuning/screening.md'
fi
# --keep-outputs keeps what compare.sh would of a tried recipe, so it can be promoted after its
# run is lost with its machine.
: > "$calls"
experiments/try_recipe.sh --budget 60m --keep-outputs --bin build/bin R_kept configs/multi30k_de_en_rnn.yaml training.seed=3 \
  > screen_kept.out 2>&1 || { cat screen_kept.out >&2; check "try_recipe.sh --keep-outputs" false; }
kept=reports/tuning/screens/R_kept
for test in test_2016_flickr test_2017_flickr test_2017_mscoco; do
  check "a try with --keep-outputs keeps $test's outputs, one per source line" test "$(wc -l < "$kept/$test.hyp")" -eq 5
done
check "decoded with the checkpoint and penalty chosen on val" \
  grep -q -- "^-c runs/screen/R_kept/[a-z_/]*.pt  *--length-penalty avg --alpha 1.4" "$kept/test_2016_flickr.hyp"
check "a try with --keep-outputs scores no test set" test "$(grep -c '^evaluate data/multi30k/test_' "$calls")" -eq 0
check "a try with --keep-outputs keeps its val choice, config and summary" \
  test -f "$kept/val_tuning.tsv" -a -f "$kept/config.yaml" -a -f "$kept/training_summary.json"
rm -rf runs/screen/R_kept runs/screen/R_kept.log  # the machine is gone
experiments/promote_recipe.sh R_kept rnn --seed 3 > adopt_kept.out 2>&1 ||
  { cat adopt_kept.out >&2; check "promote_recipe.sh promotes a lost run from its kept results" false; }
check "a lost run's kept results become the seed's results folder" \
  test -f reports/multi30k_de_en/rnn_seed3/training_summary.json -a -f reports/multi30k_de_en/rnn_seed3/test_2017_mscoco.hyp
check "whose checkpoint is named in the seed's run" grep -q '^runs/multi30k_de_en_rnn_seed3/[a-z_/]*.pt$' \
  reports/multi30k_de_en/rnn_seed3/decoding_checkpoint.txt
check "seed 3 keeps no attention heatmaps" test ! -e reports/multi30k_de_en/rnn_seed3/attention
: > "$calls"
experiments/compare.sh --models rnn --seeds 3 > compare_kept.out 2>&1 ||
  { cat compare_kept.out >&2; check "compare.sh runs on a run promoted from its results" false; }
check "compare.sh keeps the promoted results: nothing trained or decoded" \
  test -z "$(trained)" -a "$(grep -c '^translate' "$calls")" -eq 0
check "and scores them" test -s reports/multi30k_de_en/rnn_seed3/test_2016_flickr.scores.json

# An experiment plan: two directions of a new pair, both models, an ensemble, a budget.
cat > plan.yaml <<'PLAN'
title: "fr and en both ways"
name: grid
tokenizer_prefix: runs/spm_{languages}
budget: 30m
models:
  transformer: configs/multi30k_de_en_transformer.yaml
  rnn: configs/multi30k_de_en_rnn.yaml
ensemble: [transformer, rnn]
directions:
  - fr-en
  - en-fr: {tests: [test_2016_flickr], set: {rnn: [model.dropout=0.4, training.max_steps=40, training.max_time=0]}}
multilingual:
  m_transformer: {model: transformer, directions: [fr-en, en-fr], budget: 60m}
PLAN
sed 's/^budget: 30m/budget: 30m\nseed: 2/' plan.yaml > plan_typo.yaml
if experiments/run_plan.sh plan_typo.yaml > plan_typo.out 2>&1; then
  check "a plan with an unknown key fails" false
else
  check "a plan's unknown key is named with its line and the key meant" \
    grep -q "plan_typo.yaml:5: seed: unknown key 'seed'; did you mean 'seeds'?" plan_typo.out
fi
check "a plan with errors trains nothing" test -z "$(trained)"
: > "$calls"
experiments/run_plan.sh plan.yaml > plan.out 2>&1 || { cat plan.out >&2; check "run_plan.sh runs a plan" false; }
plan_trained() { grep '^train ' "$calls" | grep -oE 'output_dir=runs/[^ ]+' | sed 's#output_dir=runs/multi30k_##' | tr '\n' ' '; }
check "the plan trains its directions in order, each model once, then its multilingual model once" \
  test "$(plan_trained)" == "fr_en_transformer fr_en_rnn en_fr_transformer en_fr_rnn m_transformer "
check "the multilingual model is trained for all its directions with its own tokenizer and budget" \
  grep -q 'output_dir=runs/multi30k_m_transformer .*data.directions=\[fr-en, en-fr\] --set data.test=\[test_2016_flickr\] --set tokenizer.prefix=runs/spm_en_fr --set training.max_time=60m' "$calls"
check "and decoded in each of them, asking for the direction's target" \
  test "$(grep -c '^translate -c runs/multi30k_m_transformer/[a-z_/]*.pt -i data/multi30k/test_2016_flickr.[a-z]*.gz --target-lang' "$calls")" -eq 2
check "a multilingual model's results are kept in each direction" \
  test -f reports/multi30k_fr_en/m_transformer/test_2017_mscoco.hyp -a -f reports/multi30k_en_fr/m_transformer/test_2016_flickr.hyp
check "a direction's runs get its languages, tokenizer and the plan's budget" \
  grep -q 'output_dir=runs/multi30k_en_fr_rnn .*data.src_lang=en --set data.tgt_lang=fr --set data.test=\[test_2016_flickr\] --set tokenizer.prefix=runs/spm_en_fr --set training.max_time=30m --set model.dropout=0.4' "$calls"
check "the direction's own override is only its model's" \
  test "$(grep '^train .*output_dir=runs/multi30k_en_fr_transformer' "$calls" | grep -c 'model.dropout')" -eq 0
check "a direction decodes only its test sets" \
  test -f reports/multi30k_en_fr/rnn/test_2016_flickr.hyp -a ! -e reports/multi30k_en_fr/rnn/test_2017_flickr.hyp
check "each direction has its ensemble" test -f reports/multi30k_fr_en/ensemble_transformer+rnn/ensemble.txt -a -f reports/multi30k_en_fr/ensemble_transformer+rnn/ensemble.txt
check "the progress of the grid is shown before each direction" \
  grep -q '^5 runs: 2 done, 0 running, 0 started or trained, 3 left' plan.out
check "the grid's summary names every direction and system" \
  grep -q '^| en→fr | .* | .* | .* | .* |$' reports/plans/grid/results.md
check "its significance marks say which correction over how many comparisons" \
  grep -q "after Holm's correction over all 12 BLEU comparisons" reports/plans/grid/results.md
check "a multilingual model is tested against its architecture's bilingual model" \
  grep -q '^- m_transformer against transformer on test_2016_flickr' reports/plans/grid/results.md
check "the grid's CSV has a row per direction, test set and system" test "$(tail -n +2 reports/plans/grid/results.csv | wc -l)" -eq 16
check "the grid's plot of BLEU by direction" grep -q '<title>fr→en ensemble (transformer + rnn)' reports/plans/grid/bleu_by_direction.svg
: > "$calls"
experiments/run_plan.sh plan.yaml > plan_again.out 2>&1 || { cat plan_again.out >&2; check "run_plan.sh reruns a finished plan" false; }
check "a finished plan trains and decodes nothing again" test -z "$(plan_trained)" -a "$(grep -c '^translate' "$calls")" -eq 0
check "and says the grid is done" grep -q '^5 runs: 5 done' plan_again.out
sed -i 's/^budget: 30m/budget: 45m/' plan.yaml
if experiments/run_plan.sh plan.yaml > plan_changed.out 2>&1; then
  check "a changed budget stops the plan" false
else
  check "a changed budget stops the plan, showing the change" grep -q 'training.max_time=45m' plan_changed.out
fi
sed -i 's/^budget: 45m/budget: 30m/' plan.yaml
rm -rf reports/multi30k_en_fr/rnn runs/multi30k_en_fr_rnn/training_summary.json
if STUB_INTERRUPTED=1 experiments/run_plan.sh plan.yaml > plan_interrupted.out 2>&1; then
  check "an interrupted plan fails" false
else
  check "an interrupted plan says the same command resumes it" grep -q 'the same command resumes it' plan_interrupted.out
fi
echo '{"type": "train", "step": 10, "wall_seconds": 20.0}' > runs/multi30k_en_fr_rnn/metrics.jsonl
experiments/run_plan.sh plan.yaml --status > plan_status.out
check "the status shows the interrupted run as started, with the share of its updates made" \
  grep -q '^en_fr    rnn  *1  started (25% of 40 updates)$' plan_status.out
check "and the updates left with the time they take at the run's speed" \
  grep -q '; training left: 30 updates of rnn, ~1m00s here at its last measured speed (decoding not counted)$' plan_status.out
printf '%s\n' '{"type": "train", "step": 2, "wall_seconds": 4.0}' '{"type": "train", "step": 4, "wall_seconds": 10.0}' \
  '{"type": "valid", "step": 4}' '{"type": "train", "step": 8, "wall_seconds": 5000.0}' \
  '{"type": "train", "step": 10, "wall_seconds": 5006.0}' > runs/multi30k_en_fr_rnn/metrics.jsonl
experiments/run_plan.sh plan.yaml --status > plan_status_paused.out
check "a run paused for a while: the ETA takes the median speed of its log's intervals (3 s per update)" \
  grep -q '; training left: 30 updates of rnn, ~1m30s here at its last measured speed (decoding not counted)$' plan_status_paused.out
# A run budgeted by wall-clock time whose log has no scale line (no training.reference_gflops, so
# a second counts a second), stopped by SIGKILL: its status said 0% and its whole budget left.
mv reports/multi30k_en_fr/transformer transformer_report.kept
mv runs/multi30k_en_fr_transformer/training_summary.json transformer_summary.kept
cp runs/multi30k_en_fr_transformer/metrics.jsonl transformer_metrics.kept
echo '{"type": "train", "step": 100, "wall_seconds": 450.0}' > runs/multi30k_en_fr_transformer/metrics.jsonl
experiments/run_plan.sh plan.yaml --status > plan_status_killed.out
check "a stopped wall-clock run shows the share of its budget used" \
  grep -q '^en_fr    transformer  *1  started (25% of 30m00s)$' plan_status_killed.out
mv transformer_report.kept reports/multi30k_en_fr/transformer
mv transformer_summary.kept runs/multi30k_en_fr_transformer/training_summary.json
mv transformer_metrics.kept runs/multi30k_en_fr_transformer/metrics.jsonl
echo '{"type": "train", "step": 10, "wall_seconds": 20.0}' > runs/multi30k_en_fr_rnn/metrics.jsonl
exec {held}> runs/multi30k_en_fr_rnn.lock
flock -n "$held"
experiments/run_plan.sh plan.yaml --status > plan_running.out
check "a run another process trains shows as running" grep -q '^en_fr    rnn  *1  running' plan_running.out
: > "$calls"
outcome=0
experiments/run_plan.sh plan.yaml > plan_locked.out 2>&1 || outcome=$?
exec {held}>&-
check "a run another process holds is skipped, not trained twice" \
  test -z "$(plan_trained)" -a "$(grep -c '^== rnn: runs/multi30k_en_fr_rnn is being trained or decoded by another process, skipped$' plan_locked.out)" -eq 1
check "and its direction is neither scored nor reported" \
  grep -q '^compare.sh: en_fr is not scored or reported: rnn left to the process that holds them' plan_locked.out
check "the other directions are, and the plan ends with status 3, saying the grid is not complete" \
  test "$outcome" -eq 3 -a "$(grep -c '^evaluate data/multi30k/test_2016_flickr.en.gz' "$calls")" -gt 0 -a \
  "$(grep -c '^run_plan.sh: the grid is not complete' plan_locked.out)" -eq 1
: > "$calls"
experiments/run_plan.sh plan.yaml > plan_resumed.out 2>&1 || { cat plan_resumed.out >&2; check "run_plan.sh resumes" false; }
check "the rerun resumes the interrupted run only" test "$(plan_trained)" == "en_fr_rnn " -a "$(grep -c -- '--resume' "$calls")" -eq 1
# Trainings on a frozen copy of the build while the tree changes; decoding later.
cp -r build/bin frozen_bin
rm -rf reports/multi30k_fr_en/rnn runs/multi30k_fr_en_rnn
: > "$calls"
echo '#!/usr/bin/env bash
echo "the build was rebuilt" >&2; exit 1' > scripts/build.sh
experiments/run_plan.sh plan.yaml --train-only --frozen-bin frozen_bin > plan_train_only.out 2>&1 ||
  { cat plan_train_only.out >&2; check "run_plan.sh --train-only" false; }
printf '#!/usr/bin/env bash\n' > scripts/build.sh
check "--train-only trains what is left with the frozen build, and decodes nothing" \
  test "$(plan_trained)" == "fr_en_rnn " -a "$(grep -c '^translate' "$calls")" -eq 0 -a ! -e reports/multi30k_fr_en/rnn
check "--train-only writes no report" test "$(grep -c '^report' "$calls")" -eq 0
: > "$calls"
experiments/run_plan.sh plan.yaml > plan_after_training.out 2>&1 || { cat plan_after_training.out >&2; check "run_plan.sh after --train-only" false; }
check "a run after --train-only decodes the trained run without training it" \
  test -z "$(plan_trained)" -a -f reports/multi30k_fr_en/rnn/test_2016_flickr.hyp
# Training and decoding with the frozen build while build/bin is being rebuilt (here: absent).
rm -rf reports/multi30k_fr_en/rnn runs/multi30k_fr_en_rnn reports/plans/grid/results.md
: > "$calls"
mv build/bin build/bin.rebuilding
echo '#!/usr/bin/env bash
echo "the build was rebuilt" >&2; exit 1' > scripts/build.sh
experiments/run_plan.sh plan.yaml --frozen-bin frozen_bin > plan_frozen.out 2>&1 ||
  { cat plan_frozen.out >&2; check "run_plan.sh --frozen-bin" false; }
printf '#!/usr/bin/env bash\n' > scripts/build.sh
mv build/bin.rebuilding build/bin
check "--frozen-bin trains, decodes, scores and reports with the frozen build alone" \
  test "$(plan_trained)" == "fr_en_rnn " -a -f reports/multi30k_fr_en/rnn/test_2016_flickr.scores.json \
  -a "$(grep -c '^evaluate' "$calls")" -gt 0 -a -f reports/plans/grid/results.md
rm -rf reports/multi30k_en_fr/rnn runs/multi30k_en_fr_rnn reports/multi30k_en_fr/transformer runs/multi30k_en_fr_transformer
mkdir -p runs && exec {held}> runs/multi30k_en_fr_transformer.lock && flock -n "$held"
: > "$calls"
outcome=0
experiments/run_plan.sh plan.yaml --train-only --frozen-bin frozen_bin > plan_shared.out 2>&1 || outcome=$?
exec {held}>&-
check "a --train-only runner skips the run another one trains and trains the next" \
  test "$(plan_trained)" == "en_fr_rnn " -a "$(grep -c 'runs/multi30k_en_fr_transformer is being trained or decoded by another process, skipped' plan_shared.out)" -eq 1
check "and ends with status 3, saying the grid's training is not complete (issue 85: it exited 0)" \
  test "$outcome" -eq 3 -a "$(grep -c "^run_plan.sh: the grid's training is not complete" plan_shared.out)" -eq 1
# Two decoding runners: one skips the run the other decodes (its lock held) and decodes the rest.
rm -rf reports/multi30k_fr_en/rnn reports/multi30k_fr_en/transformer
exec {held}> runs/multi30k_fr_en_rnn.lock && flock -n "$held"
experiments/run_plan.sh plan.yaml --status > plan_decoding_status.out
check "a trained run another process holds shows as decoding" grep -q '^fr_en    rnn  *1  decoding$' plan_decoding_status.out
: > "$calls"
outcome=0
experiments/run_plan.sh plan.yaml --frozen-bin frozen_bin > plan_decoding_shared.out 2>&1 || outcome=$?
exec {held}>&-
check "a decoding runner skips the run another one decodes, decoding the next" \
  test "$outcome" -eq 3 -a "$(grep -c '^translate .*runs/multi30k_fr_en_rnn/' "$calls")" -eq 0 -a \
  -f reports/multi30k_fr_en/transformer/test_2016_flickr.hyp -a ! -e reports/multi30k_fr_en/rnn
experiments/run_plan.sh plan.yaml --frozen-bin frozen_bin > plan_decoding_rest.out 2>&1 ||
  { cat plan_decoding_rest.out >&2; check "a decoding runner after the other one" false; }
check "a run after it decodes what was left and completes the grid" \
  test -f reports/multi30k_fr_en/rnn/test_2016_flickr.hyp -a -f reports/multi30k_fr_en/rnn/training_summary.json
# Two runners reaching the same direction: one writes its report while the other waits.
exec {held}< reports/multi30k_fr_en && flock -n "$held"
report_time() { stat -c %y reports/multi30k_fr_en/results.md; }
before="$(report_time)"
mapfile -t fr_en_args < <("$nmtzoo_plan" runs plan.yaml | head -1 | tr '\t' '\n')
experiments/compare.sh "${fr_en_args[@]}" > report_wait.out 2>&1 {held}>&- &  # the lock is not its to hold
waiting=0
for _ in $(seq 120); do
  grep -q '^== fr_en: another process is writing its report; waiting for it$' report_wait.out && { waiting=1; break; }
  sleep 0.5
done
check "a runner waits while another one writes the direction's report" test "$waiting" -eq 1 -a "$(report_time)" == "$before"
exec {held}>&-
outcome=0
wait $! || outcome=$?
check "and writes it once the other is done" test "$outcome" -eq 0 -a "$(report_time)" != "$before"
# The seed band (measure/seed_band.sh): a side's environment reaches its trainer only; two lanes
# share the runs through their locks; the band is printed from the finished runs.
mkdir -p experiments/measure band_bin
cp "$project/experiments/measure/seed_band.sh" experiments/measure/
cat > band_bin/nmtzoo-train <<EOF
#!/usr/bin/env bash
out=""; seed=""; prev=""
for arg in "\$@"; do
  [[ "\$prev" == --set && "\$arg" == training.output_dir=* ]] && out="\${arg#*=}"
  [[ "\$prev" == --set && "\$arg" == training.seed=* ]] && seed="\${arg#*=}"
  prev="\$arg"
done
echo "band \$(basename "\$out") NMTZOO_KERNELS=\${NMTZOO_KERNELS-unset}" >> "$calls"
mkdir -p "\$out"
echo "{\"type\":\"valid\",\"bleu\":\$(awk -v s="\$seed" 'BEGIN { print 38.6 + 0.4 * s }'),\"step\":2350}" > "\$out/metrics.jsonl"
echo '{"updates": 2350}' > "\$out/training_summary.json"
EOF
chmod +x band_bin/nmtzoo-train
band_runs() { grep '^band ' "$calls" | cut -d' ' -f2- | tr '\n' ';'; }
mkdir -p band && exec {held}> band/a_seed2.lock && flock -n "$held"
: > "$calls"
experiments/measure/seed_band.sh band_bin band_bin band --seeds-a 3 --seeds-b 1 --env-a NMTZOO_KERNELS=off \
  > band_lane.out 2>&1 || true
exec {held}>&-
check "a seed band lane trains the runs no other lane holds, A's with its environment only" \
  test "$(band_runs)" == "a_seed1 NMTZOO_KERNELS=off;b_seed1 NMTZOO_KERNELS=unset;a_seed3 NMTZOO_KERNELS=off;" \
  -a "$(grep -c 'seed 2: being trained by another lane, skipped' band_lane.out)" -eq 1
: > "$calls"
experiments/measure/seed_band.sh band_bin band_bin band --seeds-a 3 --seeds-b 1 --env-a NMTZOO_KERNELS=off \
  > band_done.out 2>&1 || { cat band_done.out >&2; check "seed_band.sh after the other lane" false; }
check "the next lane trains the skipped run and prints the band" \
  test "$(band_runs)" == "a_seed2 NMTZOO_KERNELS=off;" \
  -a "$(grep -c "A's band over 3 seeds: 39.00-39.80, mean 39.40, sd 0.40" band_done.out)" -eq 1 \
  -a "$(grep -c "B 39.00: within A's min-max" band_done.out)" -eq 1
: > "$calls"
status=0
experiments/measure/seed_band.sh band_bin band_bin band_bad --env-b KERNELS > band_bad.out 2>&1 || status=$?
check "a malformed --env-b stops the band before any training, naming the option" \
  test "$status" -eq 2 -a -z "$(band_runs)" -a "$(grep -c -- "--env-b expects NAME=VALUE, got 'KERNELS'" band_bad.out)" -eq 1
((failures == 0)) || { echo "$failures checks failed" >&2; exit 1; }
echo "all checks passed"
