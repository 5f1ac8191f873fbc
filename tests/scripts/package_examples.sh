# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154
# Sourced by tests/scripts/cmake_package_test.sh and deb_package_test.sh: the checks' output
# helpers, and the part both share, building and running examples/cpp/ against an installed
# nmtzoo (a `cmake --install` prefix, or the /usr of an unpacked Debian package):
#   build_and_run_examples PREFIX LIBDIR SHIM
# PREFIX holds bin/nmtzoo-*, include/nmtzoo/ and LIBDIR/cmake/nmtzoo/; SHIM is the SentencePiece
# shim the examples must load (LIBDIR/nmtzoo/libnmtzoo_spm.so). It copies examples/cpp/ out of the
# source tree, adds one translation unit of every header under PREFIX/include/nmtzoo, configures
# them with find_package(nmtzoo) from PREFIX, builds them (training a tiny checkpoint with
# PREFIX/bin/nmtzoo-train meanwhile, unless $checkpoint names one) and runs them:
# translate_batch translates as PREFIX/bin/nmtzoo-translate does, its libraries resolved in LIBDIR;
# custom_architecture registers, trains and translates with an architecture of its own.
# The caller sets project (the source tree), scratch (an empty scratch folder), sanitize (the
# -fsanitize= list of the build, or empty) and checkpoint (a checkpoint, or empty), and exits 1
# when $failures is not 0 at the end.
#   parse_package_test_args "$@"
# reads a package test's arguments (PROJECT_ROOT BUILD_DIR [--checkpoint CKPT] [--sanitize=LIST]
# [--keep]) into project, build, checkpoint, sanitize and keep, or prints the caller's usage (its
# header comment) and exits 2.
source "$(dirname "${BASH_SOURCE[0]}")/tiny_checkpoint.sh"

parse_package_test_args() {
  if [[ $# -lt 2 ]]; then
    sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
  fi
  project="$(cd "$1" && pwd)"
  build="$(cd "$2" && pwd)"
  shift 2
  checkpoint=""
  sanitize=""
  keep=0
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --checkpoint) checkpoint="$(realpath "$2")"; shift 2 ;;
      --sanitize) sanitize="$2"; shift 2 ;;
      --sanitize=*) sanitize="${1#--sanitize=}"; shift ;;
      --keep) keep=1; shift ;;
      *) echo "$(basename "$0"): unknown argument '$1'" >&2; exit 2 ;;
    esac
  done
}

failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
check() {  # DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}
run_logged() {  # LOG COMMAND...: its output into LOG; when it fails, the end of LOG, and stop
  local log="$1"
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "FAILED: $*; the end of $log:" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}
dynamic() { readelf -d "$1" 2>/dev/null || true; }  # FILE: its dynamic section, or nothing
runpath() { dynamic "$1" | sed -nE 's/.*\((RUNPATH|RPATH)\).*\[(.*)\]/\2/p'; }

build_and_run_examples() {  # PREFIX LIBDIR SHIM
  local prefix="$1" libdir="$2" shim="$3"
  local installed cmake_flags programs program train_pid data build_pids i translate_batch \
    unresolved steps custom ckpt
  installed="$(cd "$prefix/include/nmtzoo" && find . -type f | sed 's|^\./||' | sort)"

  # The examples, out of the source tree, and one translation unit of every public header.
  cp -r "$project/examples/cpp" "$scratch/src"
  mkdir -p "$scratch/src/all_headers"
  {
    echo "// Every public header of the installed nmtzoo in one translation unit."
    sed 's/.*/#include "&"/' <<<"$installed"
  } >"$scratch/src/all_headers/all_headers.cpp"
  cat >"$scratch/src/all_headers/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(nmtzoo_all_headers LANGUAGES CXX)
find_package(nmtzoo 0.1 REQUIRED COMPONENTS common io metrics base kernels models inference train serve)
add_library(all_headers OBJECT all_headers.cpp)
target_link_libraries(all_headers PRIVATE nmtzoo::train nmtzoo::serve)
EOF
  cmake_flags=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
  command -v ninja >/dev/null && cmake_flags+=(-G Ninja)
  if [[ -n "$sanitize" ]]; then
    cmake_flags+=("-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize -fno-omit-frame-pointer"
                  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize")
  fi
  programs=(translate_batch custom_architecture all_headers)
  for program in "${programs[@]}"; do
    run_logged "$scratch/$program.configure.log" \
      cmake -S "$scratch/src/$program" -B "$scratch/build/$program" "${cmake_flags[@]}"
  done
  ok "the examples configure with find_package(nmtzoo) from the prefix"

  # While they build: a checkpoint for translate_batch, by the installed nmtzoo-train.
  train_pid=""
  if [[ -z "$checkpoint" ]]; then
    train_tiny_checkpoint "$prefix/bin/nmtzoo-train" "$scratch" 1 30 &
    train_pid=$!
    checkpoint="$scratch/tiny-run/checkpoints/checkpoint_last.pt"
  fi

  build_pids=()
  for program in "${programs[@]}"; do
    cmake --build "$scratch/build/$program" >"$scratch/$program.build.log" 2>&1 &
    build_pids+=($!)
  done
  for i in "${!programs[@]}"; do
    if ! wait "${build_pids[$i]}"; then
      echo "FAILED: building ${programs[$i]} against the prefix; the end of its log:" >&2
      tail -n 60 "$scratch/${programs[$i]}.build.log" >&2
      exit 1
    fi
  done
  ok "translate_batch, custom_architecture and every public header compile against the prefix"
  for program in "${programs[@]}"; do
    if grep -qF -- "$project/" "$scratch/build/$program/compile_commands.json"; then
      fail "$program: compiled without a path into the source tree"
    fi
  done
  if [[ -n "$train_pid" ]] && ! wait "$train_pid"; then
    echo "FAILED: the installed nmtzoo-train; the end of its log:" >&2
    tail -n 40 "$scratch/train.log" >&2
    exit 1
  fi

  # translate_batch: the installed libraries, the shim beside them, nmtzoo-translate's output.
  translate_batch="$scratch/build/translate_batch/translate_batch"
  unresolved="$(ldd "$translate_batch" 2>&1 | grep 'libnmtzoo_' | grep -vF "=> $libdir/" || true)"
  check "translate_batch loads every libnmtzoo_* from the prefix" test -z "$unresolved"
  check "translate_batch links the shared libnmtzoo_inference" \
    grep -q 'NEEDED.*libnmtzoo_inference\.so\.' <<<"$(dynamic "$translate_batch")"
  printf '%s\n' "alpha bravo charlie" "delta echo foxtrot golf" "hotel india" \
    "juliet alpha bravo charlie delta" >"$scratch/input.txt"
  if "$translate_batch" "$checkpoint" --beam 3 --threads 1 <"$scratch/input.txt" \
    >"$scratch/example.out" 2>"$scratch/example.err"; then
    ok "translate_batch translated $(wc -l <"$scratch/example.out") lines"
    check "translate_batch loaded the shim beside the installed libraries" \
      grep -qxF "SentencePiece shim: $(realpath "$shim")" "$scratch/example.err"
    if "$prefix/bin/nmtzoo-translate" -c "$checkpoint" --beam 3 --nbest 1 --threads 1 -q \
      -i "$scratch/input.txt" -o "$scratch/app.out" 2>"$scratch/app.err"; then
      check "translate_batch's translations are the installed nmtzoo-translate's" \
        cmp "$scratch/example.out" "$scratch/app.out"
    else
      fail "the installed nmtzoo-translate: $(tail -n 5 "$scratch/app.err")"
    fi
  else
    fail "translate_batch: $(tail -n 20 "$scratch/example.err")"
  fi

  # custom_architecture: a new architecture and key, trained by the library, then translating.
  steps=12
  custom="$scratch/custom-run"
  if "$scratch/build/custom_architecture/custom_architecture" "$custom" --steps "$steps" \
    >"$scratch/custom.out" 2>"$scratch/custom.err"; then
    ok "custom_architecture ran"
    check "its preset filled its own key" \
      grep -qF "architecture compact_transformer: model.width 32 (preset compact_transformer_tiny)" "$scratch/custom.out"
    check "it trained $steps updates" grep -qE "parameters for $steps updates" "$scratch/custom.out"
    check "it translated with the checkpoint it wrote" \
      test "$(grep -c ' -> ' "$scratch/custom.out")" -eq 3
    ckpt="$custom/run/checkpoints/checkpoint_last.pt"
    if [[ -f "$ckpt" ]]; then
      if echo "alpha bravo" | "$prefix/bin/nmtzoo-translate" -c "$ckpt" -q >/dev/null 2>"$scratch/refused.err"; then
        fail "nmtzoo-translate, which lacks compact_transformer, refuses its checkpoint"
      else
        # Its config fails to load first (unknown model keys) or its architecture is unknown.
        check "nmtzoo-translate, which lacks compact_transformer, refuses its checkpoint, naming its key or architecture" \
          grep -qE "compact_transformer|model\.(width|ffn_multiple|head_dim)" "$scratch/refused.err"
      fi
    else
      fail "custom_architecture wrote $ckpt"
    fi
  else
    fail "custom_architecture: $(tail -n 20 "$scratch/custom.err")"
  fi
  cat "$scratch/custom.out"
}
