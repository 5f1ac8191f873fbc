#include "core/data/corpus.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/io/text_file.h"
#include "tokenizer/sentencepiece.h"

namespace nmtzoo {
namespace {

std::string text_error(const LineReader& reader, const TextProblem& problem) {
  return fmt::format("{}:{}: {}", reader.path(), reader.line_number(), problem.describe());
}

}  // namespace

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           InvalidUtf8Policy policy) {
  LineReader src_reader(src_path);
  LineReader tgt_reader(tgt_path);
  ParallelText text;
  std::string src_line;
  std::string tgt_line;
  while (true) {
    bool has_src = src_reader.next(src_line);
    bool has_tgt = tgt_reader.next(tgt_line);
    if (has_src != has_tgt) {
      LineReader& longer = has_src ? src_reader : tgt_reader;
      LineReader& shorter = has_src ? tgt_reader : src_reader;
      std::string line;
      while (longer.next(line)) {
      }
      throw DataError(fmt::format("line counts differ: '{}' has {} lines but '{}' has {}",
                                  longer.path(), longer.line_number(), shorter.path(),
                                  shorter.line_number()));
    }
    if (!has_src) break;
    ++text.lines_read;
    auto src_bad = find_text_problem(src_line);
    auto tgt_bad = find_text_problem(tgt_line);
    if (src_bad || tgt_bad) {
      if (policy == InvalidUtf8Policy::kError) {
        throw DataError(src_bad ? text_error(src_reader, *src_bad)
                                : text_error(tgt_reader, *tgt_bad));
      }
      ++text.invalid_utf8_skipped;
      continue;
    }
    text.src.push_back(std::move(src_line));
    text.tgt.push_back(std::move(tgt_line));
    text.line_numbers.push_back(src_reader.line_number());
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

TokenizedCorpus filter_pairs(const TokenizedCorpus& corpus, const FilterOptions& options,
                             FilterStats* stats) {
  FilterStats counts;
  TokenizedCorpus kept;
  for (size_t i = 0; i < corpus.size(); ++i) {
    auto src_len = static_cast<int64_t>(corpus.src[i].size());
    auto tgt_len = static_cast<int64_t>(corpus.tgt[i].size());
    ++counts.input;
    if (options.drop_empty && (src_len == 0 || tgt_len == 0)) {
      ++counts.empty;
    } else if (options.max_len > 0 && std::max(src_len, tgt_len) > options.max_len) {
      ++counts.too_long;
    } else if (options.max_len_ratio > 0 && src_len > 0 && tgt_len > 0 &&
               static_cast<double>(std::max(src_len, tgt_len)) >
                   options.max_len_ratio * static_cast<double>(std::min(src_len, tgt_len))) {
      ++counts.bad_ratio;
    } else {
      kept.src.push_back(corpus.src[i]);
      kept.tgt.push_back(corpus.tgt[i]);
      ++counts.kept;
    }
  }
  if (stats != nullptr) *stats = counts;
  return kept;
}

std::string FilterStats::summary() const {
  return fmt::format("{} pairs kept of {} ({} with an empty side, {} too long, {} over the length "
                     "ratio)",
                     kept, input, empty, too_long, bad_ratio);
}

}  // namespace nmtzoo
