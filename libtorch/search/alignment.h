// SPDX-License-Identifier: MIT
// Word alignments from cross-attention (fairseq's --print-alignment, Marian's --alignment): each
// target subword is aligned to the source subword it attends to most, then subword positions are
// mapped to word positions (a SentencePiece piece starting with U+2581 starts a word) and the
// pairs printed Pharaoh-style, "i-j" = source word i, target word j, 0-based.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

using WordAlignment = std::vector<std::pair<int64_t, int64_t>>;  // (source word, target word)

// The word index of each piece: a piece starting with "▁" (or the first piece) opens a word.
std::vector<int64_t> word_of_piece(const std::vector<std::string>& pieces);

// attention (>= T, >= S): row t = target piece t's attention over the source pieces (further rows
// such as EOS's, and columns such as the source EOS and padding, are ignored). Sorted, unique.
WordAlignment hard_word_alignment(const at::Tensor& attention,
                                  const std::vector<std::string>& source_pieces,
                                  const std::vector<std::string>& target_pieces);

// "0-0 1-2 ..."
std::string pharaoh(const WordAlignment& alignment);

}  // namespace nmtzoo
