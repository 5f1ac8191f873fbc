// Text in, text out: tokenizes, batches by length, searches, restores input order, detokenizes.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/data/tokenizers.h"
#include "core/data/translation_input.h"
#include "core/search/search.h"

namespace nmtzoo {

class EncoderDecoder;

struct Translation {
  std::vector<Hypothesis> nbest;          // best first; empty for an empty input line
  std::vector<std::string> texts;         // detokenized hypotheses, as nbest
  std::vector<std::string> source_pieces; // the source as the model saw it (for plots)
  bool truncated = false;                 // the source was cut to the model's length limit
  int64_t source_tokens = 0;
};

struct TranslatorOptions {
  SearchOptions search;
  int64_t batch_tokens = 4096;  // padded source tokens per batch (x beam for beam search)
  bool bf16 = false;            // CPU bfloat16 autocast for the matrix products

  // The search, batch size and bf16 choice of a config's decoding section.
  static TranslatorOptions from(const DecodeConfig& config);
};

class Translator {
 public:
  Translator(EncoderDecoder& model, Tokenizers tokenizers, TranslatorOptions options,
             c10::Device device);

  // One Translation per input sentence, in input order. Empty sentences give empty
  // translations; sentences longer than the model accepts are truncated (Translation::truncated).
  // `first_line`: the input line of the first sentence, which with the rest seeds sampling.
  std::vector<Translation> translate(const std::vector<std::string>& sentences, int64_t first_line = 1);
  // Throws std::invalid_argument naming the line when a prefix or constraint is unusable.
  std::vector<Translation> translate(const std::vector<TranslationRequest>& requests,
                                     int64_t first_line = 1);

  // Called after each batch with the number of this call's sentences translated so far.
  void on_progress(std::function<void(int64_t)> callback) { progress_ = std::move(callback); }

  const TranslatorOptions& options() const { return options_; }
  int64_t max_source_tokens() const;  // subword tokens kept, EOS excluded

 private:
  std::vector<int64_t> target_ids(const std::string& text) const;
  SentenceGuide guide(const TranslationRequest& request, int64_t line) const;

  EncoderDecoder& model_;
  Tokenizers tokenizers_;
  TranslatorOptions options_;
  c10::Device device_;
  std::function<void(int64_t)> progress_;
};

}  // namespace nmtzoo
