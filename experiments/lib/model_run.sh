# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154  # pair, src, tgt, tests, report, fresh: set by the caller
# Sourced after lib/common.sh by experiments/compare.sh and experiments/distill.sh: one model's
# Multi30k experiment, from training to its test outputs, resumable at every step. The caller
# sets pair and fresh (1 reruns the model), then calls start_experiment. try_recipe.sh and
# promote_recipe.sh use its run_plumbing, train_run and decode_run, so a tried recipe is trained
# and decoded exactly as compare.sh would.
#
#   start_experiment
#
# sets src, tgt, tests (the test sets) and report (the results folders' parent), gets
# data/multi30k, builds build/bin (unless frozen_bin names a frozen copy to run: apps, either way)
# and enters the project folder.
#
#   run_model FOLDER CONFIG SEED [KEY=VALUE ...]
#
# trains runs/multi30k_<pair>_FOLDER from CONFIG with the overrides (and training.seed=SEED when
# SEED is not empty; an interrupted run is resumed), averages its last 5 checkpoints and its 5
# best-validated ones, picks the checkpoint (an average or the best one) and length penalty on
# val (experiments/tune_decoding.sh; the choice is kept in report/FOLDER/decoding_checkpoint.txt),
# translates the test sets with beam 5, draws attention heatmaps of report/attention_sources.txt
# (not for SEED > 1), and keeps all of it in report/FOLDER/. training_summary.json is copied into
# that folder last: it marks it complete, and a complete folder is kept (fresh=1 reruns it).
# One process works on a run at a time (it holds runs/<run>.lock, which nmtzoo-plan status shows
# as running or decoding): a run another process is training or decoding is skipped, its folder
# added to busy_folders, so runners one a core share a plan's trainings and decodings.
#
#   decode_run RUN RESULTS ATTENTION
#
# run_model's steps after training (experiments/try_recipe.sh --keep-outputs uses them too): the
# averages (made again only when a checkpoint is newer), the checkpoint and length penalty chosen
# on val (a tuning stopped midway resumes), the test outputs, the attention heatmaps when
# ATTENTION is 1 and the metrics, in RESULTS.
#
#   run_plumbing RUN
#
# prints, one per line, the --set arguments every Multi30k run is trained with besides its recipe:
# its output folder RUN and the 5 best-validated checkpoints kept (experiments/try_recipe.sh's
# runs use them too, so a tried recipe is the very run compare.sh would train;
# experiments/promote_recipe.sh checks it).
#
#   train_run RUN PROGRESS CONFIG [nmtzoo-train ARG ...]
#
# trains RUN with $bin/nmtzoo-train (bin: set by the caller) unless it already finished,
# resuming it from its last checkpoint, its output appended to RUN.log (PROGRESS=1 also prints
# the validation lines). A run that stops without training_summary.json
# (a signal stops nmtzoo-train with exit 0 and a checkpoint) stops the script, saying the same
# command resumes it; so does a failed one.
#
# Each run and results folder keeps the recipe it was made with (compare_config.yaml: the config
# file, then the overrides as comments): one made with another recipe (another value of any key
# once resolved by nmtzoo-config) is never reused silently.
apps="${apps:-build/bin}"  # the apps every step runs: start_experiment sets them, or the caller

# Models with a run folder of their own (compare.sh --run), by model name.
declare -p model_run_dir &> /dev/null || declare -gA model_run_dir=()
busy_folders=()  # run_model's folders whose run another process holds

start_experiment() {
  src="${pair%_*}"
  tgt="${pair#*_}"
  tests=(test_2016_flickr test_2017_flickr test_2017_mscoco)
  report="reports/multi30k_$pair"
  prepare_workspace
}

