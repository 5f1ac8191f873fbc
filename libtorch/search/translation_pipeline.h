// SPDX-License-Identifier: MIT
// Text in, text out with a model the caller holds (training's validation, tests, the Translator
// of translator.h): tokenizes, batches by length, searches, restores input order, detokenizes.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "libtorch/search/search.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/tokenizers.h"
#include "torch_free/data/translation_input.h"

namespace nmtzoo {

class EncoderDecoder;
class Int8Linears;
class Shortlist;

struct Translation {
  std::vector<Hypothesis> nbest;           // best first; empty for an empty input line
  std::vector<std::string> texts;          // detokenized hypotheses, as nbest
  std::vector<std::string> source_pieces;  // the source as the model saw it, then "</s>"
  bool truncated = false;                  // the source was cut to the model's length limit
  int64_t source_tokens = 0;
  // The search's output length limit for this sentence, in tokens (output_length_limits); 0 for
  // an empty input line, which is not searched.
  int64_t length_limit = 0;
  bool min_len_lowered = false;  // decoding.min_len was above length_limit and was lowered to it
  bool empty_by_limit = false;   // searched, yet no hypothesis could end within the limits: empty
};

// What a limit did to a translation, in words, without its line ("" when nothing): min_len
// lowered to the sentence's length limit, or an output the limits left empty. For the callers'
// warnings (nmtzoo-translate's stderr, the JSON's "warnings").
std::string min_len_warning(const Translation& translation);
std::string empty_output_warning(const Translation& translation);

// nmtzoo-translate's warnings about what the limits did, over one run: every output the limits
// left empty, and the first min_len lowered (said once: a large min_len concerns every short line).
class LimitWarnings {
 public:
  // The lines to print for `translation` of input line `where` ("in.txt:3"), each ending in '\n';
  // "" when there is nothing to say.
  std::string of(const Translation& translation, const std::string& where);

 private:
  bool min_len_said_ = false;
};

// A sentence's prefix or constraint that cannot be used. what(): "line N: <problem>"; a caller
// with its own names for these (the server: request fields) has the parts.
struct UnusableGuide : std::invalid_argument {
  UnusableGuide(int64_t line, std::string field, std::string problem);
  int64_t line;         // the sentence's line: first_line + its index in the call
  std::string field;    // "prefix", "constraints", "target" or "source"
  std::string problem;  // what is wrong, without the line
};

// The ids a model reads for `request`: the tag of its target language (the request's target,
// else `default_target`: decoding.target_lang) when the model is multilingual, then its words;
// empty for an empty source. UnusableGuide naming `line`: field "target" for a target the model
// does not translate into, field "source" for a text holding a tag (control_tag_in).
std::vector<int32_t> source_ids(const Tokenizers& tokenizers, const TranslationRequest& request,
                                const std::string& default_target, int64_t line);

// The first target-language tag of a multilingual model ("<2fr>") that `text` holds, or "". The
// tokenizer would read it as the control token, so text could choose its own target over the
// request's: such text is refused (source_ids; the server names the field), never translated.
std::string control_tag_in(const Tokenizers& tokenizers, std::string_view text);

// Throws std::runtime_error saying why `dtype` cannot decode on `device` (int8: not a CPU, or no
// quantized engine).
void check_dtype_runs(DecodeDtype dtype, const c10::Device& device);

class TranslationPipeline {
 public:
  // `options` are the search's and the batching's (decoding.batch_tokens), the number format
  // (decoding.dtype) and the lexical shortlist (decoding.shortlist): each batch is then decoded
  // over its sentences' shortlist_top_k candidates per source token, the shortlist_frequent most
  // frequent target tokens and any prefix tokens; not for sampling or constrained decoding, which
  // need the whole vocabulary. `shortlist`: the loaded decoding.shortlist, or null to load it here.
  // With dtype int8, `int8` holds the model's packed int8 weights (kept across calls by whoever
  // translates again); null: this object packs its own. Throws std::runtime_error when int8
  // cannot run here (not a CPU, no quantized engine).
  TranslationPipeline(EncoderDecoder& model, Tokenizers tokenizers, SearchOptions options,
                      c10::Device device, Int8Linears* int8 = nullptr,
                      std::shared_ptr<const Shortlist> shortlist = nullptr);
  ~TranslationPipeline();

  // One Translation per input sentence, in input order. Empty sentences give empty
  // translations; sentences longer than the model accepts are truncated (Translation::truncated).
  // `first_line`: the input line of the first sentence, which with the rest seeds sampling.
  std::vector<Translation> translate(const std::vector<std::string>& sentences,
                                     int64_t first_line = 1);
  // Throws UnusableGuide (a std::invalid_argument) naming the line when a prefix or constraint is
  // unusable: a constraint without tokens, constraints while constrained decoding is off, or a
  // prefix longer than the model's output can be (max_positions - 1 tokens beside BOS). A prefix
  // that fits always fits the length limit, which grows by the prefix.
  std::vector<Translation> translate(const std::vector<TranslationRequest>& requests,
                                     int64_t first_line = 1);

  // Called after each batch with the number of this call's sentences translated so far.
  void on_progress(std::function<void(int64_t)> callback) { progress_ = std::move(callback); }
  // Called before each decoding step (search's `between_steps`); it may throw to stop.
  void between_steps(std::function<void()> callback) { between_steps_ = std::move(callback); }

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
  std::function<void()> between_steps_;
  std::unique_ptr<Int8Linears> own_int8_;
  Int8Linears* int8_ = nullptr;
  int64_t shortlisted_batches_ = 0;
  int64_t shortlisted_tokens_ = 0;
};

}  // namespace nmtzoo
