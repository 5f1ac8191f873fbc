// SPDX-License-Identifier: MIT
#include "libtorch/search/translation_pipeline.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>

#include "libtorch/kernels/int8_linear.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/batch.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/search_strategy.h"
#include "libtorch/search/shortlist.h"
#include "torch_free/data/batching.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {

void check_dtype_runs(DecodeDtype dtype, const c10::Device& device) {
  if (dtype != DecodeDtype::kInt8) return;
  if (!device.is_cpu()) {
    throw std::runtime_error("decoding.dtype int8 runs on CPU only; use float32 or bf16 on " +
                             device.str());
  }
  Int8Linears::require_support();
}

std::string min_len_warning(const Translation& t) {
  if (!t.min_len_lowered) return "";
  return fmt::format(
      "decoding.min_len was lowered to {} tokens, this sentence's output length limit "
      "(max_len_a * source tokens + max_len_b, plus any prefix and constraints, at most "
      "the model's max_positions - 1)",
      t.length_limit);
}

std::string empty_output_warning(const Translation& t) {
  if (!t.empty_by_limit) return "";
  return fmt::format(
      "the output is empty: no hypothesis could end within this sentence's output "
      "length limit of {} tokens (every continuation was ruled out, e.g. the model "
      "gives the end of sentence no probability at the limit)",
      t.length_limit);
}

std::string LimitWarnings::of(const Translation& t, const std::string& where) {
  std::string lines;
  if (t.min_len_lowered && !min_len_said_) {
    lines += fmt::format("warning: {}: {}; said once, later lines may be lowered too\n", where,
                         min_len_warning(t));
    min_len_said_ = true;
  }
  if (t.empty_by_limit) lines += fmt::format("warning: {}: {}\n", where, empty_output_warning(t));
  return lines;
}

UnusableGuide::UnusableGuide(int64_t line_number, std::string field_name, std::string what_is_wrong)
    : std::invalid_argument(fmt::format("line {}: {}", line_number, what_is_wrong)),
      line(line_number),
      field(std::move(field_name)),
      problem(std::move(what_is_wrong)) {}

TranslationPipeline::TranslationPipeline(EncoderDecoder& model, Tokenizers tokenizers,
                                         SearchOptions options, c10::Device device,
                                         Int8Linears* int8,
                                         std::shared_ptr<const Shortlist> shortlist)
    : model_(model),
      tokenizers_(std::move(tokenizers)),
      options_(std::move(options)),
      shortlist_(std::move(shortlist)),
      device_(device) {
  if (!shortlist_ && !options_.shortlist.empty()) {
    shortlist_ =
        std::make_shared<const Shortlist>(Shortlist::load(options_.shortlist, tokenizers_));
  }
  check_dtype_runs(options_.dtype, device_);
  if (options_.dtype != DecodeDtype::kInt8) return;
  if (int8 == nullptr) {
    own_int8_ = std::make_unique<Int8Linears>();
    int8 = own_int8_.get();
  }
  int8_ = int8;
}

TranslationPipeline::~TranslationPipeline() = default;

int64_t TranslationPipeline::max_source_tokens() const { return model_.max_positions() - 1; }

std::vector<Translation> TranslationPipeline::translate(const std::vector<std::string>& sentences,
                                                        int64_t first_line) {
  std::vector<TranslationRequest> requests;
  requests.reserve(sentences.size());
  for (const auto& sentence : sentences) requests.push_back({sentence, {}, {}, {}});
  return translate(requests, first_line);
}

std::string control_tag_in(const Tokenizers& tokenizers, std::string_view text) {
  if (!tokenizers.tags.tagged || text.find("<2") == std::string_view::npos) return "";
  for (const auto& [lang, ids] : tokenizers.tags.prefixes) {
    const std::string tag = target_language_tag(lang);
    if (text.find(tag) != std::string_view::npos) return tag;
  }
  return "";
}

std::vector<int32_t> source_ids(const Tokenizers& tokenizers, const TranslationRequest& request,
                                const std::string& default_target, int64_t line) {
  const std::string tag = control_tag_in(tokenizers, request.source);
  if (!tag.empty()) {
    throw UnusableGuide(
        line, "source",
        fmt::format(
            "the text holds {}, the model's target-language tag: the target comes from "
            "the request (decoding.target_lang, a jsonl line's \"target\"), never from the text",
            tag));
  }
  const std::string& target = request.target_lang.empty() ? default_target : request.target_lang;
  std::vector<int32_t> ids;
  try {
    ids = tokenizers.tags.prefix(target);
  } catch (const std::invalid_argument& e) {
    throw UnusableGuide(line, "target", e.what());
  }
  const std::vector<int32_t> words = tokenizers.src->encode(request.source);
  if (words.empty()) return {};  // an empty line stays empty, tag or not
  ids.insert(ids.end(), words.begin(), words.end());
  return ids;
}

std::vector<int64_t> TranslationPipeline::target_ids(const std::string& text) const {
  std::vector<int64_t> ids;
  for (int32_t id : tokenizers_.tgt->encode(text)) ids.push_back(id);
  return ids;
}

at::Tensor TranslationPipeline::batch_vocabulary(const std::vector<TokenSpan>& sources,
                                                 const std::vector<SentenceGuide>& guides) {
  if (!shortlist_ || options_.sampling || options_.constraints != ConstraintMode::kNone) return {};
  std::vector<int64_t> prefix_tokens;
  for (const auto& guide : guides)
    prefix_tokens.insert(prefix_tokens.end(), guide.prefix.begin(), guide.prefix.end());
  const std::vector<int64_t> ids = shortlist_->vocabulary(
      sources, options_.shortlist_top_k, options_.shortlist_frequent, prefix_tokens);
  ++shortlisted_batches_;
  shortlisted_tokens_ += static_cast<int64_t>(ids.size());
  return torch::tensor(ids, torch::kLong).to(device_);
}

