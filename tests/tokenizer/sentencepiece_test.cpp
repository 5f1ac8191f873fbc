// SPDX-License-Identifier: MIT
// Runs in the LibTorch test binary on purpose: SentencePiece and LibTorch in one process.
#include "torch_free/tokenizer/sentencepiece.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>

#include "tests/support/test_support.h"
#include "torch_free/io/text_file.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

// The first `count` lines of a Multi30k file.
std::vector<std::string> sample(const std::string& file, size_t count) {
  auto lines = read_lines(testing::multi30k(file));
  lines.resize(std::min(lines.size(), count));
  return lines;
}

// SentencePiece's default normalisation (nmt_nfkc) trims and collapses runs of spaces.
std::string collapse_spaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> vocabulary(const SentencePiece& model) {
  std::vector<std::string> pieces;
  for (int64_t id = 0; id < model.vocab_size(); ++id) pieces.push_back(model.piece(id));
  return pieces;
}

std::string train_model(const TempDir& dir, const std::vector<std::string>& sentences,
                        SubwordModel type, int64_t vocab_size, const std::string& name = "spm") {
  SentencePieceTrainOptions options;
  options.model_prefix = dir.path(name);
  options.model_type = type;
  options.vocab_size = vocab_size;
  size_t next = 0;
  train_sentencepiece(options, [&](std::string_view& sentence) {
    if (next == sentences.size()) return false;
    sentence = sentences[next++];
    return true;
  });
  return options.model_prefix + ".model";
}

TEST(SentencePiece, TrainLoadEncodeDecodeThenRunTorchInOneProcess) {
  TempDir dir;
  auto german = sample("train.de.gz", 3000);
  auto english = sample("train.en.gz", 3000);
  std::vector<std::string> both = german;
  both.insert(both.end(), english.begin(), english.end());
  auto model = SentencePiece::load(train_model(dir, both, SubwordModel::kBpe, 1000));
  EXPECT_EQ(model.vocab_size(), 1000);

  for (const auto* side : {&german, &english}) {
    for (size_t i = 0; i < 200; ++i) {
      const std::string& sentence = (*side)[i];
      auto ids = model.encode(sentence);
      EXPECT_FALSE(ids.empty());
      EXPECT_EQ(model.decode(ids), collapse_spaces(sentence));
    }
  }
  auto pieces = model.encode_pieces("Zwei junge Männer");
  EXPECT_FALSE(pieces.empty());
  EXPECT_EQ(pieces[0].rfind("\xe2\x96\x81", 0), 0u) << "first piece starts with the space mark";

  // The protobuf clash would crash here or at start-up if both were in one namespace.
  auto ids = model.encode(german[0]);
  auto tensor = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()));
  auto embedded = torch::nn::Embedding(1000, 8)->forward(tensor);
  EXPECT_EQ(embedded.size(0), static_cast<int64_t>(ids.size()));
  EXPECT_TRUE(torch::isfinite(embedded).all().item<bool>());
}

TEST(SentencePiece, SpecialIdsAreTheProjectWide) {
  TempDir dir;
  auto model = SentencePiece::load(
      train_model(dir, sample("train.en.gz", 2000), SubwordModel::kUnigram, 500));
  EXPECT_EQ(model.piece(kPadId), "<pad>");
  EXPECT_EQ(model.piece(kUnkId), "<unk>");
  EXPECT_EQ(model.piece(kBosId), "<s>");
  EXPECT_EQ(model.piece(kEosId), "</s>");
  // Control tokens decode to nothing.
  auto ids = model.encode("A dog runs.");
  std::vector<int32_t> framed{static_cast<int32_t>(kBosId)};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.push_back(static_cast<int32_t>(kEosId));
  EXPECT_EQ(model.decode(framed), "A dog runs.");
}

TEST(SentencePiece, UnseenCharactersBecomeUnknown) {
  TempDir dir;
  auto model =
      SentencePiece::load(train_model(dir, sample("train.en.gz", 2000), SubwordModel::kBpe, 600));
  auto ids = model.encode("dog \xe6\x97\xa5");  // a CJK character absent from the corpus
  EXPECT_NE(std::find(ids.begin(), ids.end(), static_cast<int32_t>(kUnkId)), ids.end());
}

TEST(SentencePiece, TrainingIsDeterministic) {
  TempDir dir;
  auto sentences = sample("train.de.gz", 2000);
  for (auto type : {SubwordModel::kBpe, SubwordModel::kUnigram}) {
    auto a = SentencePiece::load(train_model(dir, sentences, type, 700, "a"));
    auto b = SentencePiece::load(train_model(dir, sentences, type, 700, "b"));
    EXPECT_TRUE(vocabulary(a) == vocabulary(b));
  }
}

