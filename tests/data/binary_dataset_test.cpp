#include "core/data/binary_dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/data/corpus.h"
#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::vector<int32_t> ids(const TokenSpan& span) { return {span.begin(), span.end()}; }

void write_three_pairs(const std::string& dir) {
  DatasetWriter writer(dir, "train");
  writer.add("ein Hund", "a dog", {5, 6}, {7, 8, 9}, 1);
  writer.add("", "nothing", {}, {10}, 3);
  writer.add("zwei Katzen", "two cats", {11, 12, 13}, {14, 15}, 4);
  writer.finish();
  EXPECT_EQ(writer.pairs(), 3);
  EXPECT_EQ(writer.tokens(), 11);
}

std::string corruption_message(const std::string& dir) {
  try {
    BinaryDataset dataset(dir, "train", 100, 100);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BinaryDataset, RoundTripsTokensTextLinesAndLengths) {
  TempDir dir;
  write_three_pairs(dir.path());
  BinaryDataset dataset(dir.path(), "train", 100, 100);
  ASSERT_EQ(dataset.size(), 3);
  EXPECT_EQ(dataset.token_count(), 11);
  EXPECT_EQ(dataset.src_lengths(), (std::vector<int32_t>{2, 0, 3}));
  EXPECT_EQ(dataset.tgt_lengths(), (std::vector<int32_t>{3, 1, 2}));
  auto pairs = dataset.pairs({2, 0, 2});
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(ids(pairs[0].src), (std::vector<int32_t>{11, 12, 13}));
  EXPECT_EQ(ids(pairs[0].tgt), (std::vector<int32_t>{14, 15}));
  EXPECT_EQ(ids(pairs[1].tgt), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(ids(pairs[2].src), ids(pairs[0].src));
  EXPECT_EQ(dataset.src_text(2), "zwei Katzen");
  EXPECT_EQ(dataset.tgt_text(1), "nothing");
  EXPECT_EQ(dataset.src_text(1), "");
  EXPECT_EQ(dataset.line(2), 4);
  EXPECT_THROW(dataset.pairs({3}), std::out_of_range);
}

TEST(BinaryDataset, AnUnfinishedWriterLeavesNothingThatLoads) {
  TempDir dir;
  {
    DatasetWriter writer(dir.path(), "train");
    writer.add("a", "b", {5}, {6}, 1);
  }
  EXPECT_FALSE(fs::exists(dataset_file(dir.path(), "train", "idx")));
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_THROW(BinaryDataset(dir.path(), "train", 100, 100), IoError);
}

TEST(BinaryDataset, ATruncatedTokenFileIsAnErrorNamingIt) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string tok = dataset_file(dir.path(), "train", "tok");
  fs::resize_file(tok, fs::file_size(tok) - 4);
  const std::string message = corruption_message(dir.path());
  EXPECT_NE(message.find("binary dataset file '" + tok + "' is corrupt or truncated"),
            std::string::npos) << message;
  EXPECT_NE(message.find("nmtzoo-prepare --force"), std::string::npos) << message;
}

TEST(BinaryDataset, AnIndexThatDoesNotTileTheTokensIsAnErrorNamingIt) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string idx = dataset_file(dir.path(), "train", "idx");
  {
    // Pair 2's source length, 32 (header) + 40 (pair 1) + 24 bytes in.
    std::fstream file(idx, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(32 + 40 + 24);
    const int32_t wrong = 7;
    file.write(reinterpret_cast<const char*>(&wrong), sizeof wrong);
  }
  const std::string message = corruption_message(dir.path());
  EXPECT_NE(message.find("'" + idx + "' is corrupt"), std::string::npos) << message;
  EXPECT_NE(message.find("entry 3 does not follow entry 2"), std::string::npos) << message;
}

TEST(BinaryDataset, WrongMagicOrVersionIsAnErrorNamingTheFile) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string raw = dataset_file(dir.path(), "train", "raw");
  {
    std::fstream file(raw, std::ios::in | std::ios::out | std::ios::binary);
    file.write("GARBAGE!", 8);
  }
  EXPECT_NE(corruption_message(dir.path()).find("'" + raw + "' is corrupt or truncated: wrong magic"),
            std::string::npos) << corruption_message(dir.path());
}

TEST(BinaryDataset, AnIdOutsideTheVocabularyIsAnErrorWhenRead) {
  TempDir dir;
  write_three_pairs(dir.path());
  BinaryDataset dataset(dir.path(), "train", 100, 15);
  EXPECT_NO_THROW(dataset.pairs({0, 1}));
  try {
    dataset.pairs({2});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("pair 3 holds id 15, outside the vocabulary of 15"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmtzoo
