#include "core/data/tokenizers.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

#include "core/data/corpus.h"
#include "core/io/atomic_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Trains to a scratch prefix beside the model, then writes the model with checked atomic writes:
// SentencePiece reports no failed write (a full disk leaves a truncated model and "success"), so
// the model is read back and loaded before it replaces anything.
void train_model(const RunConfig& config, const std::string& model_path,
                 const std::vector<const std::vector<std::string>*>& sides, std::ostream& log) {
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
  size_t side = 0;
  size_t line = 0;
  train_sentencepiece(options, [&](std::string_view& sentence) {
    while (side < sides.size()) {
      if (line < sides[side]->size()) {
        sentence = (*sides[side])[line++];
        return true;
      }
      ++side;
      line = 0;
    }
    return false;
  });
  std::string model = read_file(temporary + ".model");
  try {
    SentencePiece::from_serialized(model, model_path);
  } catch (const TokenizerError& e) {
    throw TokenizerError("writing tokenizer model '" + model_path + "' failed (disk full?): " +
                         e.what());
  }
  const std::string vocab = read_file(temporary + ".vocab");
  write_file_atomically(prefix + ".vocab", [&](std::ostream& out) { out << vocab; });
  write_file_atomically(model_path, [&](std::ostream& out) { out << model; });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log << "trained tokenizer " << model_path << " in " << seconds << " s\n";
}

}  // namespace

Tokenizers load_tokenizers(const RunConfig& config) {
  Tokenizers tokenizers;
  tokenizers.src = std::make_shared<SentencePiece>(
      SentencePiece::load(config.tokenizer_model(config.data.src_lang)));
  tokenizers.tgt = config.tokenizer.joint
                       ? tokenizers.src
                       : std::make_shared<SentencePiece>(SentencePiece::load(
                             config.tokenizer_model(config.data.tgt_lang)));
  return tokenizers;
}

Tokenizers prepare_tokenizers(const RunConfig& config, std::ostream& log) {
  const std::string src_model = config.tokenizer_model(config.data.src_lang);
  const std::string tgt_model = config.tokenizer_model(config.data.tgt_lang);
  if (!fs::exists(src_model) || !fs::exists(tgt_model)) {
    ParallelText text = read_parallel(config.corpus_path(config.data.train, config.data.src_lang),
                                      config.corpus_path(config.data.train, config.data.tgt_lang),
                                      config.data.invalid_utf8);
    if (config.tokenizer.joint) {
      train_model(config, src_model, {&text.src, &text.tgt}, log);
    } else {
      if (!fs::exists(src_model)) train_model(config, src_model, {&text.src}, log);
      if (!fs::exists(tgt_model)) train_model(config, tgt_model, {&text.tgt}, log);
    }
  }
  return load_tokenizers(config);
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
