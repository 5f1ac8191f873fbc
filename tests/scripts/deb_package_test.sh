#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package (docs/package.md#debian-package) as a user meets it: runs cpack -G DEB on a
# build's CPack configuration (cmake/debian_package.cmake), its scratch files in a temporary
# folder (cpack -B), then checks the package:
#   - it is nmtzoo_<version>_<arch>.deb, its control fields (Depends from dpkg-shlibdeps with
#     LibTorch and, through the SentencePiece shim, libsentencepiece0; python3), its shlibs file
#     naming the nine libraries and its ldconfig trigger;
#   - lintian reports no error (its warnings are printed; docs/package.md says why each stays);
#   - it holds, all under /usr, every app the build made, the nine versioned libraries, the shim,
#     the public headers, the CMake package files, the copyright file and a changelog whose
#     version is the package's, and the Python module when the build installs one;
# then unpacks it with dpkg-deb -x into a temporary root and, with nothing of the build in view:
#   - runs nmtzoo-config --reference from the root, ldd showing every libnmtzoo_* in the root;
#   - holds what `cmake --install` puts in a prefix, file for file: the same paths and links, the
#     same bytes but for the stripped ELF files, whose dynamic sections and exported symbols are
#     the same; so the examples Scripts.CMakePackageBuildsTheExamples builds and runs against that
#     prefix hold for the package (building them twice cost the suite ~30 s);
#   - imports the Python module from <root>/usr/lib/python3/dist-packages with /usr/bin/python3.
# Nothing is installed on the system and the build folder gets nothing but CPack's install
# manifest (install_manifest.txt), as with `cmake --install`.
#
#   tests/scripts/deb_package_test.sh PROJECT_ROOT BUILD_DIR [--keep]
#
# Exit status 77 (skipped) when dpkg-deb, dpkg-shlibdeps or lintian is missing, 1 instead under
# NMTZOO_REQUIRE_ALL=1 (scripts/setup.sh installs them: dpkg-dev, lintian); 1 when anything failed.
set -euo pipefail
# ok, fail, check, run_logged, dynamic, runpath and parse_package_test_args.
source "$(dirname "${BASH_SOURCE[0]}")/package_examples.sh"
parse_package_test_args "$@"

missing_tools=()
for tool in cpack dpkg-deb dpkg-shlibdeps dpkg-parsechangelog lintian file readelf; do
  command -v "$tool" >/dev/null || missing_tools+=("$tool")
