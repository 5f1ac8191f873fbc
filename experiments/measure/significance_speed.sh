#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times nmtzoo-evaluate's statistical tests against sacreBLEU 2.6.0 itself on the same input,
# interleaved (A B A B) since this machine's speed drifts: paired bootstrap (1,000 resamples) and
# approximate randomization (10,000 trials) of 3 systems x 3 metrics (BLEU, chrF2, TER) on the
# 1,000 sentences of test_2016_flickr (the zoo's committed outputs), and --confidence of one.
#   experiments/measure/significance_speed.sh SACREBLEU_SRC [ROUNDS]
# SACREBLEU_SRC is a checkout of github.com/mjpost/sacrebleu at v2.6.0 (scripts/setup.sh
# --with-sacrebleu installs its imports). Prints each run's wall time and the median ratio.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 1 2
source_dir="$(cd "${args[0]}" && pwd)"
rounds="${args[1]:-3}"
[[ -f "$source_dir/sacrebleu/version.py" ]] || echo '__version__ = "2.6.0"' > "$source_dir/sacrebleu/version.py"
ref="$root/data/multi30k/test_2016_flickr.en.gz"
[[ -f "$ref" ]] || source "$root/scripts/data-dir.sh"
evaluate="$root/build/bin/nmtzoo-evaluate"
cd "$root/tests/data/sacrebleu/significance"
systems=(transformer.hyp.gz rnn.hyp.gz rnn_luong.hyp.gz)
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
for test in "--paired-bs" "--paired-ar" "--confidence"; do
  inputs=("${systems[@]}")
  [[ "$test" == "--confidence" ]] && inputs=("${systems[0]}")
  args=("$ref" -i "${inputs[@]}" -m bleu chrf ter "$test" -q)
  nmtzoo_times=() sacrebleu_times=()
  for ((round = 0; round < rounds; ++round)); do
    nmtzoo_times+=("$(seconds "$evaluate" "${args[@]}" -j 2)")
    sacrebleu_times+=("$(seconds env PYTHONPATH="$source_dir" NO_COLOR=1 /usr/bin/python3 -m sacrebleu "${args[@]}")")
  done
  median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
  a=$(median "${nmtzoo_times[@]}")
  b=$(median "${sacrebleu_times[@]}")
  printf '%-13s %d inputs: nmtzoo %s s, sacreBLEU %s s (medians of %d: %s | %s); sacreBLEU/nmtzoo %.1fx\n' \
    "$test" "${#inputs[@]}" "$a" "$b" "$rounds" "${nmtzoo_times[*]}" "${sacrebleu_times[*]}" \
    "$(echo "$b / $a" | bc -l)"
done
