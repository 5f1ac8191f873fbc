#include "core/train/training_data.h"

#include <algorithm>

#include "core/runtime/checkpoint.h"
#include "core/train/distributed.h"

namespace nmtzoo {

TrainingData prepare_training_data(const RunConfig& config, std::ostream& log,
                                   Communicator* communicator) {
  TrainingData data;
  const bool main_process = communicator == nullptr || communicator->rank() == 0;
  if (main_process) data.tokenizers = prepare_tokenizers(config, log);
  if (communicator != nullptr) communicator->barrier();
  if (!main_process) data.tokenizers = load_tokenizers(config);
  data.tokenizer_fingerprint = tokenizer_fingerprint(data.tokenizers);

  const DataConfig& d = config.data;
  const Tokenizers& t = data.tokenizers;
  ParallelText train_text = read_parallel(config.corpus_path(d.train, d.src_lang),
                                          config.corpus_path(d.train, d.tgt_lang), d.invalid_utf8);
  data.train = filter_pairs(tokenize(train_text, *t.src, *t.tgt),
                            FilterOptions{d.max_len, d.max_len_ratio, true}, &data.filtered);
  if (data.train.size() == 0) {
    throw DataError("no training pairs left after filtering '" +
                    config.corpus_path(d.train, d.src_lang) + "' and '" +
                    config.corpus_path(d.train, d.tgt_lang) + "' (data.max_len " +
                    std::to_string(d.max_len) + ", data.max_len_ratio " +
                    std::to_string(d.max_len_ratio) + ")");
  }
  for (size_t i = 0; i < data.train.size(); ++i) {
    data.train_lengths.push_back(static_cast<int64_t>(
        std::max(data.train.src[i].size(), data.train.tgt[i].size()) + 1));
  }
  ParallelText valid_text = read_parallel(config.corpus_path(d.valid, d.src_lang),
                                          config.corpus_path(d.valid, d.tgt_lang),
                                          InvalidUtf8Policy::kError);
  if (valid_text.size() == 0) {
    throw DataError("the validation set '" + config.corpus_path(d.valid, d.src_lang) + "' is empty");
  }
  data.valid_sources = valid_text.src;
  data.valid_references = valid_text.tgt;
  data.valid = tokenize(valid_text, *t.src, *t.tgt);
  const auto max_tokens = static_cast<size_t>(config.model.max_positions - 1);
  for (size_t i = 0; i < data.valid.size(); ++i) {
    if (data.valid.src[i].size() > max_tokens) data.valid.src[i].resize(max_tokens);
    if (data.valid.tgt[i].size() > max_tokens) data.valid.tgt[i].resize(max_tokens);
  }
  return data;
}

}  // namespace nmtzoo
