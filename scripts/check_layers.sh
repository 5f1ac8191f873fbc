#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the layering of the source tree: which folder may include which of nmtzoo's headers,
# which folders stay free of LibTorch, that no file of the training loop, the search, the server
# or the metrics grows past ~350 lines, and no app past ~300. Lowest layer first:
#
#   common/ tokenizer/ kernels/    plain data; the SentencePiece front end; CPU kernels
#   models/                        modules, EncoderDecoder, the architecture registry (its
#                                  registry and *_arch files torch-free: nmtzoo_common)
#   core/{io,metrics,plot,config,data}   torch-free except core/data/batch.*
#   core/runtime/                  device, threads, autocast, checkpoints, trained models
#   core/search/                   search and translation (no concrete model, no training)
#   core/train/                    training
#   core/serve/                    the server (decoding queue, HTTP API)
#   apps/                          programs
#   fuzz/                          fuzz targets of the torch-free parsers
#
#   scripts/check_layers.sh [SOURCE_ROOT]     exit status 1 and one line per violation
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

# folder -> the include prefixes its files may use (besides their own folder)
declare -A allowed=(
  [common]=""
  [tokenizer]="common/"
  [kernels]=""
  [models]="common/ kernels/ tokenizer/special_tokens.h"
  [core/io]=""
  [core/metrics]="core/io/"
  [core/plot]="core/io/"
  [core/config]="common/ core/io/"
  [core/data]="common/ core/config/ core/io/ tokenizer/"
  [core/runtime]="common/ core/config/ core/io/ core/data/ kernels/onednn_matmul.h models/ tokenizer/"
  [core/search]="common/ core/config/ core/io/ core/data/ core/plot/ core/runtime/ kernels/beam_candidates.h kernels/int8_linear.h kernels/kernels.h models/encoder_decoder.h models/registry.h tokenizer/"
  [core/serve]="common/ core/config/ core/io/ core/data/ core/plot/ core/runtime/ core/search/ kernels/int8_linear.h models/encoder_decoder.h models/registry.h tokenizer/"
  [core/train]="common/ core/config/ core/io/ core/data/ core/metrics/ core/plot/ core/runtime/ core/search/ kernels/fused_adam.h kernels/kernels.h kernels/onednn_matmul.h kernels/small_sgemm.h kernels/smoothed_cross_entropy.h models/encoder_decoder.h models/registry.h tokenizer/"
  [fuzz]="common/ core/config/ core/io/ core/metrics/ core/data/"
)
torch_free=(common tokenizer core/io core/metrics core/plot core/config core/data fuzz)
torch_free_exceptions="core/data/batch.h core/data/batch.cpp"
# models/ files compiled into the torch-free nmtzoo_common: TORCH_ARG's header alone, and only
# nmtzoo headers that are torch-free too.
registry_files="models/registry.h models/registry.cpp models/archs.h models/arch_options.h
  models/builtin_archs.cpp models/transformer_arch.cpp models/rnn_arch.cpp models/options/*.h"
registry_includes="common/ models/registry.h models/archs.h models/arch_options.h models/options/"
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

for folder in "${torch_free[@]}"; do
  for file in "$folder"/*.h "$folder"/*.cpp; do
    [[ -e "$file" ]] || continue
    [[ " $torch_free_exceptions " == *" $file "* ]] && continue
    if match=$(grep -nE '^#include <(torch|ATen|c10)/' "$file"); then
      report "$file:${match%%:*}: includes LibTorch, but $folder/ is torch-free"
    fi
  done
done

for file in $registry_files; do
  while IFS=: read -r line include; do
    ok=0
    for prefix in $registry_includes; do [[ "$include" == "$prefix"* ]] && ok=1 && break; done
    ((ok)) || report "$file:$line: includes \"$include\", but $file is in the torch-free nmtzoo_common"
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
  if match=$(grep -nE '^#include <(torch|ATen|c10)/' "$file" | grep -v '<torch/arg.h>'); then
    report "$file:${match%%:*}: includes LibTorch, but $file is in the torch-free nmtzoo_common"
  fi
done

for file in core/train/*.cpp core/train/*.h core/search/*.cpp core/search/*.h core/serve/*.cpp \
  core/serve/*.h core/metrics/*.cpp core/metrics/*.h; do
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
