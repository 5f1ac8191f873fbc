// SPDX-License-Identifier: MIT
#include "torch_free/data/binary_dataset.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_support.h"
#include "torch_free/data/corpus.h"

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

// The DataError opening `split` of `dir` gives, or "(no error)".
std::string open_error(const std::string& dir, const std::string& split = "train",
                       int64_t src_vocab = 100, int64_t tgt_vocab = 100) {
  try {
    BinaryDataset dataset(dir, split, src_vocab, tgt_vocab);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string corruption_message(const std::string& dir) { return open_error(dir); }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void overwrite(const std::string& path, int64_t offset, const void* data, size_t size) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(offset);
  file.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  ASSERT_TRUE(file.good()) << path;
}

template <typename T>
void overwrite_value(const std::string& path, int64_t offset, T value) {
  overwrite(path, offset, &value, sizeof value);
}

// Offsets in the files of write_three_pairs: 32-byte headers, 40-byte index entries.
constexpr int64_t kHeader = 32;
constexpr int64_t kCountField = 16;  // the header's count
constexpr int64_t kEntry = 40;
constexpr int64_t kTokenOffsetField = 0;
constexpr int64_t kTgtLenField = 28;

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
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nmtzoo-prepare --force"), std::string::npos) << message;
}

TEST(BinaryDataset, AnIndexThatDoesNotTileTheTokensIsAnErrorNamingIt) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string idx = dataset_file(dir.path(), "train", "idx");
  {
    // Pair 2's source length, 32 (header) + 40 (pair 1) + 24 bytes in: 0 becomes 1, so pair 2
    // still ends inside the token file, and pair 3 starts at id 6 where pair 2 now ends at 7.
    std::fstream file(idx, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(32 + 40 + 24);
    const int32_t wrong = 1;
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
  EXPECT_NE(
      corruption_message(dir.path()).find("'" + raw + "' is corrupt or truncated: wrong magic"),
      std::string::npos)
      << corruption_message(dir.path());
}

TEST(BinaryDataset, AnIdOutsideTheVocabularyIsAnErrorAtOpenNamingPairLineAndByte) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string tok = dataset_file(dir.path(), "train", "tok");
  // Pair 3 (input line 4): source ids 11 12 13 at ids 6-8, target ids 14 15 at ids 9-10.
  std::string message = open_error(dir.path(), "train", 100, 15);
  EXPECT_NE(message.find("'" + tok + "' is corrupt"), std::string::npos) << message;
  EXPECT_NE(message.find("pair 3 (input line 4) holds id 15 at byte offset 72, outside the target "
                         "vocabulary of 15"),
            std::string::npos)
      << message;
  message = open_error(dir.path(), "train", 13, 100);
  EXPECT_NE(message.find("pair 3 (input line 4) holds id 13 at byte offset 64, outside the source "
                         "vocabulary of 13"),
            std::string::npos)
      << message;
  EXPECT_EQ(open_error(dir.path(), "train", 14, 16), "(no error)");

  TempDir negative;
  {
    DatasetWriter writer(negative.path(), "train");
    writer.add("a", "b", {5}, {-1}, 1);
    writer.finish();
  }
  message = open_error(negative.path());
  EXPECT_NE(message.find("pair 1 (input line 1) holds id -1 at byte offset 36"), std::string::npos)
      << message;
}

