#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README is the front door, so what it points at must be there: every program of its
# programs table has its source (nmtzoo-<name> is apps/<name>.cpp), every page of docs/ is linked
# from it, and every relative link of the README and of docs/*.md (images included) names a file
# or folder that exists, and a heading of that page when it has an #anchor. Links in code are not
# links: fenced and indented code blocks and `code spans` are skipped.
#   tests/scripts/readme_links_test.sh PROJECT_ROOT
# Prints one line per missing target; exit status 1 when anything is missing.
set -euo pipefail
root="$(cd "${1:-$(dirname "$0")/../..}" && pwd)"
cd "$root"
missing=0
report() {
  echo "missing: $*"
  missing=$((missing + 1))
}

# The programs: the first cell of every row of the README's "Programs" table.
programs="$(sed -n '/^## Programs/,/^## [^P]/p' README.md | grep -o '^| `nmtzoo-[a-z0-9-]*' | sed 's/^| `//' | sort -u)"
[[ -n "$programs" ]] || report "README.md: a '## Programs' table with rows starting '| \`nmtzoo-...'"
for program in $programs; do
  [[ -f "apps/${program#nmtzoo-}.cpp" ]] || report "README.md: $program's source apps/${program#nmtzoo-}.cpp"
done

# Every docs page is reachable from the README.
for page in docs/*.md; do
  grep -qF "]($page" README.md || report "README.md: a link to $page"
done

prose() {  # FILE: its lines outside code blocks, without code spans
  awk '/^ {0,3}```/ { fence = !fence; next } !fence && !/^(    |\t)/' "$1" | sed 's/`[^`]*`//g'
}

anchors() {  # FILE: the anchors of its headings, as GitHub makes them (code spans keep their text)
  awk '/^ {0,3}```/ { fence = !fence; next } !fence' "$1" | sed -nE 's/^#{1,6} +//p' | tr -d '`' |
    tr '[:upper:]' '[:lower:]' |
    sed -E -e 's/[^[:alnum:] _-]//g' -e 's/ /-/g'
}

for file in README.md docs/*.md; do
  dir="$(dirname "$file")"
  while IFS= read -r link; do
    target="${link%%#*}"
    anchor=""
    [[ "$link" == *"#"* ]] && anchor="${link#*#}"
    [[ "$target" =~ ^[a-zA-Z][a-zA-Z0-9+.-]*: ]] && continue  # https:, mailto:
    page="$file"
    if [[ -n "$target" ]]; then
      page="$dir/$target"
      [[ -e "$page" ]] || { report "$file: link to $link ($page)"; continue; }
    fi
    if [[ -n "$anchor" && "$page" == *.md && -f "$page" ]]; then
      anchors "$page" | grep -qxF -- "$anchor" || report "$file: link to $link (no such heading in $page)"
    fi
  done < <(prose "$file" | grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\((.*)\)$/\1/')
done

if ((missing)); then
  echo "$missing missing" >&2
  exit 1
fi
echo "all programs, pages and links found"
