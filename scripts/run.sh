#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, builds, and runs the main job:
# train the Multi30k tokenizer and print corpus statistics.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/data-dir.sh"
"$root/scripts/build.sh"
cd "$root"
build/bin/nmtzoo-prepare configs/multi30k_transformer.yaml "$@"
