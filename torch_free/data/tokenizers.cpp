// SPDX-License-Identifier: MIT
#include "torch_free/data/tokenizers.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <stdexcept>

#include "torch_free/data/corpus.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The training sentences of one or both sides of every training corpus of every direction,
// streamed (all source sentences, then all target sentences, as SentencePiece was always fed),
// each file once (a many-to-one run's target files are the same for every direction): it keeps a
// bounded random sample (tokenizer.input_sentence_size), so memory does not grow with the corpus.
// A pair with an invalid line is an error or skipped on both sides, as data.invalid_utf8 says.
class TrainingSentences {
 public:
  TrainingSentences(const RunConfig& config, bool src_side, bool tgt_side) : config_(config) {
    std::set<std::pair<std::string, std::string>> seen;  // (split, language) already streamed
    for (bool side : {true, false}) {
      if ((side && !src_side) || (!side && !tgt_side)) continue;
      for (const auto& corpus : config.data.train) {
        for (const auto& pair : config.language_pairs()) {
          if (seen.insert({corpus.split, side ? pair.src : pair.tgt}).second) {
            streams_.push_back({corpus.split, pair, side});
          }
        }
      }
    }
  }

  bool next(std::string_view& sentence) {
    while (true) {
      if (!reader_) {
        if (stream_ == streams_.size()) return false;
        const Stream& stream = streams_[stream_++];
        src_path_ = config_.corpus_path(stream.split, stream.pair.src);
        tgt_path_ = config_.corpus_path(stream.split, stream.pair.tgt);
        src_side_ = stream.src_side;
        reader_ = std::make_unique<ParallelLineReader>(src_path_, tgt_path_);
      }
      if (!reader_->next(src_, tgt_)) {
        reader_.reset();
        continue;
      }
      std::string problem =
          pair_text_problem(src_, tgt_, src_path_, tgt_path_, reader_->line_number());
      if (!problem.empty()) {
        if (config_.data.invalid_utf8 == InvalidUtf8Policy::kError) throw DataError(problem);
        continue;
      }
      sentence = src_side_ ? std::string_view(src_) : std::string_view(tgt_);
      return true;
    }
  }

 private:
  struct Stream {
    std::string split;
    LanguagePair pair;
    bool src_side;
  };
  const RunConfig& config_;
  std::vector<Stream> streams_;
  size_t stream_ = 0;
  bool src_side_ = true;
  std::unique_ptr<ParallelLineReader> reader_;
  std::string src_path_, tgt_path_, src_, tgt_;
};

// Trains to a scratch prefix beside the model, then writes the model with checked atomic writes:
// SentencePiece reports no failed write (a full disk leaves a truncated model and "success"), so
// the model is read back and loaded before it replaces anything.
void train_model(const RunConfig& config, const std::string& model_path, bool src_side,
                 bool tgt_side, std::ostream& log) {
  auto start = std::chrono::steady_clock::now();
  std::string prefix = model_path.substr(0, model_path.size() - std::string(".model").size());
  const std::string temporary = temporary_path_beside(prefix);
  struct RemoveScratch {
    const std::string& prefix;
    ~RemoveScratch() {
      std::error_code ignored;
      fs::remove(prefix + ".model", ignored);
      fs::remove(prefix + ".vocab", ignored);
    }
  } remove_scratch{temporary};
  SentencePieceTrainOptions options;
  options.model_prefix = temporary;
  options.model_type = config.tokenizer.model_type;
  options.vocab_size = config.tokenizer.vocab_size;
  options.character_coverage = config.tokenizer.character_coverage;
  options.input_sentence_size = config.tokenizer.input_sentence_size;
  options.seed = static_cast<uint32_t>(config.training.seed);
  if (config.multilingual()) {
    for (const auto& lang : config.target_languages())
      options.user_symbols.push_back(target_language_tag(lang));
  }
  TrainingSentences sentences(config, src_side, tgt_side);
  train_sentencepiece(options,
                      [&](std::string_view& sentence) { return sentences.next(sentence); });
  std::string model = read_file(temporary + ".model");
  try {
    SentencePiece::from_serialized(model, model_path);
  } catch (const TokenizerError& e) {
    throw TokenizerError("writing tokenizer model '" + model_path +
                         "' failed (disk full?): " + e.what());
  }
  const std::string vocab = read_file(temporary + ".vocab");
  write_file_atomically(prefix + ".vocab", [&](std::ostream& out) { out << vocab; });
  write_file_atomically(model_path, [&](std::ostream& out) { out << model; });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log << "trained tokenizer " << model_path << " in " << seconds << " s\n";
}

}  // namespace

