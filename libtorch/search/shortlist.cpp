// SPDX-License-Identifier: MIT
#include "libtorch/search/shortlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "torch_free/io/atomic_file.h"
#include "torch_free/io/text_file.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

constexpr const char* kMagic = "nmtzoo-shortlist";
constexpr const char* kVersion = "1";

// p(t | s) for the (s, t) pairs that co-occur in some sentence pair, as compressed rows: row s
// (the NULL source is the last row) holds its targets sorted, so a lookup is a binary search.
struct TranslationTable {
  std::vector<int64_t> offsets;  // rows + 1
  std::vector<int32_t> targets;
  std::vector<double> probability;

  int64_t slot(int64_t source, int32_t target) const {
    const auto begin = targets.begin() + offsets[static_cast<size_t>(source)];
    const auto end = targets.begin() + offsets[static_cast<size_t>(source) + 1];
    return std::lower_bound(begin, end, target) - targets.begin();
  }
};

uint64_t pair_key(int64_t source, int32_t target) {
  return (static_cast<uint64_t>(source) << 32) | static_cast<uint32_t>(target);
}

void check_ids(TokenSpan span, int64_t vocab, const char* side) {
  for (int32_t id : span) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument(fmt::format(
          "shortlist training: {} id {} is outside the vocabulary of {}", side, id, vocab));
    }
  }
}

// The co-occurring pairs, every probability 1 / (targets in its row) to start.
TranslationTable co_occurrences(const PairVisitor& visit, int64_t source_vocab,
                                int64_t target_vocab) {
  const int64_t null_source = source_vocab;
  std::vector<uint64_t> keys;
  auto compact = [&keys] {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  };
  size_t compacted = 0;
  visit([&](TokenSpan src, TokenSpan tgt) {
    check_ids(src, source_vocab, "source");
    check_ids(tgt, target_vocab, "target");
    for (int32_t t : tgt) {
      keys.push_back(pair_key(null_source, t));
      for (int32_t s : src) keys.push_back(pair_key(s, t));
    }
    // Deduplicates as it goes, so memory follows the distinct pairs, not the corpus.
    if (keys.size() > 2 * compacted + (1u << 24)) {
      compact();
      compacted = keys.size();
    }
  });
  compact();
  TranslationTable table;
  table.offsets.assign(static_cast<size_t>(source_vocab) + 2, 0);
  table.targets.reserve(keys.size());
  for (uint64_t key : keys) {
    ++table.offsets[(key >> 32) + 1];
    table.targets.push_back(static_cast<int32_t>(key & 0xffffffffu));
  }
  for (size_t row = 1; row < table.offsets.size(); ++row)
    table.offsets[row] += table.offsets[row - 1];
  table.probability.resize(keys.size());
  for (size_t row = 0; row + 1 < table.offsets.size(); ++row) {
    const int64_t size = table.offsets[row + 1] - table.offsets[row];
    for (int64_t i = table.offsets[row]; i < table.offsets[row + 1]; ++i) {
      table.probability[static_cast<size_t>(i)] = 1.0 / static_cast<double>(size);
    }
  }
  return table;
}

// One EM iteration: each target token's alignment posterior over the source tokens (and NULL)
// under the current table, summed into expected counts, normalised per source row.
void em_iteration(const PairVisitor& visit, int64_t source_vocab, TranslationTable& table) {
  std::vector<double> counts(table.probability.size(), 0.0);
  std::vector<int64_t> slots;
  visit([&](TokenSpan src, TokenSpan tgt) {
    for (int32_t t : tgt) {
      slots.clear();
      slots.push_back(table.slot(source_vocab, t));
      for (int32_t s : src) slots.push_back(table.slot(s, t));
      double total = 0;
      for (int64_t slot : slots) total += table.probability[static_cast<size_t>(slot)];
      for (int64_t slot : slots)
        counts[static_cast<size_t>(slot)] += table.probability[static_cast<size_t>(slot)] / total;
    }
  });
  for (size_t row = 0; row + 1 < table.offsets.size(); ++row) {
    double total = 0;
    for (int64_t i = table.offsets[row]; i < table.offsets[row + 1]; ++i)
      total += counts[static_cast<size_t>(i)];
    if (total <= 0) continue;
    for (int64_t i = table.offsets[row]; i < table.offsets[row + 1]; ++i) {
      table.probability[static_cast<size_t>(i)] = counts[static_cast<size_t>(i)] / total;
    }
  }
}

