#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CMake package (docs/package.md) as a program outside nmtzoo meets it: installs a build into
# a temporary prefix (cmake --install BUILD_DIR --prefix P), checks what P holds, then copies
# examples/cpp/ out of the source tree and configures, builds and runs the examples against P:
#   - P holds the nine libraries as versioned shared objects (libnmtzoo_<layer>.so -> soname
#     libnmtzoo_<layer>.so.<soversion>), whose run paths and the apps' name no build folder, the
#     SentencePiece shim, the package files, and under include/nmtzoo/ exactly the public headers
#     docs/package.md lists, everything they include installed too;
#   - every public header compiles, all in one translation unit, against the installed targets;
#   - examples/cpp/translate_batch translates as the installed nmtzoo-translate does, byte for
#     byte, its libraries resolved in P and the SentencePiece shim found beside them;
#   - examples/cpp/custom_architecture registers its architecture and key, trains it for a few
#     updates and translates with the checkpoint it wrote, which nmtzoo-translate (without that
#     architecture) refuses.
# Without --checkpoint, the installed nmtzoo-train first trains a tiny Transformer on a synthetic
# word-reversal task for translate_batch (seconds, while the examples build).
#
#   tests/scripts/cmake_package_test.sh PROJECT_ROOT BUILD_DIR [--checkpoint CKPT] [--sanitize=LIST] [--keep]
#
# --sanitize=LIST: the -fsanitize= list the build used (NMTZOO_SANITIZE), which the examples need
# too; --keep: keep the scratch folder (printed). Exit status 1 when anything failed.
set -euo pipefail
# ok, fail, check, run_logged, dynamic, runpath, parse_package_test_args and build_and_run_examples.
source "$(dirname "${BASH_SOURCE[0]}")/package_examples.sh"
parse_package_test_args "$@"
scratch="$(mktemp -d)"
if ((keep)); then echo "scratch folder: $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi
# The examples must find everything through the prefix, not through this environment.
unset NMTZOO_SPM_SHIM LD_LIBRARY_PATH CMAKE_PREFIX_PATH

# The prefix.
prefix="$scratch/prefix"
run_logged "$scratch/install.log" cmake --install "$build" --prefix "$prefix"
config_file="$(find "$prefix" -path '*/cmake/nmtzoo/nmtzooConfig.cmake' | head -n 1)"
if [[ -z "$config_file" ]]; then
  echo "FAILED: no <libdir>/cmake/nmtzoo/nmtzooConfig.cmake in the prefix: is cmake/install.cmake included?" >&2
  exit 1
fi
package_dir="$(dirname "$config_file")"
libdir="$(cd "$package_dir/../.." && pwd)"
for file in nmtzooConfigVersion.cmake nmtzooTargets.cmake; do
  check "the package's $file" test -f "$package_dir/$file"
done
shim="$libdir/nmtzoo/libnmtzoo_spm.so"
check "the SentencePiece shim in <libdir>/nmtzoo" test -f "$shim"

layers=(common io metrics base kernels models inference train serve)
for layer in "${layers[@]}"; do
  library="$libdir/libnmtzoo_$layer.so"
  if [[ ! -L "$library" ]]; then
    fail "libnmtzoo_$layer.so is a link to the versioned shared library"
    continue
  fi
  soname="$(dynamic "$library" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')"
  if [[ "$soname" =~ ^libnmtzoo_$layer\.so\.[0-9]+(\.[0-9]+)?$ && -e "$libdir/$soname" ]]; then
    ok "libnmtzoo_$layer.so: soname $soname -> $(basename "$(readlink -f "$library")")"
  else
    fail "libnmtzoo_$layer.so: a versioned soname installed beside it (soname '$soname')"
  fi
  rpath="$(runpath "$library")"
  if [[ "$rpath" == *'$ORIGIN'* && "$rpath" != *"$build"* && "$rpath" != *"$project"* ]]; then
    ok "libnmtzoo_$layer: run path '$rpath'"
  else
    fail "libnmtzoo_$layer: run path '$rpath' (\$ORIGIN, no build or source folder)"
  fi
done
for app in "$prefix"/bin/nmtzoo-*; do
  rpath="$(runpath "$app")"
  if [[ "$rpath" == *'$ORIGIN'* && "$rpath" != *"$build"* && "$rpath" != *"$project"* ]]; then
    ok "$(basename "$app"): run path '$rpath'"
  else
    fail "$(basename "$app"): run path '$rpath' (\$ORIGIN/../<libdir>, no build folder)"
  fi
done

# The headers: exactly docs/package.md's public ones, and whatever they include.
include="$prefix/include/nmtzoo"
installed="$(cd "$include" 2>/dev/null && find . -type f | sed 's|^\./||' | sort || true)"
documented="$(sed -n '/^## Public headers/,/^## /p' "$project/docs/package.md" |
  grep -oE '`[a-z0-9_/]+\.h`' | tr -d '`' | sort -u || true)"
if [[ -n "$installed" && "$installed" == "$documented" ]]; then
  ok "include/nmtzoo holds the $(wc -l <<<"$installed") public headers docs/package.md lists"
else
  fail "include/nmtzoo holds exactly docs/package.md's public headers (< installed, > documented):"
  diff <(echo "$installed") <(echo "$documented") >&2 || true
fi
check "torch_free/tokenizer/spm_shim.h (the shim's private C ABI) is not installed" test ! -e "$include/torch_free/tokenizer/spm_shim.h"
missing_includes=0
while IFS= read -r header; do
  [[ -n "$header" ]] || continue
  while IFS= read -r included; do
    if [[ ! -f "$include/$included" ]]; then
      echo "  $header includes \"$included\", which is not installed" >&2
      missing_includes=$((missing_includes + 1))
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$include/$header")
done <<<"$installed"
check "every header a public header includes is installed" test "$missing_includes" -eq 0

# The examples, out of the source tree, and one translation unit of every public header.
build_and_run_examples "$prefix" "$libdir" "$shim"

echo "$SECONDS s"
if ((failures)); then
  echo "$failures failed ($( ((keep)) && echo "logs in $scratch" || echo "--keep keeps the logs"))" >&2
  exit 1
fi
echo "the CMake package installs, and the examples build and run against it"
