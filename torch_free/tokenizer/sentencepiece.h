// SPDX-License-Identifier: MIT
// SentencePiece training, encoding and decoding, isolated from LibTorch (see spm_shim.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "torch_free/common/tokenizer_choices.h"

struct NmtzooSpm;

namespace nmtzoo {

struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SentencePieceTrainOptions {
  std::string model_prefix;  // writes <prefix>.model and <prefix>.vocab
  SubwordModel model_type = SubwordModel::kBpe;
  int64_t vocab_size = 8000;
  double character_coverage = 1.0;
  int64_t input_sentence_size = 0;        // sample this many sentences; 0 = use all
  uint32_t seed = 1;                      // for sampling and unigram EM
  bool quiet = true;                      // silence SentencePiece's progress log
  std::vector<std::string> user_symbols;  // pieces kept whole, each one id (language tags)
};

// Supplies training sentences one at a time; returns false at the end of the corpus.
using SentenceSource = std::function<bool(std::string_view& sentence)>;

// Trains a model whose special ids are those of special_tokens.h.
void train_sentencepiece(const SentencePieceTrainOptions& options, const SentenceSource& source);

class SentencePiece {
 public:
  // Throws TokenizerError naming the file when it is missing, corrupt or has other special ids.
  static SentencePiece load(const std::string& model_path);
  // From the bytes of a .model file (e.g. embedded in a checkpoint); `name` is for messages.
  static SentencePiece from_serialized(std::string model, std::string name);

  SentencePiece(SentencePiece&&) noexcept;
  SentencePiece& operator=(SentencePiece&&) noexcept;
  ~SentencePiece();

  int64_t vocab_size() const { return vocab_size_; }
  const std::string& path() const { return path_; }  // or the name given to from_serialized
  const std::string& serialized() const { return serialized_; }  // the .model file's bytes
  std::vector<int32_t> encode(std::string_view text) const;
  // One sampled segmentation (subword regularization): BPE-dropout with probability `alpha` for a
  // BPE model, unigram sampling with smoothing `alpha` for a unigram model. A function of (text,
  // alpha, seed) only, whatever thread calls it and whatever was sampled before.
  std::vector<int32_t> sample_encode(std::string_view text, double alpha, uint64_t seed) const;
  std::vector<std::string> encode_pieces(std::string_view text) const;
  // Control ids (pad, bos, eos) decode to nothing.
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string piece(int64_t id) const;
  // The id of a piece of the vocabulary (a user symbol such as <2en>), or -1.
  int64_t piece_id(std::string_view piece) const;

 private:
  SentencePiece(NmtzooSpm* handle, std::string path, std::string serialized);
  NmtzooSpm* handle_ = nullptr;
  std::string path_;
  std::string serialized_;
  int64_t vocab_size_ = 0;
};

// Where the shim library was loaded from (for diagnostics); loads it if needed.
std::string sentencepiece_shim_path();

}  // namespace nmtzoo