recipe_of() {  # CONFIG [KEY=VALUE ...]: the recipe text on stdout
  local config="$1"
  shift
  cat "$config"
  if (($#)); then
    echo "# overrides:"
    for override in "$@"; do echo "#   --set $override"; done
  fi
}

seed_folder() {  # MODEL SEED: the folder of a model's seed: <model> for seed 1, <model>_seed<k>
  if (($2 == 1)); then echo "$1"; else echo "$1_seed$2"; fi
}

seed_settings() {  # SEED: the --set arguments seed SEED trains with (none for 1: the config's seed)
  ((${1:-1} == 1)) || printf '%s\n' --set "training.seed=$1"
}

resolved_recipe() {  # RECIPE_FILE: every key's value as training sees it, on stdout
  local override sets=()
  while IFS= read -r override; do sets+=(--set "$override"); done < <(sed -n 's/^#   --set //p' "$1")
  "$apps/nmtzoo-config" "$1" "${sets[@]}"
}

check_recipe() {  # FOLDER RECIPE_FILE
  local kept="$1/compare_config.yaml"
  [[ -f "$kept" ]] || return 0  # no recorded recipe: nothing to check against
  cmp -s "$kept" "$2" && return 0
  # Another text can be the same recipe (an edited comment, keys reordered or spelt by an alias):
  # only a different resolved value stops the script.
  local resolved_kept resolved_now same=0
  resolved_kept="$(mktemp)"
  resolved_now="$(mktemp)"
  if ! resolved_recipe "$kept" > "$resolved_kept"; then
    echo "$script: the recipe $1 was made with no longer loads (above)" >&2
  elif ! resolved_recipe "$2" > "$resolved_now"; then
    echo "$script: the config does not load (above)" >&2
  elif cmp -s "$resolved_kept" "$resolved_now"; then
    same=1
  else
    echo "$script: the recipe changed since $1 was made (< then, > now):" >&2
    diff "$resolved_kept" "$resolved_now" >&2 || true
  fi
  rm -f "$resolved_kept" "$resolved_now"
  ((same)) && return 0
  echo "$script: rerun it with --fresh, or restore the config" >&2
  exit 1
}

run_plumbing() {
  # The 5 best-validated checkpoints stay beside the last 5 for the best-5 average (retention
  # does not change training, so it is plumbing like the output folder, not part of the recipe).
  printf '%s\n' --set "training.output_dir=$1" --set training.keep_best=5
}

train_run() {
  local run="$1" progress="$2" config="$3"
  shift 3
  [[ -f "$run/training_summary.json" ]] && return 0
  # One trainer a run: a second process stops instead of writing the same checkpoints (run_model
  # holds the lock already). The trainer inherits it.
  local lock=""
  if [[ "${locked_run:-}" != "$run" ]]; then
    mkdir -p "$(dirname "$run")"
    try_lock "$run.lock" || { echo "$script: $run is being trained by another process" >&2; exit 1; }
  fi
  local resume=() status=0
  [[ -f "$run/checkpoints/checkpoint_last.pt" ]] && resume=(--resume)
  mkdir -p "$run"
  if ((progress)); then
    "$bin/nmtzoo-train" --config "$config" "$@" "${resume[@]}" 2>&1 | tee -a "$run.log" |
      { grep --line-buffered -E "^valid|reached|stopping|time budget" || true; } || status=${PIPESTATUS[0]}
  else
    "$bin/nmtzoo-train" --config "$config" "$@" "${resume[@]}" >> "$run.log" 2>&1 || status=$?
  fi
  ((status == 0)) || { echo "$script: training $run failed (exit $status); see $run.log" >&2; exit 1; }
  [[ -f "$run/training_summary.json" ]] || {
    echo "$script: $run was interrupted before it finished (see $run.log); the same command resumes it" >&2
    exit 1
  }
  [[ -z "$lock" ]] || exec {lock}>&-
}

run_model() {
  local folder="$1" config="$2" seed="$3"
  shift 3
  local bin="$apps"
  # A model with a run folder of its own (model_run_dir, set by compare.sh --run) trains there.
  local model="${folder%_seed*}" run="runs/multi30k_${pair}_${folder}"
  if [[ -n "${model_run_dir[$model]:-}" ]]; then run="${model_run_dir[$model]}${folder#"$model"}"; fi
  local results="$report/$folder"
  [[ -f "$config" ]] || { echo "$script: missing $config" >&2; exit 1; }
  if ((!fresh)) && kept_results "$@"; then return 0; fi
  local lock locked_run="$run"
  mkdir -p "$(dirname "$run")"
  if ! try_lock "$run.lock"; then
    echo "== $folder: $run is being trained or decoded by another process, skipped"
    busy_folders+=("$folder")
    return 0
  fi
  run_model_steps "$@"
  exec {lock}>&-
}

kept_results() {  # [KEY=VALUE ...]: true, saying so, when run_model's results folder is
  # complete; one of another recipe stops the script
  [[ -f "$results/training_summary.json" ]] || return 1
  local recipe
  recipe="$(mktemp)"
  recipe_of "$config" "$@" > "$recipe"
  check_recipe "$results" "$recipe"
  rm -f "$recipe"
  echo "== $folder: results kept in $results (--fresh reruns it)"
}

run_model_steps() {  # run_model's work, with the run's lock held
  # A shared run (a multilingual model's) is trained once for all its directions: --fresh redoes
  # this direction's results only.
  if ((fresh)); then
    rm -rf "$results"
    [[ -n "${model_run_dir[$model]:-}" ]] || rm -rf "$run"
  fi
  kept_results "$@" && return 0  # completed by another process since run_model looked
  local recipe
  recipe="$(mktemp)"
  recipe_of "$config" "$@" > "$recipe"
  [[ -d "$run" ]] && check_recipe "$run" "$recipe"
  if [[ ! -f "$run/training_summary.json" ]]; then
    local sets
    mapfile -t sets < <(run_plumbing "$run")
    for override in "$@"; do sets+=(--set "$override"); done
    mapfile -t -O "${#sets[@]}" sets < <(seed_settings "$seed")
    echo "== training $folder ($config ${sets[*]}), log in $run.log"
    mkdir -p "$run"
    [[ -f "$run/compare_config.yaml" ]] || cp "$recipe" "$run/compare_config.yaml"
    train_run "$run" 1 "$config" "${sets[@]}"
  fi
  rm -f "$recipe"
  if ((${train_only:-0})); then
    echo "== $folder: decoding left for a run without --train-only ($run)"
    return 0
  fi
  local attention=0
  [[ -z "$seed" || "$seed" == 1 ]] && attention=1
  decode_run "$run" "$results" "$attention"
  [[ -f "$run/compare_config.yaml" ]] && cp "$run/compare_config.yaml" "$results/compare_config.yaml"
  cp "$run/training_summary.json" "$results/training_summary.json"
}

average_checkpoints() {  # RUN --last|--best N FILE: RUN/FILE, the average, unless it is newer
  # than the checkpoints and the app: a decoding stopped midway resumes its val tuning
  # (experiments/tune_decoding.sh), which decoded that very file
  local run="$1" which="$2" count="$3" average="$1/$4"
  if [[ -f "$average" && -z "$(find "$run/checkpoints" "$bin/nmtzoo-average" -newer "$average" -print -quit)" ]]; then
    return 0
  fi
  "$bin/nmtzoo-average" --dir "$run/checkpoints" "$which" "$count" -o "$average"
}

decode_run() {  # RUN RESULTS ATTENTION: RUN's decoding choice on val and test outputs in RESULTS
  local run="$1" results="$2" attention="$3"
  local bin="$apps"
  mkdir -p "$results"
  average_checkpoints "$run" --last 5 averaged.pt
  if [[ -f "$run/checkpoints/scores.json" ]]; then  # none: the run kept no best checkpoints
    average_checkpoints "$run" --best 5 best_averaged.pt
  fi
  local penalty alpha checkpoint
  read -r penalty alpha checkpoint < <(experiments/tune_decoding.sh --frozen-bin "$apps" "$run" "$src" "$tgt" "$results/val_tuning.tsv")
  [[ -f "$checkpoint" ]] || { echo "$script: no checkpoint chosen on val for $run" >&2; exit 1; }
  echo "$checkpoint" > "$results/decoding_checkpoint.txt"
  echo "$run: chosen on val: $checkpoint, length penalty $penalty, alpha $alpha"
  local test
  for test in "${tests[@]}"; do
    "$bin/nmtzoo-translate" -c "$checkpoint" -i "data/multi30k/$test.$src.gz" --target-lang "$tgt" \
      -o "$results/$test.hyp" --beam 5 --length-penalty "$penalty" --alpha "$alpha" \
      --stats "$results/$test.speed.json" 2>/dev/null
  done
  if ((attention)); then
    "$bin/nmtzoo-translate" -c "$checkpoint" -i "$report/attention_sources.txt" --target-lang "$tgt" --beam 5 \
      --attention-svg "$results/attention" --attention-count 3 >/dev/null 2>&1
  fi
  cp "$run/metrics.jsonl" "$results/metrics.jsonl"
}

chosen_checkpoint() {  # FOLDER: the checkpoint its test sets were decoded with
  local kept="$report/$1/decoding_checkpoint.txt"
  if [[ -f "$kept" ]]; then cat "$kept"; else echo "runs/multi30k_${pair}_$1/averaged.pt"; fi
}

ensemble_checkpoints() {  # "MODEL ...": their chosen checkpoints in members, as -c flags in checkpoints
  members=()
  checkpoints=()
  local model
  for model in $1; do
    members+=("$(chosen_checkpoint "$model")")
    checkpoints+=(-c "$(chosen_checkpoint "$model")")
  done
}

tune_ensemble() {  # OUT.tsv: tunes the decoding of ensemble_checkpoints' members on val
  # (experiments/tune_decoding.sh) into ensemble_settings
  local choice
  choice="$(experiments/tune_decoding.sh --frozen-bin "$apps" --ensemble "${members[*]}" "$src" "$tgt" "$1")"
  ensemble_settings "$choice"
}

# shellcheck disable=SC2034  # its variables are set for the caller
ensemble_settings() {  # "PENALTY ALPHA WEIGHTS MODE": sets penalty, alpha, weights, mode, their
  # nmtzoo-translate flags (ensemble_decoding) and a sentence saying how the members' next-token
  # distributions combine (ensemble_combination)
  read -r penalty alpha weights mode <<< "$1"
  ensemble_decoding=(--beam 5 --length-penalty "$penalty" --alpha "$alpha" --weights "$weights"
    --ensemble-mode "$mode")
  if [[ "$mode" == prob ]]; then
    ensemble_combination="next-token probabilities averaged with weights $weights"
  else
    ensemble_combination="next-token log-probabilities summed with weights $weights"
  fi
}

ensemble_members() {  # "MODEL ...": one line a member: its results folder, the checkpoint chosen
  # for it and the checksum of its training_summary.json (a retrained member has another one)
  local model
  for model in $1; do
    echo "$model $(chosen_checkpoint "$model") $(sha256sum < "$report/$model/training_summary.json" | cut -d' ' -f1)"
  done
}

kept_ensemble_choice() {  # "MODEL ...": the decoding chosen on val for their ensemble
  # ("PENALTY ALPHA WEIGHTS MODE") when its results folder is complete and its members unchanged
  local record="$report/ensemble_${1// /+}/ensemble.txt"
  [[ -f "$record" && "$(sed '$d' "$record")" == "$(ensemble_members "$1")" ]] && tail -1 "$record"
  return 0
}

score_folder() {  # FOLDER: scores report/FOLDER's test outputs (BLEU, chrF2, TER) into *.scores.json
  local bin="$apps"
  local test
  for test in "${tests[@]}"; do
    local scores="$report/$1/$test.scores.json"
    "$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$1/$test.hyp" \
      -m bleu chrf ter -w 2 --json > "$scores.tmp" && mv "$scores.tmp" "$scores"
    echo "$1 $test: $("$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$1/$test.hyp" -m bleu chrf ter -w 2 | tr '\n' ' ')"
  done
}
