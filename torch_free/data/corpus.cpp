// SPDX-License-Identifier: MIT
#include "torch_free/data/corpus.h"

#include <fmt/format.h>

#include <algorithm>

#include "torch_free/tokenizer/sentencepiece.h"

namespace nmtzoo {
namespace {

std::string text_error(const LineReader& reader, const TextProblem& problem) {
  return fmt::format("{}:{}: {}", reader.path(), reader.line_number(), problem.describe());
}

}  // namespace

ParallelLineReader::ParallelLineReader(const std::string& src_path, const std::string& tgt_path)
    : src_(src_path), tgt_(tgt_path) {}

bool ParallelLineReader::next(std::string& src, std::string& tgt) {
  const bool has_src = src_.next(src);
  const bool has_tgt = tgt_.next(tgt);
  if (has_src != has_tgt) {
    LineReader& longer = has_src ? src_ : tgt_;
    LineReader& shorter = has_src ? tgt_ : src_;
    std::string line;
    while (longer.next(line)) {
    }
    throw DataError(fmt::format("line counts differ: '{}' has {} lines but '{}' has {}",
                                longer.path(), longer.line_number(), shorter.path(),
                                shorter.line_number()));
  }
  return has_src;
}

std::string pair_text_problem(const std::string& src, const std::string& tgt,
                              const std::string& src_path, const std::string& tgt_path,
                              int64_t line) {
  if (auto bad = find_text_problem(src))
    return fmt::format("{}:{}: {}", src_path, line, bad->describe());
  if (auto bad = find_text_problem(tgt))
    return fmt::format("{}:{}: {}", tgt_path, line, bad->describe());
  return "";
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           InvalidUtf8Policy policy) {
  ParallelLineReader reader(src_path, tgt_path);
  ParallelText text;
  std::string src_line;
  std::string tgt_line;
  while (reader.next(src_line, tgt_line)) {
    ++text.lines_read;
    std::string problem =
        pair_text_problem(src_line, tgt_line, src_path, tgt_path, reader.line_number());
    if (!problem.empty()) {
      if (policy == InvalidUtf8Policy::kError) throw DataError(problem);
      ++text.invalid_utf8_skipped;
      continue;
    }
    text.src.push_back(std::move(src_line));
    text.tgt.push_back(std::move(tgt_line));
    text.line_numbers.push_back(reader.line_number());
  }
  return text;
}

std::vector<std::string> read_sentences(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) {
    if (auto bad = find_text_problem(line)) throw DataError(text_error(reader, *bad));
    lines.push_back(line);
  }
  return lines;
}

TokenizedCorpus tokenize(const ParallelText& text, const SentencePiece& src_tokenizer,
                         const SentencePiece& tgt_tokenizer) {
  TokenizedCorpus corpus;
  corpus.src.reserve(text.size());
  corpus.tgt.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    corpus.src.push_back(src_tokenizer.encode(text.src[i]));
    corpus.tgt.push_back(tgt_tokenizer.encode(text.tgt[i]));
  }
  return corpus;
}

FilterVerdict classify_pair(int64_t src_len, int64_t tgt_len, const FilterOptions& options) {
  if (options.drop_empty && (src_len == 0 || tgt_len == 0)) return FilterVerdict::kEmpty;
  if (options.max_len > 0 && std::max(src_len, tgt_len) > options.max_len)
    return FilterVerdict::kTooLong;
  if (options.max_len_ratio > 0 && src_len > 0 && tgt_len > 0 &&
      static_cast<double>(std::max(src_len, tgt_len)) >
          options.max_len_ratio * static_cast<double>(std::min(src_len, tgt_len))) {
    return FilterVerdict::kBadRatio;
  }
  return FilterVerdict::kKept;
}

void FilterStats::count(FilterVerdict verdict) {
  ++input;
  switch (verdict) {
    case FilterVerdict::kKept:
      ++kept;
      break;
    case FilterVerdict::kEmpty:
      ++empty;
      break;
    case FilterVerdict::kTooLong:
      ++too_long;
      break;
    case FilterVerdict::kBadRatio:
      ++bad_ratio;
      break;
  }
}

FilterStats& FilterStats::operator+=(const FilterStats& other) {
  input += other.input;
  empty += other.empty;
  too_long += other.too_long;
  bad_ratio += other.bad_ratio;
  kept += other.kept;
  return *this;
}

TokenizedCorpus filter_pairs(const TokenizedCorpus& corpus, const FilterOptions& options,
                             FilterStats* stats) {
  FilterStats counts;
  TokenizedCorpus kept;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const FilterVerdict verdict =
        classify_pair(static_cast<int64_t>(corpus.src[i].size()),
                      static_cast<int64_t>(corpus.tgt[i].size()), options);
    counts.count(verdict);
    if (verdict == FilterVerdict::kKept) {
      kept.src.push_back(corpus.src[i]);
      kept.tgt.push_back(corpus.tgt[i]);
    }
  }
  if (stats != nullptr) *stats = counts;
  return kept;
}

std::string FilterStats::summary() const {
  return fmt::format(
      "{} pairs kept of {} ({} with an empty side, {} too long, {} over the length "
      "ratio)",
      kept, input, empty, too_long, bad_ratio);
}

}  // namespace nmtzoo
