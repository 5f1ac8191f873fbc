// SPDX-License-Identifier: MIT
// The binary dataset reader on arbitrary files: the input is split into <split>.idx, .tok and
// .raw (two 4-byte little-endian lengths first), written to a scratch folder and opened. When the
// top bit of the first length is set, the files' checksums are rewritten to match them first
// (reseal_dataset_for_testing), so the checks behind the checksums see the damage; otherwise
// nearly every input stops at a checksum. A DataError or IoError naming the file is the expected
// answer to a corrupt dataset; anything else thrown, or a read outside the files (ASan), is a bug.
// What opens must read back consistently: the lengths it indexed, ids inside the vocabulary, and
// text that the one UTF-8 check of the project (find_text_problem) accepts.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "fuzz/fuzz_support.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/corpus.h"
#include "torch_free/io/text_file.h"

namespace {

namespace fs = std::filesystem;
constexpr int64_t kVocab = 64;

const std::string& scratch_dir() {
  static const std::string dir = [] {
    fs::path path =
        fs::temp_directory_path() / ("nmtzoo_dataset_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(path);
    return path.string();
  }();
  return dir;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

uint32_t read_length(const uint8_t* data) {
  uint32_t value = 0;
  std::memcpy(&value, data, sizeof value);
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  const size_t rest = size - 8;
  const bool reseal = (read_length(data) & 0x80000000u) != 0;
  const size_t idx_size = std::min<size_t>(read_length(data) & 0x7FFFFFFFu, rest);
  const size_t tok_size = std::min<size_t>(read_length(data + 4), rest - idx_size);
  const uint8_t* body = data + 8;
  const std::string& dir = scratch_dir();
  write_file(nmtzoo::dataset_file(dir, "train", "idx"), body, idx_size);
  write_file(nmtzoo::dataset_file(dir, "train", "tok"), body + idx_size, tok_size);
  write_file(nmtzoo::dataset_file(dir, "train", "raw"), body + idx_size + tok_size,
             rest - idx_size - tok_size);
  if (reseal) nmtzoo::reseal_dataset_for_testing(dir, "train");
  try {
    nmtzoo::BinaryDataset dataset(dir, "train", kVocab, kVocab);
    std::vector<int64_t> all(static_cast<size_t>(dataset.size()));
    std::iota(all.begin(), all.end(), 0);
    int64_t tokens = 0;
    const auto pairs = dataset.pairs(all);
    for (size_t i = 0; i < pairs.size(); ++i) {
      NMTZOO_FUZZ_CHECK(static_cast<int64_t>(pairs[i].src.size) == dataset.src_lengths()[i] &&
                            static_cast<int64_t>(pairs[i].tgt.size) == dataset.tgt_lengths()[i],
                        "pair " + std::to_string(i) + " reads back another length than indexed");
      tokens += static_cast<int64_t>(pairs[i].src.size + pairs[i].tgt.size);
      for (const nmtzoo::TokenSpan& span : {pairs[i].src, pairs[i].tgt}) {
        for (int32_t id : span) {
          NMTZOO_FUZZ_CHECK(id >= 0 && id < kVocab, "pair " + std::to_string(i) + " holds id " +
                                                        std::to_string(id) +
                                                        " past the vocabulary");
        }
      }
      for (const std::string& text :
           {dataset.src_text(static_cast<int64_t>(i)), dataset.tgt_text(static_cast<int64_t>(i))}) {
        NMTZOO_FUZZ_CHECK(!nmtzoo::find_text_problem(text),
                          "pair " + std::to_string(i) +
                              " opened with text that is not valid UTF-8 "
                              "without NUL bytes");
      }
    }
    NMTZOO_FUZZ_CHECK(tokens == dataset.token_count(), "the pairs do not cover the token file");
  } catch (const nmtzoo::DataError&) {
  } catch (const nmtzoo::IoError&) {
  }
  return 0;
}