SentenceGuide TranslationPipeline::guide(const TranslationRequest& request, int64_t line) const {
  SentenceGuide guide;
  guide.line = line;
  if (!request.prefix.empty()) guide.prefix = target_ids(request.prefix);
  // Forced token by token, a prefix must fit the decoder's positions beside BOS; below that, the
  // length limit grows by the prefix, so it always fits the limit.
  const int64_t output_positions = model_.max_positions() - 1;
  if (static_cast<int64_t>(guide.prefix.size()) > output_positions) {
    throw UnusableGuide(
        line, "prefix",
        fmt::format("the prefix has {} tokens, more than the {} the model can output "
                    "(model.max_positions {}, one for BOS)",
                    guide.prefix.size(), output_positions, model_.max_positions()));
  }
  if (!request.constraints.empty() && options_.constraints == ConstraintMode::kNone) {
    throw UnusableGuide(line, "constraints",
                        "has constraints, but constrained decoding is off (give --constraints "
                        "ordered or unordered)");
  }
  for (size_t c = 0; c < request.constraints.size(); ++c) {
    guide.constraints.push_back(target_ids(request.constraints[c]));
    if (guide.constraints.back().empty()) {
      throw UnusableGuide(
          line, "constraints",
          fmt::format("constraint {} ('{}') has no tokens", c + 1, request.constraints[c]));
    }
  }
  return guide;
}

std::vector<Translation> TranslationPipeline::translate(
    const std::vector<TranslationRequest>& requests, int64_t first_line) {
  std::vector<Translation> results(requests.size());
  std::vector<std::vector<int32_t>> sources(requests.size());
  std::vector<SentenceGuide> guides(requests.size());
  std::vector<int64_t> lengths;
  std::vector<int64_t> to_translate;  // indices of non-empty sentences
  for (size_t i = 0; i < requests.size(); ++i) {
    guides[i] = guide(requests[i], first_line + static_cast<int64_t>(i));
    sources[i] = source_ids(tokenizers_, requests[i], options_.target_lang,
                            first_line + static_cast<int64_t>(i));
    if (static_cast<int64_t>(sources[i].size()) > max_source_tokens()) {
      sources[i].resize(static_cast<size_t>(max_source_tokens()));
      results[i].truncated = true;
    }
    results[i].source_tokens = static_cast<int64_t>(sources[i].size());
    if (sources[i].empty()) continue;
    to_translate.push_back(static_cast<int64_t>(i));
    lengths.push_back(static_cast<int64_t>(sources[i].size()) + 1);
  }
  const int64_t budget = std::max<int64_t>(1, options_.batch_tokens / options_.width());
  if (model_.is_training())
    model_.eval();  // (a Translator's models are already: calls on them run at once)
  CpuAutocast autocast(options_.dtype == DecodeDtype::kBf16 && device_.is_cpu());
  Int8Scope int8(int8_);
  int64_t done = static_cast<int64_t>(requests.size() - to_translate.size());  // empty lines
  for (const auto& batch : make_batches(lengths, BatchingOptions{budget, 0, false})) {
    std::vector<TokenSpan> rows;
    std::vector<SentenceGuide> batch_guides;
    for (int64_t j : batch) {
      const auto& source = sources[to_translate[j]];
      rows.push_back({source.data(), source.size()});
      batch_guides.push_back(guides[to_translate[j]]);
    }
    at::Tensor src_tokens = pad_sequences(rows, /*add_bos=*/false, /*add_eos=*/true).to(device_);
    at::Tensor src_pad_mask = src_tokens.eq(kPadId);
    auto strategy = make_strategy(options_, batch_guides);
    std::vector<std::vector<Hypothesis>> nbest;
    try {
      nbest = search(model_, src_tokens, src_pad_mask, options_, *strategy, batch_guides,
                     batch_vocabulary(rows, batch_guides), between_steps_);
    } catch (const NonFiniteScores& e) {
      std::vector<int64_t> lines;
      for (int64_t s : e.sentences) lines.push_back(first_line + to_translate[batch[s]]);
      std::sort(lines.begin(), lines.end());
      throw NonFiniteScores(fmt::format("line {}", fmt::join(lines, ", ")), e.step, lines);
    }
    std::vector<int64_t> source_lengths;  // EOS included, as the search counts them
    for (const auto& row : rows) source_lengths.push_back(static_cast<int64_t>(row.size) + 1);
    const std::vector<int64_t> limits =
        output_length_limits(model_.max_positions(), source_lengths, options_, batch_guides);
    for (size_t r = 0; r < batch.size(); ++r) {
      Translation& result = results[to_translate[batch[r]]];
      result.nbest = std::move(nbest[r]);
      result.length_limit = limits[r];
      result.min_len_lowered = effective_min_len(options_.min_len, limits[r]) < options_.min_len;
      result.empty_by_limit = result.nbest.empty();
      for (const auto& hypothesis : result.nbest) {
        result.texts.push_back(tokenizers_.tgt->decode(
            std::vector<int32_t>(hypothesis.tokens.begin(), hypothesis.tokens.end())));
      }
      for (int32_t id : rows[r]) result.source_pieces.push_back(tokenizers_.src->piece(id));
      result.source_pieces.push_back("</s>");
    }
    done += static_cast<int64_t>(batch.size());
    if (progress_) progress_(done);
  }
  for (auto& result : results) {
    if (result.texts.empty()) result.texts.assign(static_cast<size_t>(options_.nbest), "");
  }
  return results;
}

}  // namespace nmtzoo
