#include "core/search/translator.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <stdexcept>

#include "core/data/batch.h"
#include "core/data/batching.h"
#include "core/runtime/runtime.h"
#include "core/search/search_strategy.h"
#include "core/search/shortlist.h"
#include "kernels/int8_linear.h"
#include "models/encoder_decoder.h"
#include "tokenizer/special_tokens.h"

namespace nmtzoo {

TranslatorOptions TranslatorOptions::from(const DecodeConfig& config) {
  TranslatorOptions options;
  options.search = SearchOptions::from(config);
  options.batch_tokens = config.batch_tokens;
  options.dtype = config.dtype;
  options.shortlist_path = config.shortlist;
  options.shortlist_top_k = config.shortlist_top_k;
  options.shortlist_frequent = config.shortlist_frequent;
  if (config.bf16) {
    if (config.dtype == DecodeDtype::kInt8) {
      throw std::invalid_argument("decoding.bf16 is true but decoding.dtype is int8: set only decoding.dtype");
    }
    options.dtype = DecodeDtype::kBf16;
  }
  return options;
}

Translator::Translator(EncoderDecoder& model, Tokenizers tokenizers, TranslatorOptions options,
                       c10::Device device, Int8Linears* int8)
    : model_(model), tokenizers_(std::move(tokenizers)), options_(std::move(options)), device_(device) {
  if (!options_.shortlist && !options_.shortlist_path.empty()) {
    options_.shortlist = std::make_shared<const Shortlist>(Shortlist::load(options_.shortlist_path, tokenizers_));
  }
  if (options_.dtype != DecodeDtype::kInt8) return;
  if (!device_.is_cpu()) {
    throw std::runtime_error("decoding.dtype int8 runs on CPU only; use float32 or bf16 on " + device_.str());
  }
  Int8Linears::require_support();
  if (int8 == nullptr) {
    own_int8_ = std::make_unique<Int8Linears>();
    int8 = own_int8_.get();
  }
  int8_ = int8;
}

Translator::~Translator() = default;

int64_t Translator::max_source_tokens() const { return model_.max_positions() - 1; }

std::vector<Translation> Translator::translate(const std::vector<std::string>& sentences,
                                               int64_t first_line) {
  std::vector<TranslationRequest> requests;
  requests.reserve(sentences.size());
  for (const auto& sentence : sentences) requests.push_back({sentence, {}, {}});
  return translate(requests, first_line);
}

std::vector<int64_t> Translator::target_ids(const std::string& text) const {
  std::vector<int64_t> ids;
  for (int32_t id : tokenizers_.tgt->encode(text)) ids.push_back(id);
  return ids;
}

at::Tensor Translator::batch_vocabulary(const std::vector<TokenSpan>& sources,
                                        const std::vector<SentenceGuide>& guides) {
  const SearchOptions& search = options_.search;
  if (!options_.shortlist || search.sampling || search.constraints != ConstraintMode::kNone) return {};
  std::vector<int64_t> prefix_tokens;
  for (const auto& guide : guides) prefix_tokens.insert(prefix_tokens.end(), guide.prefix.begin(), guide.prefix.end());
  const std::vector<int64_t> ids =
      options_.shortlist->vocabulary(sources, options_.shortlist_top_k, options_.shortlist_frequent, prefix_tokens);
  ++shortlisted_batches_;
  shortlisted_tokens_ += static_cast<int64_t>(ids.size());
  return torch::tensor(ids, torch::kLong).to(device_);
}

double Translator::mean_shortlist_size() const {
  return shortlisted_batches_ == 0 ? 0.0
                                   : static_cast<double>(shortlisted_tokens_) / static_cast<double>(shortlisted_batches_);
}

SentenceGuide Translator::guide(const TranslationRequest& request, int64_t line) const {
  SentenceGuide guide;
  guide.line = line;
  if (!request.prefix.empty()) guide.prefix = target_ids(request.prefix);
  if (!request.constraints.empty() && options_.search.constraints == ConstraintMode::kNone) {
    throw std::invalid_argument(fmt::format(
        "line {}: has constraints, but constrained decoding is off (give --constraints ordered "
        "or unordered)", line));
  }
  for (size_t c = 0; c < request.constraints.size(); ++c) {
    guide.constraints.push_back(target_ids(request.constraints[c]));
    if (guide.constraints.back().empty()) {
      throw std::invalid_argument(fmt::format("line {}: constraint {} ('{}') has no tokens", line,
                                              c + 1, request.constraints[c]));
    }
  }
  return guide;
}

std::vector<Translation> Translator::translate(const std::vector<TranslationRequest>& requests,
                                               int64_t first_line) {
  std::vector<Translation> results(requests.size());
  std::vector<std::vector<int32_t>> sources(requests.size());
  std::vector<SentenceGuide> guides(requests.size());
  std::vector<int64_t> lengths;
  std::vector<int64_t> to_translate;  // indices of non-empty sentences
  for (size_t i = 0; i < requests.size(); ++i) {
    guides[i] = guide(requests[i], first_line + static_cast<int64_t>(i));
    sources[i] = tokenizers_.src->encode(requests[i].source);
    if (static_cast<int64_t>(sources[i].size()) > max_source_tokens()) {
      sources[i].resize(static_cast<size_t>(max_source_tokens()));
      results[i].truncated = true;
    }
    results[i].source_tokens = static_cast<int64_t>(sources[i].size());
    if (sources[i].empty()) continue;
    to_translate.push_back(static_cast<int64_t>(i));
    lengths.push_back(static_cast<int64_t>(sources[i].size()) + 1);
  }
  const int64_t budget = std::max<int64_t>(1, options_.batch_tokens / options_.search.width());
  model_.eval();
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
    auto strategy = make_strategy(options_.search, batch_guides);
    std::vector<std::vector<Hypothesis>> nbest =
        search(model_, src_tokens, src_pad_mask, options_.search, *strategy, batch_guides,
               batch_vocabulary(rows, batch_guides));
    for (size_t r = 0; r < batch.size(); ++r) {
      Translation& result = results[to_translate[batch[r]]];
      result.nbest = std::move(nbest[r]);
      for (const auto& hypothesis : result.nbest) {
        result.texts.push_back(tokenizers_.tgt->decode(
            std::vector<int32_t>(hypothesis.tokens.begin(), hypothesis.tokens.end())));
      }
      if (options_.search.record_attention) {
        for (int32_t id : rows[r]) result.source_pieces.push_back(tokenizers_.src->piece(id));
        result.source_pieces.push_back("</s>");
      }
    }
    done += static_cast<int64_t>(batch.size());
    if (progress_) progress_(done);
  }
  for (auto& result : results) {
    if (result.texts.empty()) result.texts.assign(static_cast<size_t>(options_.search.nbest), "");
  }
  return results;
}

}  // namespace nmtzoo
