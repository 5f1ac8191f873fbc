#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gets Multi30k (task 1, raw, gzipped) into data/multi30k (or --to DIR).
#   scripts/get-data.sh                       copy from NMTZOO_MULTI30K or ../shared/data/multi30k
#                                             beside the project when present, else download from
#                                             github.com/multi30k/dataset
#   scripts/get-data.sh --from DIR            copy from a local folder
# Checks the line counts of every file it gets; does nothing for files already in place.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
from="${NMTZOO_MULTI30K:-}"
[[ -z "$from" && -d "$root/../shared/data/multi30k" ]] && from="$root/../shared/data/multi30k"
to="$root/data/multi30k"
while (($#)); do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --to) to="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "get-data.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

url="https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
declare -A expected_lines=([train]=29000 [val]=1014 [test_2016_flickr]=1000
                           [test_2017_flickr]=1000 [test_2017_mscoco]=461)
mkdir -p "$to"
for split in train val test_2016_flickr test_2017_flickr test_2017_mscoco; do
  langs="de en fr"
  [[ "$split" == test_2017_* ]] || langs+=" cs"  # Multi30k's Czech has no 2017 test sets
  for lang in $langs; do
    file="$split.$lang.gz"
    target="$to/$file"
    if [[ ! -s "$target" ]]; then
      if [[ -n "$from" ]]; then
        [[ -f "$from/$file" ]] || { echo "get-data.sh: $from/$file is missing" >&2; exit 1; }
        cp "$from/$file" "$target.part"
      else
        curl -fsSL --retry 3 -o "$target.part" "$url/$file" ||
          { echo "get-data.sh: cannot download $url/$file (offline? use --from DIR)" >&2; exit 1; }
      fi
      mv "$target.part" "$target"
    fi
    lines=$(gzip -dc "$target" | wc -l)
    if [[ "$lines" -ne "${expected_lines[$split]}" ]]; then
      echo "get-data.sh: $target has $lines lines, expected ${expected_lines[$split]}" >&2
      exit 1
    fi
  done
done
