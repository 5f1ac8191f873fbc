#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the layering of the source tree: which folder may include which of nmtzoo's headers,
# that nothing under torch_free/ includes LibTorch, that no file of the training loop, the search,
# the server or the metrics grows past ~350 lines, and no app past ~300. The two top folders say
# what a layer needs: torch_free/ builds and runs without LibTorch (its libraries link none; the
# architectures' option structs use TORCH_ARG, whose header <torch/arg.h> is a macro alone),
# libtorch/ needs it. Lowest layer first:
#
#   torch_free/common/ tokenizer/   plain data, option values; the SentencePiece front end
#   torch_free/archs/               the architecture registry: each one's keys, checks, presets
#   torch_free/{io,metrics,plot,config,data}   files, the sacreBLEU replica, SVG, schema, corpora
#   libtorch/kernels/               CPU kernels
#   libtorch/models/                modules, EncoderDecoder, the architectures' builders
#   libtorch/runtime/               device, threads, autocast, batches, checkpoints, trained models
#   libtorch/search/                search and translation (no concrete model, no training)
#   libtorch/train/                 training
#   libtorch/serve/                 the server (decoding queue, HTTP API)
#   apps/                           programs
#   fuzz/                           fuzz targets of the torch-free parsers
#
#   scripts/check_layers.sh [SOURCE_ROOT]     exit status 1 and one line per violation
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

# folder -> the include prefixes its files may use (besides their own folder)
declare -A allowed=(
  [torch_free/common]=""
  [torch_free/tokenizer]="torch_free/common/"
  [torch_free/archs]="torch_free/common/"
  [torch_free/archs/options]="torch_free/common/"
  [torch_free/io]=""
  [torch_free/metrics]="torch_free/io/"
  [torch_free/plot]="torch_free/io/"
  [torch_free/config]="torch_free/common/ torch_free/io/"
  [torch_free/data]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/tokenizer/"
  [libtorch/kernels]=""
  [libtorch/models]="torch_free/common/ torch_free/archs/ libtorch/kernels/ torch_free/tokenizer/special_tokens.h"
  [libtorch/runtime]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/data/ torch_free/tokenizer/ torch_free/archs/ libtorch/kernels/onednn_matmul.h libtorch/models/"
  [libtorch/search]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/data/ torch_free/plot/ torch_free/tokenizer/ torch_free/archs/registry.h libtorch/runtime/ libtorch/kernels/beam_candidates.h libtorch/kernels/int8_linear.h libtorch/kernels/kernels.h libtorch/models/encoder_decoder.h"
  [libtorch/serve]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/data/ torch_free/plot/ torch_free/tokenizer/ torch_free/archs/registry.h libtorch/runtime/ libtorch/search/ libtorch/kernels/int8_linear.h libtorch/models/encoder_decoder.h"
  [libtorch/train]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/data/ torch_free/metrics/ torch_free/plot/ torch_free/tokenizer/ torch_free/archs/registry.h libtorch/runtime/ libtorch/search/ libtorch/kernels/fused_adam.h libtorch/kernels/kernels.h libtorch/kernels/onednn_matmul.h libtorch/kernels/small_sgemm.h libtorch/kernels/smoothed_cross_entropy.h libtorch/models/encoder_decoder.h"
  [fuzz]="torch_free/common/ torch_free/config/ torch_free/io/ torch_free/metrics/ torch_free/data/"
)
max_lines=350
max_app_lines=300

problems=0
report() { echo "$1"; problems=$((problems + 1)); }

for folder in "${!allowed[@]}"; do
  [[ -d "$folder" ]] || { report "$folder: missing folder (update scripts/check_layers.sh)"; continue; }
  for file in "$folder"/*.h "$folder"/*.cpp; do
    [[ -e "$file" ]] || continue
    while IFS=: read -r line include; do
      [[ "$include" == "$folder/"* ]] && continue
      ok=0
      for prefix in ${allowed[$folder]}; do
        [[ "$include" == "$prefix"* ]] && ok=1 && break
      done
      ((ok)) || report "$file:$line: includes \"$include\", which $folder/ may not (scripts/check_layers.sh)"
    done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
  done
done

while read -r file; do
  if match=$(grep -nE '^#include <(torch|ATen|c10)/' "$file" | grep -v '<torch/arg.h>'); then
    report "$file:${match%%:*}: includes LibTorch, but it is under a torch-free folder"
  fi
done < <(find torch_free fuzz -name '*.h' -o -name '*.cpp')
if match=$(grep -rlE '^#include <torch/arg.h>' torch_free fuzz | grep -v '^torch_free/archs/'); then
  report "$match: includes <torch/arg.h>, which only torch_free/archs/ may (TORCH_ARG of the options)"
fi

for file in libtorch/train/*.cpp libtorch/train/*.h libtorch/search/*.cpp libtorch/search/*.h libtorch/serve/*.cpp \
  libtorch/serve/*.h torch_free/metrics/*.cpp torch_free/metrics/*.h; do
  lines=$(wc -l <"$file")
  ((lines <= max_lines)) || report "$file: $lines lines; split it by concept (limit $max_lines)"
done
# An app parses its command line and calls the library; what it does beyond that belongs there.
for file in apps/*.cpp; do
  lines=$(wc -l <"$file")
  ((lines <= max_app_lines)) || report "$file: $lines lines; move its work into the library (limit $max_app_lines)"
done

if ((problems)); then
  echo "check_layers: $problems problem(s)"
  exit 1
fi
echo "check_layers: the includes follow the layering"
