// SPDX-License-Identifier: MIT
// Parallel text: reading aligned files, checking them, tokenizing and filtering pairs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {

class SentencePiece;

struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads two line-aligned files (plain or gzip) pair by pair. Unequal line counts are a DataError
// naming both files and counts.
class ParallelLineReader {
 public:
  ParallelLineReader(const std::string& src_path, const std::string& tgt_path);
  bool next(std::string& src, std::string& tgt);  // false after the last pair
  int64_t line_number() const { return src_.line_number(); }
  const LineReader& src() const { return src_; }
  const LineReader& tgt() const { return tgt_; }

 private:
  LineReader src_;
  LineReader tgt_;
};

// "<file>:<line>: <problem>" of the first unusable side of a pair, or "" when both are usable text.
std::string pair_text_problem(const std::string& src, const std::string& tgt,
                              const std::string& src_path, const std::string& tgt_path,
                              int64_t line);

struct ParallelText {
  std::vector<std::string> src;
  std::vector<std::string> tgt;
  std::vector<int64_t> line_numbers;  // 1-based line of each pair in both files
  int64_t lines_read = 0;
  int64_t invalid_utf8_skipped = 0;  // lines of invalid UTF-8 or with a NUL byte
  size_t size() const { return src.size(); }
};

// Reads two line-aligned files (plain or gzip). Unequal line counts are an error naming both
// files and counts; a line of invalid UTF-8 or with a NUL byte is an error naming file and line,
// or a counted skip.
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           InvalidUtf8Policy policy = InvalidUtf8Policy::kError);

// Reads one file of sentences for translation; invalid UTF-8 or a NUL byte is an error naming the
// line.
std::vector<std::string> read_sentences(const std::string& path);

struct TokenizedCorpus {
  std::vector<std::vector<int32_t>> src;  // subword ids, without BOS/EOS
  std::vector<std::vector<int32_t>> tgt;
  size_t size() const { return src.size(); }
};

struct FilterOptions {
  int64_t max_len = 0;         // drop pairs with more tokens on a side; 0 = keep all
  double max_len_ratio = 0.0;  // drop pairs whose longer/shorter length ratio exceeds; 0 = keep
  bool drop_empty = true;      // drop pairs with an empty side
};

enum class FilterVerdict { kKept, kEmpty, kTooLong, kBadRatio };
FilterVerdict classify_pair(int64_t src_len, int64_t tgt_len, const FilterOptions& options);

struct FilterStats {
  int64_t input = 0;
  int64_t empty = 0;
  int64_t too_long = 0;
  int64_t bad_ratio = 0;
  int64_t kept = 0;
  void count(FilterVerdict verdict);
  FilterStats& operator+=(const FilterStats& other);
  std::string summary() const;
};

TokenizedCorpus tokenize(const ParallelText& text, const SentencePiece& src_tokenizer,
                         const SentencePiece& tgt_tokenizer);
TokenizedCorpus filter_pairs(const TokenizedCorpus& corpus, const FilterOptions& options,
                             FilterStats* stats = nullptr);

}  // namespace nmtzoo