bool same_vocabulary(const SentencePiece& a, const SentencePiece& b) {
  if (a.vocab_size() != b.vocab_size()) return false;
  for (int64_t id = 0; id < a.vocab_size(); ++id) {
    if (a.piece(id) != b.piece(id)) return false;
  }
  return true;
}

Tokenizers load_tokenizers(const RunConfig& config) {
  Tokenizers tokenizers;
  tokenizers.src = std::make_shared<SentencePiece>(
      SentencePiece::load(config.tokenizer_model(config.data.src_lang)));
  tokenizers.tgt = config.tokenizer.joint ? tokenizers.src
                                          : std::make_shared<SentencePiece>(SentencePiece::load(
                                                config.tokenizer_model(config.data.tgt_lang)));
  tokenizers.tags = target_tags(config, *tokenizers.src);
  return tokenizers;
}

Tokenizers prepare_tokenizers(const RunConfig& config, std::ostream& log) {
  const std::string src_model = config.tokenizer_model(config.data.src_lang);
  const std::string tgt_model = config.tokenizer_model(config.data.tgt_lang);
  if (config.tokenizer.joint) {
    if (!fs::exists(src_model)) train_model(config, src_model, true, true, log);
  } else {
    if (!fs::exists(src_model)) train_model(config, src_model, true, false, log);
    if (!fs::exists(tgt_model)) train_model(config, tgt_model, false, true, log);
  }
  return load_tokenizers(config);
}

const std::vector<int32_t>& TargetTags::prefix(const std::string& lang) const {
  if (lang.empty() && prefixes.size() == 1) return prefixes.begin()->second;
  if (lang.empty())
    throw std::invalid_argument("the model translates into " + targets() + ": say which");
  const auto found = prefixes.find(lang);
  if (found == prefixes.end()) {
    throw std::invalid_argument("the model translates into " + targets() + ", not '" + lang + "'");
  }
  return found->second;
}

std::string TargetTags::targets() const {
  std::string names;
  for (const auto& [lang, ids] : prefixes) names += (names.empty() ? "" : ", ") + lang;
  return names;
}

TargetTags target_tags(const RunConfig& config, const SentencePiece& src) {
  TargetTags tags;
  tags.tagged = config.multilingual();
  for (const auto& lang : config.target_languages()) {
    auto& ids = tags.prefixes[lang];
    if (!tags.tagged) continue;
    const std::string tag = target_language_tag(lang);
    const int64_t id = src.piece_id(tag);
    if (id < 0) {
      throw TokenizerError(
          "the tokenizer '" + src.path() + "' has no piece " + tag +
          ": it was trained without data.directions' tags; delete it to train it again");
    }
    ids.push_back(static_cast<int32_t>(id));
  }
  return tags;
}

std::string tokenizer_fingerprint(const Tokenizers& tokenizers) {
  uint64_t hash = 1469598103934665603ULL;
  auto mix = [&](const std::string& bytes) {
    for (char byte : bytes) hash = (hash ^ static_cast<unsigned char>(byte)) * 1099511628211ULL;
  };
  mix(tokenizers.src->serialized());
  if (!tokenizers.joint()) mix(tokenizers.tgt->serialized());
  return fmt::format("{:016x}", hash);
}

}  // namespace nmtzoo
