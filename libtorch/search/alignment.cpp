// SPDX-License-Identifier: MIT
#include "libtorch/search/alignment.h"

#include <torch/torch.h>

#include <algorithm>

namespace nmtzoo {

std::vector<int64_t> word_of_piece(const std::vector<std::string>& pieces) {
  static const std::string kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's space
  std::vector<int64_t> words;
  int64_t word = -1;
  for (const auto& piece : pieces) {
    if (word < 0 || piece.compare(0, kWordStart.size(), kWordStart) == 0) ++word;
    words.push_back(word);
  }
  return words;
}

WordAlignment hard_word_alignment(const at::Tensor& attention,
                                  const std::vector<std::string>& source_pieces,
                                  const std::vector<std::string>& target_pieces) {
  const auto T = static_cast<int64_t>(target_pieces.size());
  const auto S = static_cast<int64_t>(source_pieces.size());
  if (T == 0 || S == 0) return {};
  TORCH_CHECK(attention.size(0) >= T && attention.size(1) >= S, "attention ", attention.sizes(),
              " does not cover ", T, " target and ", S, " source pieces");
  at::Tensor best = attention.narrow(0, 0, T)
                        .narrow(1, 0, S)
                        .argmax(1)
                        .to(torch::kCPU, torch::kLong)
                        .contiguous();
  const std::vector<int64_t> source_words = word_of_piece(source_pieces);
  const std::vector<int64_t> target_words = word_of_piece(target_pieces);
  WordAlignment pairs;
  const int64_t* source = best.data_ptr<int64_t>();
  for (int64_t t = 0; t < T; ++t) {
    pairs.emplace_back(source_words[static_cast<size_t>(source[t])],
                       target_words[static_cast<size_t>(t)]);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

std::string pharaoh(const WordAlignment& alignment) {
  std::string text;
  for (const auto& [source, target] : alignment) {
    if (!text.empty()) text += ' ';
    text += std::to_string(source) + '-' + std::to_string(target);
  }
  return text;
}

}  // namespace nmtzoo