done
if ((${#missing_tools[@]})); then
  if [[ "${NMTZOO_REQUIRE_ALL:-}" == 1 ]]; then
    echo "FAILED: missing ${missing_tools[*]} (NMTZOO_REQUIRE_ALL=1; scripts/setup.sh installs them)" >&2
    exit 1
  fi
  echo "skipped: missing ${missing_tools[*]} (scripts/setup.sh installs them)"
  exit 77
fi
cpack_config="$build/CPackConfig.cmake"
if [[ ! -f "$cpack_config" ]]; then
  echo "FAILED: no $cpack_config: does CMakeLists.txt include cmake/debian_package.cmake?" >&2
  exit 1
fi

scratch="$(mktemp -d)"
if ((keep)); then echo "scratch folder: $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi
# Everything must come from the package, not from this environment or the build.
unset NMTZOO_SPM_SHIM LD_LIBRARY_PATH CMAKE_PREFIX_PATH PYTHONPATH

# The package.
run_logged "$scratch/cpack.log" cpack --config "$cpack_config" -G DEB -B "$scratch/cpack"
version="$(sed -nE 's/^set\(CPACK_PACKAGE_VERSION "(.*)"\)$/\1/p' "$cpack_config")"
arch="$(dpkg --print-architecture)"
deb="$scratch/cpack/nmtzoo_${version}_${arch}.deb"
if [[ ! -f "$deb" ]]; then
  echo "FAILED: cpack made no nmtzoo_${version}_${arch}.deb; it made:" >&2
  ls "$scratch/cpack" >&2
  exit 1
fi
ok "cpack made $(basename "$deb") ($(du -h "$deb" | cut -f1))"

field() { dpkg-deb -f "$deb" "$1"; }
check "Package: nmtzoo" test "$(field Package)" = nmtzoo
check "Version: $version" test "$(field Version)" = "$version"
check "Architecture: $arch" test "$(field Architecture)" = "$arch"
for f in Maintainer Section Priority Description; do
  check "a $f field" test -n "$(field "$f")"
done
depends="$(field Depends)"
echo "Depends: $depends"
# libtorch<soversion>: dpkg-shlibdeps read the libraries; libsentencepiece0: it read the shim,
# which no binary links (dlmopen).
for package in 'libtorch[0-9.]+' libsentencepiece0 libc6; do
  check "Depends names $package" grep -qE "(^|, )$package( |,|$)" <<<"$depends"
done
control="$scratch/control"
dpkg-deb -e "$deb" "$control"
layers=(common io metrics base kernels models inference train serve)
for layer in "${layers[@]}"; do
  check "DEBIAN/shlibs declares libnmtzoo_$layer" \
    grep -qE "^libnmtzoo_$layer [0-9.]+ nmtzoo \(>= $version\)$" "$control/shlibs"
done
check "DEBIAN/triggers activates ldconfig" grep -qx 'activate-noawait ldconfig' "$control/triggers"

# lintian: no error; the warnings are shown (docs/package.md lists the expected ones).
# Its exit status: 0, or 2 when it found errors; anything else means it could not check.
lintian_status=0
lintian "$deb" >"$scratch/lintian.log" 2>&1 || lintian_status=$?
grep -E '^[EWIP]: ' "$scratch/lintian.log" | sed 's/^/  lintian: /' || true
if [[ $lintian_status -ne 0 && $lintian_status -ne 2 ]]; then
  fail "lintian ran (exit status $lintian_status): $(tail -n 5 "$scratch/lintian.log")"
fi
errors="$(grep -c '^E: ' "$scratch/lintian.log" || true)"
check "lintian reports no error ($(grep -c '^W: ' "$scratch/lintian.log" || true) warnings)" \
  test "$errors" -eq 0

# What it holds.
dpkg-deb -c "$deb" >"$scratch/contents.txt"
paths="$(awk '{ print $6 }' "$scratch/contents.txt" | sed 's|^\./||; s|/$||')"
outside="$(grep -vE '^(usr(/.*)?)?$' <<<"$paths" || true)"
check "everything is under /usr" test -z "$outside"
has() { grep -qxF "$1" <<<"$paths"; }
apps=0
for app in "$build"/bin/nmtzoo-*; do
  [[ -x "$app" && ! -d "$app" ]] || continue
  apps=$((apps + 1))
  has "usr/bin/$(basename "$app")" || fail "usr/bin/$(basename "$app") is in the package"
done
ok "checked the $apps apps of $build/bin are in usr/bin"
common="$(grep -E '^usr/lib/.*libnmtzoo_common\.so\.[0-9.]+$' <<<"$paths" | head -n 1 || true)"
if [[ -z "$common" ]]; then
  echo "FAILED: no usr/<libdir>/libnmtzoo_common.so.<version> in the package" >&2
  exit 1
fi
libdir_rel="$(dirname "$common")"
echo "libraries in /$libdir_rel"
for layer in "${layers[@]}"; do
  check "$libdir_rel/libnmtzoo_$layer.so and its soname link" \
    grep -qE "^$libdir_rel/libnmtzoo_$layer\.so\.[0-9]+(\.[0-9]+)?$" <<<"$paths"
done
for file in "$libdir_rel/nmtzoo/libnmtzoo_spm.so" \
  "$libdir_rel/cmake/nmtzoo/nmtzooConfig.cmake" \
  "$libdir_rel/cmake/nmtzoo/nmtzooConfigVersion.cmake" \
  "$libdir_rel/cmake/nmtzoo/nmtzooTargets.cmake" \
  usr/include/nmtzoo/libtorch/search/translator.h usr/include/nmtzoo/torch_free/archs/registry.h \
  usr/share/doc/nmtzoo/copyright usr/share/doc/nmtzoo/changelog.gz; do
  check "$file" has "$file"
done
check "usr/include/nmtzoo holds no private header (torch_free/tokenizer/spm_shim.h)" \
  test -z "$(grep -F usr/include/nmtzoo/torch_free/tokenizer/spm_shim.h <<<"$paths" || true)"
python_module=0
if grep -rqF 'python3/dist-packages' --include=cmake_install.cmake "$build" 2>/dev/null; then
  python_module=1
  check "usr/lib/python3/dist-packages/nmtzoo/__init__.py" \
    has usr/lib/python3/dist-packages/nmtzoo/__init__.py
  # The extension is built for one Python 3.X: Depends bounds python3 to it.
  check "Depends names python3 (>= 3.X~), python3 (<< 3.X+1)" \
    grep -qE "(^|, )python3 \(>= 3\.[0-9]+~\), python3 \(<< 3\.[0-9]+\)" <<<"$depends"
else
  echo "note: the build installs no Python module (no python3/dist-packages in its install scripts)"
fi

# Unpacked, with nothing of the build in view.
root="$scratch/root"
dpkg-deb -x "$deb" "$root"
libdir="$root/$libdir_rel"
prefix="$root/usr"
check "the copyright file licenses every file under Expat (MIT), in Debian's machine-readable format" \
  grep -qzE 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/.*Files: \*.*License: Expat' \
  "$root/usr/share/doc/nmtzoo/copyright"
check "lintian has nothing to say of the copyright file" \
  test -z "$(grep -E '^[EW]: .*copyright' "$scratch/lintian.log" || true)"
zcat "$root/usr/share/doc/nmtzoo/changelog.gz" >"$scratch/changelog"
check "the changelog's latest entry is version $version" \
  test "$(dpkg-parsechangelog -l "$scratch/changelog" -S Version)" = "$version"
leaks="$(grep -rlF -e "$build" -e "$project/" "$libdir/cmake" "$root/usr/include" \
  "$root/usr/lib/python3" 2>/dev/null || true)"
check "the CMake files, headers and Python module name no build or source folder" test -z "$leaks"
unstripped="$(find "$root" -type f -exec file {} + | grep -E 'ELF.*not stripped' || true)"
check "every ELF file is stripped" test -z "$unstripped"

unresolved="$(LD_LIBRARY_PATH="$libdir" ldd "$root/usr/bin/nmtzoo-config" 2>&1 |
  grep -E 'libnmtzoo_|not found' | grep -vF "=> $libdir/" || true)"
check "nmtzoo-config loads every libnmtzoo_* from the unpacked package" test -z "$unresolved"
if LD_LIBRARY_PATH="$libdir" "$root/usr/bin/nmtzoo-config" --reference \
  >"$scratch/reference.md" 2>"$scratch/reference.err"; then
  check "nmtzoo-config --reference prints the key reference" \
    grep -q '^| `arch` |' "$scratch/reference.md"
else
  fail "nmtzoo-config --reference: $(tail -n 10 "$scratch/reference.err")"
fi

# The unpacked package against what `cmake --install` puts in a prefix.
installed="$scratch/prefix"
run_logged "$scratch/install.log" cmake --install "$build" --prefix "$installed"
tree() { (cd "$1" && find . -mindepth 1 -printf '%y %p\n' | sort); }
check "the package holds the paths, types and nothing else of a cmake --install prefix" \
  diff <(tree "$installed") <(tree "$prefix")
elf_face() {  # ELF: what a program linking or loading it sees (stripping keeps it)
  dynamic "$1" | grep -vE '^ *0x[0-9a-f]+ \((GNU_HASH|STRTAB|SYMTAB|STRSZ|VERSYM|VERNEED|VERDEF|RELA|JMPREL|PLTGOT|INIT|FINI|INIT_ARRAY|FINI_ARRAY)\)'
  nm -D --defined-only "$1" | awk '{ print $2, $3 }'
}
differing=()
while IFS= read -r file; do
  if [[ -L "$installed/$file" ]]; then
    [[ "$(readlink "$installed/$file")" == "$(readlink "$prefix/$file")" ]] || differing+=("$file (link)")
  elif ! cmp -s "$installed/$file" "$prefix/$file"; then
    if [[ "$(head -c 4 "$installed/$file")" == $'\x7fELF' ]]; then
      cmp -s <(elf_face "$installed/$file") <(elf_face "$prefix/$file") || differing+=("$file (ELF)")
    else
      differing+=("$file")
    fi
  fi
done < <(cd "$installed" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
check "each file is the prefix's: links and bytes, ELF files their dynamic section and symbols" \
  test "${#differing[@]}" -eq 0
((${#differing[@]} == 0)) || printf '  differs: %s\n' "${differing[@]}" >&2

# The Python module, from the unpacked package only.
if ((python_module)); then
  if [[ -x /usr/bin/python3 ]]; then
    site="$root/usr/lib/python3/dist-packages"
    if LD_LIBRARY_PATH="$libdir" /usr/bin/python3 -s -c \
      'import sys; sys.path.insert(0, sys.argv[1]); import nmtzoo; print(nmtzoo.__file__)' \
      "$site" >"$scratch/python.out" 2>"$scratch/python.err"; then
      check "/usr/bin/python3 imports nmtzoo from the unpacked package ($(cat "$scratch/python.out"))" \
        grep -qF "$site/nmtzoo/" "$scratch/python.out"
    else
      fail "import nmtzoo: $(tail -n 10 "$scratch/python.err")"
    fi
  elif [[ "${NMTZOO_REQUIRE_ALL:-}" == 1 ]]; then
    fail "no /usr/bin/python3 to import the module with (NMTZOO_REQUIRE_ALL=1)"
  else
    echo "note: no /usr/bin/python3, the module's import is not checked"
  fi
fi

echo "$SECONDS s"
if ((failures)); then
  echo "$failures failed ($( ((keep)) && echo "logs in $scratch" || echo "--keep keeps the logs"))" >&2
  exit 1
fi
echo "the Debian package builds, lintian finds no error, and it works unpacked"
