#include "core/search/translator.h"

#include <torch/torch.h>

#include "core/data/batch.h"
#include "core/data/batching.h"
#include "core/runtime/runtime.h"
#include "models/encoder_decoder.h"
#include "tokenizer/special_tokens.h"

namespace nmtzoo {

TranslatorOptions TranslatorOptions::from(const DecodeConfig& config) {
  TranslatorOptions options;
  options.search = SearchOptions::from(config);
  options.batch_tokens = config.batch_tokens;
  options.bf16 = config.bf16;
  return options;
}

Translator::Translator(EncoderDecoder& model, Tokenizers tokenizers, TranslatorOptions options,
                       c10::Device device)
    : model_(model), tokenizers_(std::move(tokenizers)), options_(options), device_(device) {}

int64_t Translator::max_source_tokens() const { return model_.max_positions() - 1; }

std::vector<Translation> Translator::translate(const std::vector<std::string>& sentences) {
  std::vector<Translation> results(sentences.size());
  std::vector<std::vector<int32_t>> sources(sentences.size());
  std::vector<int64_t> lengths;
  std::vector<int64_t> to_translate;  // indices of non-empty sentences
  for (size_t i = 0; i < sentences.size(); ++i) {
    sources[i] = tokenizers_.src->encode(sentences[i]);
    if (static_cast<int64_t>(sources[i].size()) > max_source_tokens()) {
      sources[i].resize(static_cast<size_t>(max_source_tokens()));
      results[i].truncated = true;
    }
    results[i].source_tokens = static_cast<int64_t>(sources[i].size());
    if (sources[i].empty()) continue;
    to_translate.push_back(static_cast<int64_t>(i));
    lengths.push_back(static_cast<int64_t>(sources[i].size()) + 1);
  }
  const bool greedy = options_.search.beam == 1 && options_.search.nbest == 1;
  const int64_t budget = std::max<int64_t>(1, options_.batch_tokens / (greedy ? 1 : options_.search.beam));
  model_.eval();
  CpuAutocast autocast(options_.bf16 && device_.is_cpu());
  for (const auto& batch : make_batches(lengths, BatchingOptions{budget, 0, false})) {
    std::vector<const std::vector<int32_t>*> rows;
    for (int64_t j : batch) rows.push_back(&sources[to_translate[j]]);
    at::Tensor src_tokens = pad_sequences(rows, /*add_bos=*/false, /*add_eos=*/true).to(device_);
    at::Tensor src_pad_mask = src_tokens.eq(kPadId);
    std::vector<std::vector<Hypothesis>> nbest;
    if (greedy) {
      for (auto& hypothesis : greedy_search(model_, src_tokens, src_pad_mask, options_.search)) {
        nbest.push_back({std::move(hypothesis)});
      }
    } else {
      nbest = beam_search(model_, src_tokens, src_pad_mask, options_.search);
    }
    for (size_t r = 0; r < batch.size(); ++r) {
      Translation& result = results[to_translate[batch[r]]];
      result.nbest = std::move(nbest[r]);
      for (const auto& hypothesis : result.nbest) {
        result.texts.push_back(tokenizers_.tgt->decode(
            std::vector<int32_t>(hypothesis.tokens.begin(), hypothesis.tokens.end())));
      }
      if (options_.search.record_attention) {
        for (int32_t id : *rows[r]) result.source_pieces.push_back(tokenizers_.src->piece(id));
        result.source_pieces.push_back("</s>");
      }
    }
  }
  for (auto& result : results) {
    if (result.texts.empty()) result.texts.assign(static_cast<size_t>(options_.search.nbest), "");
  }
  return results;
}

}  // namespace nmtzoo
