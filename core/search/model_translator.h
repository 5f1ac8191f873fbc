// Text in, text out with a model the caller holds (training's validation, tests, the Translator
// of translator.h): tokenizes, batches by length, searches, restores input order, detokenizes.
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

// Throws std::runtime_error saying why `dtype` cannot decode on `device` (int8: not a CPU, or no
// quantized engine).
void check_dtype_runs(DecodeDtype dtype, const c10::Device& device);

class ModelTranslator {
 public:
  // `options` are the search's and the batching's (decoding.batch_tokens), the number format
  // (decoding.dtype) and the lexical shortlist (decoding.shortlist): each batch is then decoded
  // over its sentences' shortlist_top_k candidates per source token, the shortlist_frequent most
  // frequent target tokens and any prefix tokens; not for sampling or constrained decoding, which
  // need the whole vocabulary. `shortlist`: the loaded decoding.shortlist, or null to load it here.
  // With dtype int8, `int8` holds the model's packed int8 weights (kept across calls by whoever
  // translates again); null: this object packs its own. Throws std::runtime_error when int8
  // cannot run here (not a CPU, no quantized engine).
  ModelTranslator(EncoderDecoder& model, Tokenizers tokenizers, SearchOptions options,
                  c10::Device device, Int8Linears* int8 = nullptr,
                  std::shared_ptr<const Shortlist> shortlist = nullptr);
  ~ModelTranslator();

  // One Translation per input sentence, in input order. Empty sentences give empty
  // translations; sentences longer than the model accepts are truncated (Translation::truncated).
  // `first_line`: the input line of the first sentence, which with the rest seeds sampling.
  std::vector<Translation> translate(const std::vector<std::string>& sentences, int64_t first_line = 1);
  // Throws std::invalid_argument naming the line when a prefix or constraint is unusable.
  std::vector<Translation> translate(const std::vector<TranslationRequest>& requests,
                                     int64_t first_line = 1);

  // Called after each batch with the number of this call's sentences translated so far.
  void on_progress(std::function<void(int64_t)> callback) { progress_ = std::move(callback); }

  const SearchOptions& options() const { return options_; }
  int64_t max_source_tokens() const;  // subword tokens kept, EOS excluded
  // Batches decoded over the shortlist, and the target tokens they were decoded over in all.
  int64_t shortlisted_batches() const { return shortlisted_batches_; }
  int64_t shortlisted_tokens() const { return shortlisted_tokens_; }

 private:
  std::vector<int64_t> target_ids(const std::string& text) const;
  // The batch's shortlist as a tensor on the device, or undefined for the whole vocabulary.
  at::Tensor batch_vocabulary(const std::vector<TokenSpan>& sources,
                              const std::vector<SentenceGuide>& guides);
  SentenceGuide guide(const TranslationRequest& request, int64_t line) const;

  EncoderDecoder& model_;
  Tokenizers tokenizers_;
  SearchOptions options_;
  std::shared_ptr<const Shortlist> shortlist_;
  c10::Device device_;
  std::function<void(int64_t)> progress_;
  std::unique_ptr<Int8Linears> own_int8_;
  Int8Linears* int8_ = nullptr;
  int64_t shortlisted_batches_ = 0;
  int64_t shortlisted_tokens_ = 0;
};

}  // namespace nmtzoo