TEST(BinaryDataset, AFlippedByteInTheIdsIsAnErrorAtOpenNamingTheFile) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string tok = dataset_file(dir.path(), "train", "tok");
  // Id 7 (pair 1's first target id, id 2 of the file) becomes 6: still inside the vocabulary.
  overwrite_value<uint8_t>(tok, kHeader + 2 * 4, 6);
  const std::string message = open_error(dir.path());
  EXPECT_NE(message.find("binary dataset file '" + tok +
                         "' is corrupt or truncated: its 44 bytes after the header have checksum"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nmtzoo-prepare --force"), std::string::npos) << message;
}

TEST(BinaryDataset, EveryChangedByteOfAnyFileIsAnErrorAtOpenNamingIt) {
  TempDir dir;
  write_three_pairs(dir.path());
  for (const char* extension : {"tok", "idx", "raw"}) {
    const std::string path = dataset_file(dir.path(), "train", extension);
    const std::string intact = read_bytes(path);
    for (size_t at = 0; at < intact.size(); ++at) {
      for (const uint8_t mask : std::initializer_list<uint8_t>{0x01, 0x80, 0xFF}) {
        const auto changed = static_cast<uint8_t>(static_cast<uint8_t>(intact[at]) ^ mask);
        overwrite_value(path, static_cast<int64_t>(at), changed);
        const std::string message = open_error(dir.path());
        EXPECT_NE(message.find(path), std::string::npos)
            << extension << " byte " << at << " ^ " << int{mask} << ": " << message;
        overwrite_value(path, static_cast<int64_t>(at), static_cast<uint8_t>(intact[at]));
      }
    }
  }
  EXPECT_EQ(open_error(dir.path()), "(no error)");
}

TEST(BinaryDataset, InvalidUtf8OrNulInTheTextIsRefusedEvenWithAMatchingChecksum) {
  TempDir dir;
  {
    DatasetWriter writer(dir.path(), "valid");
    writer.add("ein Hund", "a dog", {5, 6}, {7, 8, 9}, 1);
    writer.add("zwei Katzen", "two cats", {11, 12, 13}, {14, 15}, 2);
    writer.finish();
  }
  const std::string raw = dataset_file(dir.path(), "valid", "raw");
  // The text is "ein Hunda dogzwei Katzentwo cats": its byte 14 is the 'w' of "zwei".
  overwrite_value<uint8_t>(raw, kHeader + 14, 0xFF);
  std::string message = open_error(dir.path(), "valid");
  EXPECT_NE(message.find("'" + raw +
                         "' is corrupt or truncated: the source text of pair 2 "
                         "(input line 2) has invalid UTF-8 at byte offset 46"),
            std::string::npos)
      << message;
  reseal_dataset_for_testing(dir.path(), "valid");
  EXPECT_EQ(open_error(dir.path(), "valid"), message);

  overwrite_value<uint8_t>(raw, kHeader + 14, 0);
  reseal_dataset_for_testing(dir.path(), "valid");
  message = open_error(dir.path(), "valid");
  EXPECT_NE(
      message.find("the source text of pair 2 (input line 2) has a NUL byte at byte offset 46"),
      std::string::npos)
      << message;

  overwrite_value<uint8_t>(raw, kHeader + 14, 'w');
  reseal_dataset_for_testing(dir.path(), "valid");
  EXPECT_EQ(open_error(dir.path(), "valid"), "(no error)");
}

TEST(BinaryDataset, TextInAnyScriptAndEmptySidesOpen) {
  TempDir dir;
  const std::vector<std::string> texts = {"Grüße", "猫が好き", "😀 ok", "", "ǅ and €", "Ünïcödé"};
  {
    DatasetWriter writer(dir.path(), "train");
    for (size_t i = 0; i + 1 < texts.size(); i += 2)
      writer.add(texts[i], texts[i + 1], {5}, {6}, 1);
    writer.finish();
  }
  BinaryDataset dataset(dir.path(), "train", 10, 10);
  ASSERT_EQ(dataset.size(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(dataset.src_text(i), texts[static_cast<size_t>(2 * i)]);
    EXPECT_EQ(dataset.tgt_text(i), texts[static_cast<size_t>(2 * i + 1)]);
  }
}

TEST(BinaryDataset, AnIndexRangePastTheFilesIsRefusedBeforeAnyAllocationSizedByIt) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string idx = dataset_file(dir.path(), "train", "idx");
  const std::string intact = read_bytes(idx);

  // A count of 2^60 pairs: were anything sized by it first, this would be std::bad_alloc or
  // std::length_error, not the DataError.
  overwrite_value<uint64_t>(idx, kCountField, uint64_t{1} << 60);
  EXPECT_THROW(BinaryDataset(dir.path(), "train", 100, 100), DataError);
  overwrite_value<uint64_t>(idx, kCountField, 20000000);
  std::string message = open_error(dir.path());
  EXPECT_NE(message.find("'" + idx +
                         "' is corrupt or truncated: its header announces 20000000 "
                         "elements but it holds 120 bytes"),
            std::string::npos)
      << message;
  overwrite(idx, 0, intact.data(), intact.size());

  // Pair 3's target length edited to 2e7: refused at its entry, before its ids are read.
  overwrite_value<int32_t>(idx, kHeader + 2 * kEntry + kTgtLenField, 20000000);
  message = open_error(dir.path());
  EXPECT_NE(message.find("'" + idx + "' is corrupt or truncated: entry 3 reaches id 20000009, " +
                         "past the 11 ids of '" + dataset_file(dir.path(), "train", "tok") + "'"),
            std::string::npos)
      << message;
  overwrite(idx, 0, intact.data(), intact.size());

  overwrite_value<int64_t>(idx, kHeader + 2 * kEntry + kTokenOffsetField, 20000000);
  message = open_error(dir.path());
  EXPECT_NE(message.find("entry 3 does not follow entry 2"), std::string::npos) << message;
  overwrite(idx, 0, intact.data(), intact.size());
  EXPECT_EQ(open_error(dir.path()), "(no error)");
}

TEST(BinaryDataset, ARangeFromElsewhereIsCheckedAgainstThePairs) {
  TempDir dir;
  write_three_pairs(dir.path());
  BinaryDataset dataset(dir.path(), "train", 100, 100);
  EXPECT_NO_THROW(dataset.check_pair_range(0, 3, "corpus 'news' of dataset.json"));
  EXPECT_NO_THROW(dataset.check_pair_range(3, 3, "corpus 'news' of dataset.json"));
  for (const auto& [begin, end] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 20000000}, {2, 1}, {-1, 2}, {4, 4}}) {
    try {
      dataset.check_pair_range(begin, end, "corpus 'news' of dataset.json");
      ADD_FAILURE() << begin << ", " << end;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format(
                    "corpus 'news' of dataset.json gives pairs [{}, {}), but binary dataset file "
                    "'{}' holds 3 pairs; delete the dataset folder or run nmtzoo-prepare --force",
                    begin, end, dataset_file(dir.path(), "train", "idx"))),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(BinaryDataset, AFileOfAnotherPreparationIsRefused) {
  TempDir dir;
  TempDir other;
  write_three_pairs(dir.path());
  {
    DatasetWriter writer(other.path(), "train");  // the same sizes, other ids
    writer.add("ein Hund", "a dog", {5, 6}, {7, 8, 9}, 1);
    writer.add("", "nothing", {}, {10}, 3);
    writer.add("zwei Katzen", "two cats", {11, 12, 13}, {14, 16}, 4);
    writer.finish();
  }
  const std::string tok = dataset_file(dir.path(), "train", "tok");
  fs::copy_file(dataset_file(other.path(), "train", "tok"), tok,
                fs::copy_options::overwrite_existing);
  const std::string expected = "'" + dataset_file(dir.path(), "train", "idx") +
                               "' is corrupt or truncated: '" + tok + "' and '" +
                               dataset_file(dir.path(), "train", "raw") +
                               "' are not the files it was written with";
  const std::string message = open_error(dir.path());
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

TEST(BinaryDataset, AnOlderFormatIsRefusedNamingBothVersions) {
  TempDir dir;
  write_three_pairs(dir.path());
  const std::string idx = dataset_file(dir.path(), "train", "idx");
  overwrite_value<uint32_t>(idx, 8, 1);
  const std::string message = open_error(dir.path());
  EXPECT_NE(message.find("'" + idx +
                         "' is corrupt or truncated: format version 1, this nmtzoo "
                         "reads 2; delete the dataset folder or run nmtzoo-prepare --force"),
            std::string::npos)
      << message;
}

TEST(BinaryDataset, ResealingAnIntactDatasetChangesNothing) {
  TempDir dir;
  write_three_pairs(dir.path());
  std::vector<std::string> before;
  for (const char* extension : {"tok", "idx", "raw"}) {
    before.push_back(read_bytes(dataset_file(dir.path(), "train", extension)));
  }
  reseal_dataset_for_testing(dir.path(), "train");
  size_t i = 0;
  for (const char* extension : {"tok", "idx", "raw"}) {
    EXPECT_EQ(read_bytes(dataset_file(dir.path(), "train", extension)), before[i++]) << extension;
  }
}

TEST(BinaryDataset, AnIdChangedAfterOpeningIsStillCaughtWhenRead) {
  TempDir dir;
  write_three_pairs(dir.path());
  BinaryDataset dataset(dir.path(), "train", 100, 100);
  // The files are mapped shared: an edit in place (nmtzoo-prepare never does one: it renames new
  // files into place) shows through, and must still not reach the model.
  overwrite_value<int32_t>(dataset_file(dir.path(), "train", "tok"), kHeader + 10 * 4, 100);
  try {
    dataset.pairs({2});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("pair 3 holds id 100, outside the vocabulary of 100"),
              std::string::npos)
        << e.what();
  }
  overwrite_value<int32_t>(dataset_file(dir.path(), "train", "idx"), kHeader + kTgtLenField, 9);
  try {
    dataset.pairs({0});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("entry 1 changed since the dataset was opened"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nmtzoo
