#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Formats nmtzoo's C++ with clang-format 14 (Debian 12's; scripts/setup.sh installs it) and the
# repository's .clang-format, or with --check changes nothing and fails naming each file that
# is not formatted (the test Style.CxxIsFormatted runs it). The tree was formatted at once in one
# commit, listed in .git-blame-ignore-revs (git config blame.ignoreRevsFile .git-blame-ignore-revs).
#
#   scripts/format.sh [--check] [SOURCE_ROOT]
#
# Exit status 77 (skipped) without clang-format-14, 1 instead under NMTZOO_REQUIRE_ALL=1.
set -euo pipefail
check=0
if [[ "${1:-}" == --check ]]; then check=1; shift; fi
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"
# Pinned: another version formats some constructs differently, and the test would flip.
formatter=clang-format-14
if ! command -v "$formatter" >/dev/null; then
  if [[ "${NMTZOO_REQUIRE_ALL:-}" == 1 ]]; then
    echo "FAILED: no $formatter (NMTZOO_REQUIRE_ALL=1; scripts/setup.sh installs clang-format-14)" >&2
    exit 1
  fi
  echo "skipped: no $formatter (scripts/setup.sh installs clang-format-14)"
  exit 77
fi
mapfile -t files < <(find apps examples experiments fuzz libtorch python tests torch_free \
  -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
if ((check)); then
  if ! problems="$("$formatter" --dry-run --Werror "${files[@]}" 2>&1)"; then
    grep -oE '^[^:]+\.(cpp|h):' <<<"$problems" | sort -u | sed 's/:$//; s/^/not formatted: /' >&2
    echo "run scripts/format.sh to format them" >&2
    exit 1
  fi
  echo "the ${#files[@]} C++ files are formatted"
else
  "$formatter" -i "${files[@]}"
fi
