#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs every system package nmtzoo needs from Debian's registry, then checks the BLAS in use.
# Idempotent: prints nothing and changes nothing when everything is already present.
# Usage: scripts/setup.sh [--with-python] [--with-fuzz] [--with-sacrebleu]
#   python3-numpy is always installed: a test checks nmtzoo's port of numpy's generator against it;
#   so are chromium, chromium-driver and python3-selenium: a test drives nmtzoo-serve's web page.
#   pybind11-dev, python3-dev and python3-torch are always installed: the Python package, and its
#   test of `import torch` beside it; nodejs, npm and two LibreTranslate clients from npm: a test
#   drives nmtzoo-serve through them. --with-python is kept for old callers; --with-fuzz adds clang and its libFuzzer
#   runtime, for scripts/fuzz.sh only; --with-sacrebleu adds what sacreBLEU imports, to run it from
#   its source in scripts/make_*goldens* (the goldens are committed; tests never run sacreBLEU).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  mold  # the linker (CMakeLists.txt): the build's link steps 29 s with ld.bfd, 6 s with mold
  libtorch-dev libopenblas0-openmp
  libsentencepiece-dev sentencepiece
  libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev libutf8proc-dev libgloo-dev libzip-dev
  wrk  # HTTP load in experiments/measure/serve_connections.sh
  time  # GNU time: peak RSS and page faults in experiments/measure/compare_builds_training.sh and large_corpora.sh
  libboost-dev libbrotli-dev  # the server's HTTP (Boost.Beast, Asio) and its request bodies' br coding
  libcpp-httplib-dev  # the tests' HTTP client
  libdnnl-dev
  # Debian's oneDNN is built with an OpenCL GPU runtime, so its CMake config (find_package(dnnl))
  # requires OpenCL's headers and library; libdnnl-dev only recommends them.
  ocl-icd-opencl-dev
  python3-numpy chromium chromium-driver python3-selenium
  pybind11-dev python3-dev python3-torch
  dpkg-dev lintian file  # cpack -G DEB (dpkg-shlibdeps, file) and tests/scripts/deb_package_test.sh
  protobuf-compiler python3-protobuf  # tests/tensorboard: event files read with TensorBoard's messages
  clang-format-14  # scripts/format.sh and Style.CxxIsFormatted: pinned, versions format differently
)
for option in "$@"; do
  case "$option" in
    --with-python) ;;
    --with-fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --with-sacrebleu)
      packages+=(python3-regex python3-tabulate python3-colorama python3-portalocker python3-lxml) ;;
    *) echo "setup.sh: unknown option '$option' (--with-python, --with-fuzz, --with-sacrebleu)" >&2
       exit 2 ;;
  esac
done

command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "setup.sh: need root or sudo to run: $*" >&2; exit 1; fi
}

if ((${#missing[@]})); then
  echo "setup.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq >/dev/null
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# LibreTranslate clients from npm for tests/serve/libretranslate_test.cpp, outside the work tree.
npm_dir=${NMTZOO_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nmtzoo/npm}
npm_clients=(libretranslate@1.0.1 libretranslate-ts@0.5.12)
npm_missing=0
for client in "${npm_clients[@]}"; do
  grep -qs "\"version\": \"${client##*@}\"" "$npm_dir/node_modules/${client%@*}/package.json" || npm_missing=1
done
if ((npm_missing)); then
  echo "setup.sh: installing ${npm_clients[*]} into $npm_dir" >&2
  npm install --prefix "$npm_dir" --save-exact --no-audit --no-fund --loglevel=error "${npm_clients[@]}" >/dev/null
fi

# LibTorch calls BLAS through the libblas.so.3 alternative; the reference BLAS is ~30x slower.
blas_alt=libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
active=$(update-alternatives --query "$blas_alt" 2>/dev/null | awk '/^Value:/ {print $2}')
if [[ "$active" != *openblas* ]]; then
  candidate=$(update-alternatives --list "$blas_alt" 2>/dev/null | grep openblas-openmp | head -1 || true)
  [[ -n "$candidate" ]] || { echo "setup.sh: no OpenBLAS alternative for $blas_alt (active: ${active:-none})" >&2; exit 1; }
  echo "setup.sh: switching $blas_alt from ${active:-none} to $candidate" >&2
  as_root update-alternatives --set "$blas_alt" "$candidate" >/dev/null
fi
