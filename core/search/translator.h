// Text in, text out: tokenizes, batches by length, searches, restores input order, detokenizes.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/data/binary_dataset.h"
#include "core/data/tokenizers.h"
#include "core/data/translation_input.h"
#include "core/search/search.h"

namespace nmtzoo {

class EncoderDecoder;
class Int8Linears;
class Shortlist;

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
  DecodeDtype dtype = DecodeDtype::kFloat32;  // of the matrix products
  // A lexical shortlist (shortlist.h): each batch is decoded over its sentences' top_k candidates
  // per source token, the `frequent` most frequent target tokens and any prefix tokens. Not used
  // for sampling or constrained decoding, which need the whole vocabulary. The Translator loads
  // `shortlist_path` when `shortlist` is null.
  std::string shortlist_path;
  std::shared_ptr<const Shortlist> shortlist;
  int64_t shortlist_top_k = 10;
  int64_t shortlist_frequent = 100;

  // The search, batch size, dtype and shortlist of a config's decoding section; throws
  // std::invalid_argument when decoding.bf16 contradicts decoding.dtype.
  static TranslatorOptions from(const DecodeConfig& config);
};

class Translator {
 public:
  // With dtype int8, `int8` holds the model's packed int8 weights (a server keeps one per model
  // across calls); null: the Translator packs its own. Throws std::runtime_error when int8 cannot
  // run here (not a CPU, no quantized engine).
  Translator(EncoderDecoder& model, Tokenizers tokenizers, TranslatorOptions options,
             c10::Device device, Int8Linears* int8 = nullptr);
  ~Translator();

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
  // Target tokens a batch was decoded over, on average over the batches that used the shortlist
  // so far; 0 when none did.
  double mean_shortlist_size() const;

 private:
  std::vector<int64_t> target_ids(const std::string& text) const;
  // The batch's shortlist as a tensor on the device, or undefined for the whole vocabulary.
  at::Tensor batch_vocabulary(const std::vector<TokenSpan>& sources,
                              const std::vector<SentenceGuide>& guides);
  SentenceGuide guide(const TranslationRequest& request, int64_t line) const;

  EncoderDecoder& model_;
  Tokenizers tokenizers_;
  TranslatorOptions options_;
  c10::Device device_;
  std::function<void(int64_t)> progress_;
  std::unique_ptr<Int8Linears> own_int8_;
  Int8Linears* int8_ = nullptr;
  int64_t shortlisted_batches_ = 0;
  int64_t shortlisted_tokens_ = 0;
};

}  // namespace nmtzoo