// Piece -> id of every piece of a tokenizer.
std::unordered_map<std::string, int32_t> piece_ids(const SentencePiece& tokenizer) {
  std::unordered_map<std::string, int32_t> ids;
  for (int64_t id = 0; id < tokenizer.vocab_size(); ++id)
    ids.emplace(tokenizer.piece(id), static_cast<int32_t>(id));
  return ids;
}

std::string checked_piece(const SentencePiece& tokenizer, int64_t id) {
  std::string piece = tokenizer.piece(id);
  if (piece.find_first_of("\t\n") != std::string::npos) {
    throw std::runtime_error(
        fmt::format("token {} of '{}' contains a tab or newline; a shortlist cannot name it", id,
                    tokenizer.path()));
  }
  return piece;
}

}  // namespace

Shortlist Shortlist::train(const PairVisitor& visit, int64_t source_vocab, int64_t target_vocab,
                           const ShortlistTraining& options) {
  TranslationTable table = co_occurrences(visit, source_vocab, target_vocab);
  for (int64_t i = 0; i < options.iterations; ++i) em_iteration(visit, source_vocab, table);

  Shortlist shortlist;
  shortlist.target_vocab_ = target_vocab;
  std::vector<int64_t> frequency(static_cast<size_t>(target_vocab), 0);
  visit([&](TokenSpan, TokenSpan tgt) {
    for (int32_t t : tgt) ++frequency[static_cast<size_t>(t)];
  });
  for (int64_t t = kEosId + 1; t < target_vocab; ++t) {
    if (frequency[static_cast<size_t>(t)] > 0)
      shortlist.frequent_.push_back(static_cast<int32_t>(t));
  }
  std::stable_sort(shortlist.frequent_.begin(), shortlist.frequent_.end(),
                   [&](int32_t a, int32_t b) {
                     return frequency[static_cast<size_t>(a)] > frequency[static_cast<size_t>(b)];
                   });
  if (static_cast<int64_t>(shortlist.frequent_.size()) > options.frequent) {
    shortlist.frequent_.resize(static_cast<size_t>(options.frequent));
  }
  shortlist.frequency_ = std::move(frequency);

  shortlist.candidates_.resize(static_cast<size_t>(source_vocab));
  for (int64_t s = 0; s < source_vocab; ++s) {
    auto& row = shortlist.candidates_[static_cast<size_t>(s)];
    for (int64_t i = table.offsets[static_cast<size_t>(s)];
         i < table.offsets[static_cast<size_t>(s) + 1]; ++i) {
      const int32_t t = table.targets[static_cast<size_t>(i)];
      const double p = table.probability[static_cast<size_t>(i)];
      if (t > kEosId && p >= options.min_probability) row.emplace_back(t, static_cast<float>(p));
    }
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (static_cast<int64_t>(row.size()) > options.candidates)
      row.resize(static_cast<size_t>(options.candidates));
  }
  return shortlist;
}

void Shortlist::save(const std::string& path, const Tokenizers& tokenizers) const {
  write_file_atomically(path, [&](std::ostream& out) {
    out << kMagic << '\t' << kVersion << '\t' << tokenizer_fingerprint(tokenizers) << '\n';
    for (int32_t t : frequent_) {
      out << "frequent\t" << checked_piece(*tokenizers.tgt, t) << '\t'
          << frequency_[static_cast<size_t>(t)] << '\n';
    }
    for (size_t s = 0; s < candidates_.size(); ++s) {
      if (candidates_[s].empty()) continue;
      const std::string source = checked_piece(*tokenizers.src, static_cast<int64_t>(s));
      for (const auto& [t, p] : candidates_[s]) {
        out << "lexical\t" << source << '\t' << checked_piece(*tokenizers.tgt, t) << '\t'
            << fmt::format("{:.6g}", p) << '\n';
      }
    }
  });
}

