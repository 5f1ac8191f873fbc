// SPDX-License-Identifier: MIT
// Preparation of the binary dataset and what training reads from it.
#include "torch_free/data/dataset_prepare.h"

#include <gtest/gtest.h>
#include <utime.h>

#include <filesystem>
#include <numeric>
#include <sstream>

#include "libtorch/train/training_data.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_run.h"
#include "torch_free/data/binary_dataset.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using testing::TinyRun;

RunConfig with_bin_dir(RunConfig config, const std::string& dir) {
  config.data.bin_dir = dir;
  return config;
}

std::string prepare_error(const RunConfig& config) {
  std::ostringstream log;
  try {
    prepare_dataset(config, load_tokenizers(config), log, {2, false, false});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// `n` lines "w<i>" with `bad` at 1-based line `bad_line` (0: none).
std::string numbered_lines(int n, int bad_line = 0, const std::string& bad = "") {
  std::string text;
  for (int i = 1; i <= n; ++i)
    text += (i == bad_line ? bad : "a b c " + std::to_string(i % 7)) + "\n";
  return text;
}

TEST(PrepareDataset, OneThreadAndFourThreadsWriteTheSameBytesFromPlainAndGzip) {
  TinyRun run("transformer", {}, 5000);
  RunConfig config = run.config();
  // The same corpus again, gzipped, as a second training corpus.
  testing::write_gzip(run.path("data/more.src.gz"), testing::read_text(run.path("data/train.src")));
  testing::write_gzip(run.path("data/more.tgt.gz"), testing::read_text(run.path("data/train.tgt")));
  config.data.train = {{"train", 1.0}, {"more", 0.5}};
  const Tokenizers tokenizers = load_tokenizers(config);
  std::ostringstream log;
  auto one =
      prepare_dataset(with_bin_dir(config, run.path("one")), tokenizers, log, {1, false, false});
  auto four =
      prepare_dataset(with_bin_dir(config, run.path("four")), tokenizers, log, {4, false, false});
  ASSERT_EQ(one.corpora.size(), 2u);
  EXPECT_EQ(one.corpora[0].end, one.corpora[1].begin);
  EXPECT_EQ(one.corpora[1].end - one.corpora[1].begin, one.corpora[0].end);
  EXPECT_EQ(one.valid_pairs, 40);
  EXPECT_EQ(four.threads, 4);
  for (const auto& [name, size] : one.files) {
    EXPECT_EQ(testing::read_text(run.path("one/" + name)),
              testing::read_text(run.path("four/" + name)))
        << name;
  }
  // Every kept pair holds the tokenizer's ids of its line.
  BinaryDataset train(run.path("four"), "train", tokenizers.src->vocab_size(),
                      tokenizers.tgt->vocab_size());
  ASSERT_EQ(train.size(), one.train_pairs);
  auto lines = read_parallel(run.path("data/train.src"), run.path("data/train.tgt"));
  for (int64_t i : {int64_t{0}, int64_t{4321}, train.size() - 1}) {
    const size_t line = static_cast<size_t>(train.line(i) - 1);
    auto pair = train.pairs({i});
    EXPECT_EQ(std::vector<int32_t>(pair[0].src.begin(), pair[0].src.end()),
              tokenizers.src->encode(lines.src[line]));
    EXPECT_EQ(train.tgt_text(i), lines.tgt[line]);
  }
}

TEST(PrepareDataset, StalenessFollowsTheConfigTheTokenizerAndTheInputFiles) {
  TinyRun run("transformer");
  RunConfig config = run.config();
  const std::string fingerprint = tokenizer_fingerprint(load_tokenizers(config));
  EXPECT_NE(dataset_staleness(config, fingerprint).find("no prepared dataset"), std::string::npos);
  std::ostringstream log;
  prepare_dataset(config, load_tokenizers(config), log, {2, false, false});
  EXPECT_EQ(dataset_staleness(config, fingerprint), "");
  EXPECT_NO_THROW(read_manifest(config.dataset_dir()));

  RunConfig weighted = config;
  weighted.data.train[0].weight = 3;  // applied per epoch: the same dataset serves
  EXPECT_EQ(dataset_staleness(weighted, fingerprint), "");
  RunConfig shorter = config;
  shorter.data.max_len = 10;
  EXPECT_EQ(dataset_staleness(shorter, fingerprint), "the data config changed");
  EXPECT_EQ(dataset_staleness(config, "0123456789abcdef"), "the tokenizer changed");

  // A file rewritten with the same size is noticed by its time.
  const std::string src = run.path("data/train.src");
  const std::string text = testing::read_text(src);
  testing::write_text(src, text);
  struct utimbuf later {
    1000000000, 1000000000
  };
  utime(src.c_str(), &later);
  EXPECT_NE(dataset_staleness(config, fingerprint)
                .find("train.src' changed since the dataset was prepared"),
            std::string::npos)
      << dataset_staleness(config, fingerprint);
}

TEST(PrepareDataset, ADataFileOfTheWrongSizeIsAnErrorNamingIt) {
  TinyRun run("transformer");
  std::ostringstream log;
  prepare_dataset(run.config(), load_tokenizers(run.config()), log, {2, false, false});
  const std::string tok = dataset_file(run.config().dataset_dir(), "train", "tok");
  fs::resize_file(tok, fs::file_size(tok) + 8);
  try {
    read_manifest(run.config().dataset_dir());
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("binary dataset file '" + tok + "' is " +
                                         std::to_string(fs::file_size(tok)) + " bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(PrepareDataset, BadDataDeepInAFileIsFoundDuringPreparationWithFileAndLine) {
  TinyRun run("transformer");
  RunConfig config = run.config();
  config.data.train = {{"big", 1.0}};
  const std::string src = run.path("data/big.src");
  const std::string tgt = run.path("data/big.tgt");
  testing::write_text(src, numbered_lines(9000));
  testing::write_text(tgt, numbered_lines(9000, 7777, "schl\xe4gt"));
  EXPECT_NE(prepare_error(config).find(tgt + ":7777: invalid UTF-8 at byte 5"), std::string::npos)
      << prepare_error(config);
  EXPECT_FALSE(fs::exists(fs::path(config.dataset_dir()) / kManifestName));

  config.data.invalid_utf8 = InvalidUtf8Policy::kSkip;
  std::ostringstream log;
  auto manifest = prepare_dataset(config, load_tokenizers(config), log, {2, false, false});
  EXPECT_EQ(manifest.corpora[0].invalid_utf8_skipped, 1);
  EXPECT_EQ(manifest.corpora[0].lines, 9000);
  EXPECT_EQ(manifest.train_pairs, 8999);

  testing::write_text(tgt, numbered_lines(8999));
  EXPECT_NE(prepare_error(config).find("line counts differ: '" + src + "' has 9000 lines but '" +
                                       tgt + "' has 8999"),
            std::string::npos)
      << prepare_error(config);
  EXPECT_FALSE(fs::exists(fs::path(config.dataset_dir()) / kManifestName));
}

// On a fresh run the tokenizer is trained first, reading the corpus from inside SentencePiece's
// separately loaded library: bad data found there is the same error as when the tokenizer was
// already trained, not an abort (SIGABRT, no message), and leaves no tokenizer model behind.
TEST(PrepareTokenizers, BadDataOnAFreshRunIsTheProperErrorNotAnAbort) {
  TinyRun run("transformer");
  RunConfig config = run.config();
  config.data.train = {{"big", 1.0}};
  config.tokenizer.prefix = run.path("fresh/spm");
  const std::string src = run.path("data/big.src");
  const std::string tgt = run.path("data/big.tgt");
  auto tokenizer_error = [&] {
    std::ostringstream log;
    try {
      prepare_tokenizers(config, log);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  auto leftovers = [&] {
    std::vector<std::string> names;
    if (fs::exists(run.path("fresh"))) {
      for (const auto& entry : fs::directory_iterator(run.path("fresh"))) {
        names.push_back(entry.path().filename().string());
      }
    }
    return names;
  };

  testing::write_text(src, numbered_lines(1000));
  testing::write_text(tgt, numbered_lines(1000, 350, "schl\xe4gt"));
  EXPECT_EQ(tokenizer_error(), tgt + ":350: invalid UTF-8 at byte 5");
  EXPECT_EQ(leftovers(), std::vector<std::string>{});

  testing::write_text(tgt, numbered_lines(999));
  EXPECT_EQ(tokenizer_error(),
            "line counts differ: '" + src + "' has 1000 lines but '" + tgt + "' has 999");
  EXPECT_EQ(leftovers(), std::vector<std::string>{});

  // A truncated .gz (corpus_path prefers big.tgt.gz) is named, not read as far as it goes.
  fs::remove(tgt);
  testing::write_gzip(tgt + ".gz", numbered_lines(1000));
  const std::string whole = testing::read_text(tgt + ".gz");
  testing::write_text(tgt + ".gz", whole.substr(0, whole.size() / 2));
  EXPECT_NE(tokenizer_error().find(tgt + ".gz:"), std::string::npos) << tokenizer_error();
  EXPECT_NE(tokenizer_error().find(": unexpected end of the gzip stream"), std::string::npos)
      << tokenizer_error();
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
  // The data mended, the same run trains its tokenizer.
  testing::write_gzip(tgt + ".gz", numbered_lines(1000));
  EXPECT_EQ(tokenizer_error(), "(no error)");
  EXPECT_TRUE(fs::exists(config.tokenizer_model(config.data.src_lang)));
}

TEST(TrainingData, PreparesOnceThenReusesTheDataset) {
  TinyRun run("transformer");
  std::ostringstream first_log;
  TrainingData first = prepare_training_data(run.config(), first_log);
  EXPECT_NE(first_log.str().find("preparing the binary dataset"), std::string::npos)
      << first_log.str();
  EXPECT_EQ(first.train->size(), 400);
  EXPECT_EQ(first.valid.size(), 40u);
  EXPECT_EQ(first.valid_requests.size(), 40u);
  std::ostringstream second_log;
  TrainingData second = prepare_training_data(run.config(), second_log);
  EXPECT_EQ(second_log.str().find("preparing"), std::string::npos) << second_log.str();
  EXPECT_EQ(second.valid_references, first.valid_references);
}

// The manifest's corpus ranges index the dataset's pairs: an edited range is refused when the
// dataset is opened, before any pair is read through it.
TEST(TrainingData, AManifestRangeBeyondTheDatasetIsRefusedNamingTheManifest) {
  TinyRun run("transformer");
  std::ostringstream log;
  prepare_training_data(run.config(), log);
  const std::string manifest = run.config().dataset_dir() + "/dataset.json";
  std::string text = testing::read_text(manifest);
  const std::string end = "\"end\": 400";
  ASSERT_NE(text.find(end), std::string::npos) << text;
  text.replace(text.find(end), end.size(), "\"end\": 20000000");
  testing::write_text(manifest, text);
  try {
    prepare_training_data(run.config(), log);
    ADD_FAILURE() << "an edited manifest range was used";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("corpus 'train' of " + run.config().dataset_dir() +
                           "/dataset.json gives pairs [0, 20000000)"),
              std::string::npos)
        << message;
  }
}

TEST(TrainingData, CorpusWeightsSetHowOftenAnEpochSeesEachPair) {
  const std::vector<CorpusShare> corpora{
      {"a", 0, 100, 2.0}, {"b", 100, 300, 0.25}, {"c", 300, 310, 1.0}};
  auto epoch0 = epoch_pairs(corpora, 1, 0);
  std::vector<int> seen(310, 0);
  for (int64_t pair : epoch0) ++seen[static_cast<size_t>(pair)];
  EXPECT_EQ(epoch0.size(), 200u + 50u + 10u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 2);
  EXPECT_EQ(std::accumulate(seen.begin() + 100, seen.begin() + 300, 0), 50);
  for (int i = 100; i < 300; ++i) EXPECT_LE(seen[static_cast<size_t>(i)], 1);
  for (int i = 300; i < 310; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1);
  EXPECT_EQ(epoch_pairs(corpora, 1, 0), epoch0) << "seeded";
  EXPECT_NE(epoch_pairs(corpora, 1, 1), epoch0) << "a fresh share of b every epoch";
  EXPECT_NE(epoch_pairs(corpora, 2, 0), epoch0);
}

TEST(TrainingData, EveryBatchOfAWeightedEpochHoldsDatasetPairs) {
  TinyRun run("transformer", {"data.train=[train, {split: valid, weight: 0.5}]"});
  std::ostringstream log;
  TrainingData data = prepare_training_data(run.config(), log);
  ASSERT_EQ(data.corpora.size(), 2u);
  EXPECT_EQ(data.train->size(), 440);
  std::vector<int> seen(440, 0);
  for (const auto& batch : epoch_batches(data, 400, 1, 0)) {
    for (int64_t pair : batch) ++seen[static_cast<size_t>(pair)];
  }
  EXPECT_EQ(std::accumulate(seen.begin(), seen.begin() + 400, 0), 400);
  EXPECT_EQ(std::accumulate(seen.begin() + 400, seen.end(), 0), 20);
}

}  // namespace
}  // namespace nmtzoo