// Subword regularization: a sampled segmentation decodes to the sentence, changes with the seed,
// and is the same for the same seed whatever was sampled before it and on whichever thread.
TEST(SentencePiece, SampledSegmentationsAreAFunctionOfTextAlphaAndSeed) {
  TempDir dir;
  auto sentences = sample("train.en.gz", 2000);
  for (auto [type, alpha] :
       {std::pair{SubwordModel::kBpe, 0.1}, std::pair{SubwordModel::kUnigram, 0.2}}) {
    SCOPED_TRACE(type == SubwordModel::kBpe ? "bpe" : "unigram");
    auto model = SentencePiece::load(train_model(dir, sentences, type, 800));
    const std::string& sentence = sentences[7];
    std::set<std::vector<int32_t>> distinct;
    std::vector<std::vector<int32_t>> first_pass;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      auto ids = model.sample_encode(sentence, alpha, seed * 0x9e3779b97f4a7c15ULL);
      EXPECT_EQ(model.decode(ids), collapse_spaces(sentence));
      distinct.insert(ids);
      first_pass.push_back(ids);
    }
    EXPECT_GT(distinct.size(), 3u) << "40 seeds give several segmentations";
    // Again, in reverse order, on two threads at once: the same segmentation per seed.
    std::vector<std::vector<int32_t>> threaded(first_pass.size());
    auto sample_range = [&](uint64_t begin, uint64_t end) {
      for (uint64_t seed = end; seed-- > begin;) {
        threaded[seed] = model.sample_encode(sentence, alpha, seed * 0x9e3779b97f4a7c15ULL);
      }
    };
    std::thread other(sample_range, 0, 20);
    sample_range(20, 40);
    other.join();
    EXPECT_TRUE(threaded == first_pass);
  }
}

TEST(SentencePiece, BpeDropoutOfZeroIsTheDeterministicSegmentation) {
  TempDir dir;
  auto sentences = sample("train.de.gz", 2000);
  auto model = SentencePiece::load(train_model(dir, sentences, SubwordModel::kBpe, 800));
  for (size_t i = 0; i < 50; ++i)
    EXPECT_EQ(model.sample_encode(sentences[i], 0.0, i), model.encode(sentences[i]));
}

TEST(SentencePiece, MissingModelIsAClearError) {
  try {
    SentencePiece::load("/nonexistent/spm.model");
    FAIL();
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/spm.model' does not exist"),
              std::string::npos)
        << e.what();
  }
}

TEST(SentencePiece, CorruptModelIsAClearErrorNotACrash) {
  TempDir dir;
  testing::write_text(dir.path("bad.model"), "this is not a protobuf \x01\x02\x03");
  try {
    SentencePiece::load(dir.path("bad.model"));
    FAIL();
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load tokenizer model"), std::string::npos)
        << e.what();
  }
  // A real model cut in half.
  auto good = train_model(dir, sample("train.en.gz", 1000), SubwordModel::kBpe, 400);
  std::string bytes = testing::read_text(good);
  testing::write_text(dir.path("half.model"), bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(SentencePiece::load(dir.path("half.model")), TokenizerError);
}

// What the sentence source throws (bad data at a line, a truncated file) is thrown by
// train_sentencepiece as it was: the source runs inside the separately loaded SentencePiece
// library, and an exception unwinding through its frames used to abort the process (SIGABRT).
TEST(SentencePiece, WhatTheSentenceSourceThrowsReachesTheCallerNotAnAbort) {
  struct BadLine : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  TempDir dir;
  const auto sentences = sample("train.en.gz", 1000);
  for (size_t fail_at : {size_t{349}, size_t{0}}) {
    SentencePieceTrainOptions options;
    options.model_prefix = dir.path("spm" + std::to_string(fail_at));
    options.vocab_size = 400;
    size_t calls = 0;
    try {
      train_sentencepiece(options, [&](std::string_view& sentence) {
        if (calls++ == fail_at) {
          throw BadLine("corpus.en:" + std::to_string(fail_at + 1) + ": invalid UTF-8 at byte 5");
        }
        sentence = sentences[calls - 1];
        return true;
      });
      FAIL() << "trained through a failing sentence source";
    } catch (const BadLine& e) {
      EXPECT_EQ(std::string(e.what()),
                "corpus.en:" + std::to_string(fail_at + 1) + ": invalid UTF-8 at byte 5");
    }
    EXPECT_EQ(calls, fail_at + 1) << "the source is not asked again once it failed";
    EXPECT_FALSE(std::filesystem::exists(options.model_prefix + ".model"))
        << "no model of part of the corpus";
  }
  // The library is still usable afterwards.
  EXPECT_NO_THROW(SentencePiece::load(train_model(dir, sentences, SubwordModel::kBpe, 400)));
}

TEST(SentencePiece, DecodingAnIdOutsideTheVocabularyIsAnError) {
  TempDir dir;
  auto model =
      SentencePiece::load(train_model(dir, sample("train.en.gz", 1000), SubwordModel::kBpe, 400));
  EXPECT_THROW(model.decode({5, 400}), TokenizerError);
  EXPECT_THROW(model.piece(-1), TokenizerError);
}

}  // namespace
}  // namespace nmtzoo