Shortlist Shortlist::load(const std::string& path, const Tokenizers& tokenizers) {
  LineReader reader(path);
  std::string line;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(fmt::format("{}:{}: {}", path, reader.line_number(), what));
  };
  if (!reader.next(line)) fail("empty file; expected an nmtzoo shortlist");
  std::vector<std::string> header = split_fields(line, '\t');
  if (header.size() != 3 || header[0] != kMagic)
    fail("not an nmtzoo shortlist (made by nmtzoo-shortlist)");
  if (header[1] != kVersion)
    fail(fmt::format("shortlist format version {} is not supported (this build reads {})",
                     header[1], kVersion));
  const std::string fingerprint = tokenizer_fingerprint(tokenizers);
  if (header[2] != fingerprint) {
    fail(fmt::format(
        "made for other tokenizers (fingerprint {}, the model's are {}); build it again with "
        "nmtzoo-shortlist",
        header[2], fingerprint));
  }
  const auto source_ids = piece_ids(*tokenizers.src);
  const auto target_ids = tokenizers.joint() ? source_ids : piece_ids(*tokenizers.tgt);
  auto id_of = [&](const std::unordered_map<std::string, int32_t>& ids, const std::string& piece,
                   const char* side) {
    auto it = ids.find(piece);
    if (it == ids.end()) fail(fmt::format("'{}' is not a piece of the {} tokenizer", piece, side));
    return it->second;
  };
  auto number = [&](const std::string& text, const char* what) {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty() || !(value >= 0))
      fail(fmt::format("'{}' is not a valid {}", text, what));
    return value;
  };

  Shortlist shortlist;
  shortlist.target_vocab_ = tokenizers.tgt->vocab_size();
  shortlist.frequency_.assign(static_cast<size_t>(shortlist.target_vocab_), 0);
  shortlist.candidates_.resize(static_cast<size_t>(tokenizers.src->vocab_size()));
  while (reader.next(line)) {
    std::vector<std::string> fields = split_fields(line, '\t');
    if (fields[0] == "frequent" && fields.size() == 3) {
      const int32_t t = id_of(target_ids, fields[1], "target");
      shortlist.frequent_.push_back(t);
      shortlist.frequency_[static_cast<size_t>(t)] =
          static_cast<int64_t>(number(fields[2], "count"));
    } else if (fields[0] == "lexical" && fields.size() == 4) {
      const int32_t s = id_of(source_ids, fields[1], "source");
      const int32_t t = id_of(target_ids, fields[2], "target");
      shortlist.candidates_[static_cast<size_t>(s)].emplace_back(
          t, static_cast<float>(number(fields[3], "probability")));
    } else {
      fail(
          "expected 'frequent<TAB>piece<TAB>count' or 'lexical<TAB>source piece<TAB>target "
          "piece<TAB>probability'");
    }
  }
  return shortlist;
}

const std::vector<std::pair<int32_t, float>>& Shortlist::candidates(int64_t source) const {
  static const std::vector<std::pair<int32_t, float>> kNone;
  return source >= 0 && source < static_cast<int64_t>(candidates_.size())
             ? candidates_[static_cast<size_t>(source)]
             : kNone;
}

std::vector<int64_t> Shortlist::vocabulary(const std::vector<std::vector<int32_t>>& sources,
                                           int64_t top_k, int64_t frequent,
                                           const std::vector<int64_t>& extra) const {
  std::vector<TokenSpan> spans;
  for (const auto& source : sources) spans.push_back({source.data(), source.size()});
  return vocabulary(spans, top_k, frequent, extra);
}

std::vector<int64_t> Shortlist::vocabulary(const std::vector<TokenSpan>& sources, int64_t top_k,
                                           int64_t frequent,
                                           const std::vector<int64_t>& extra) const {
  std::vector<char> kept(static_cast<size_t>(target_vocab_), 0);
  auto keep = [&](int64_t id) {
    if (id >= 0 && id < target_vocab_) kept[static_cast<size_t>(id)] = 1;
  };
  for (int64_t id = 0; id <= kEosId; ++id) keep(id);
  for (size_t i = 0; i < frequent_.size() && static_cast<int64_t>(i) < frequent; ++i)
    keep(frequent_[i]);
  for (const auto& source : sources) {
    for (int32_t s : source) {
      const auto& row = candidates(s);
      for (size_t i = 0; i < row.size() && static_cast<int64_t>(i) < top_k; ++i) keep(row[i].first);
    }
  }
  for (int64_t id : extra) keep(id);
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < target_vocab_; ++id) {
    if (kept[static_cast<size_t>(id)] != 0) ids.push_back(id);
  }
  return ids;
}

}  // namespace nmtzoo
