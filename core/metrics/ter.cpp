#include "core/metrics/ter.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

// Tokenizer: tokenizer_ter.py's regular expressions, applied to code points with the scanning
// order of Python's re.sub (leftmost match first, the scan resuming after the match).

// An invalid UTF-8 byte b travels as the lone surrogate U+DC00 + b, as under Python's
// surrogateescape: it matches only the negated class [^0-9], and is written back unchanged.
constexpr char32_t kEscapedByteBase = 0xDC00;

bool is_escaped_byte(char32_t code_point) { return code_point >= 0xDC80 && code_point <= 0xDCFF; }

std::u32string decode_keeping_invalid_bytes(std::string_view text) {
  std::u32string code_points = decode_utf8(text);  // one per piece below
  std::vector<std::string_view> pieces = split_code_points(text);
  for (size_t i = 0; i < pieces.size(); ++i) {
    auto byte = static_cast<unsigned char>(pieces[i][0]);
    if (pieces[i].size() == 1 && byte >= 0x80) code_points[i] = kEscapedByteBase + byte;
  }
  return code_points;
}

std::string encode_keeping_invalid_bytes(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  size_t run_start = 0;
  for (size_t i = 0; i <= code_points.size(); ++i) {
    bool escaped = i < code_points.size() && is_escaped_byte(code_points[i]);
    if (i == code_points.size() || escaped) {
      out += encode_utf8(code_points.substr(run_start, i - run_start));
      if (escaped) out.push_back(static_cast<char>(code_points[i] - kEscapedByteBase));
      run_start = i + 1;
    }
  }
  return out;
}

bool in_range(char32_t c, char32_t first, char32_t last) { return c >= first && c <= last; }

bool is_digit(char32_t c) { return in_range(c, U'0', U'9'); }  // [0-9]: ASCII digits only
bool is_not_digit(char32_t c) { return !is_digit(c); }
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }
bool is_dash(char32_t c) { return c == U'-'; }

// [{-~[-` -&(-+:-@/]: ASCII punctuation but ' , - . , and the space.
bool is_split_punctuation(char32_t c) {
  return in_range(c, U' ', U'&') || in_range(c, U'(', U'+') || c == U'/' ||
         in_range(c, U':', U'@') || in_range(c, U'[', U'`') || in_range(c, U'{', U'~');
}

// ASIAN_PUNCT and FULL_WIDTH_PUNCT.
bool is_cjk_punctuation(char32_t c) {
  switch (c) {
    case 0x3001: case 0x3002: case 0x30FB:
    case 0xFF0E: case 0xFF0C: case 0xFF1F: case 0xFF1A: case 0xFF1B:
    case 0xFF01: case 0xFF02: case 0xFF08: case 0xFF09:
      return true;
    default:
      return in_range(c, 0x3008, 0x3011) || in_range(c, 0x3014, 0x301F) ||
             in_range(c, 0xFF61, 0xFF65);
  }
}

// The blocks _normalize_asian splits into characters. "Enclosed CJK Letters and Months" is
// written \u3200-\u3f22 there, not ...-\u32ff; harmless: the other blocks cover
// \u3300-\u3f22.
bool is_cjk_split(char32_t c) {
  return in_range(c, 0x4E00, 0x9FFF) || in_range(c, 0x3400, 0x4DBF) ||
         in_range(c, 0x31C0, 0x31EF) || in_range(c, 0x2E80, 0x2EFF) ||
         in_range(c, 0x3300, 0x33FF) || in_range(c, 0xF900, 0xFAFF) ||
         in_range(c, 0xFE30, 0xFE4F) || in_range(c, 0x3200, 0x3F22);
}

// _remove_punct's [\.,\?:;!\"\(\)].
bool is_removed_punctuation(char32_t c) {
  return c == U'.' || c == U',' || c == U'?' || c == U':' || c == U';' || c == U'!' ||
         c == U'"' || c == U'(' || c == U')';
}

// re.sub with a literal pattern: non-overlapping occurrences, left to right.
void replace_literal(std::u32string& text, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  size_t done = 0;
  for (size_t at = text.find(from); at != std::u32string::npos; at = text.find(from, done)) {
    out.append(text, done, at - done);
    out.append(to);
    done = at + from.size();
  }
  if (done == 0) return;
  out.append(text, done, std::u32string::npos);
  text.swap(out);
}

// re.sub(r"([class])", r" \1 ", text) and re.sub(r"[class]", "", text).
template <class Predicate>
void pad_each(std::u32string& text, Predicate in_class) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 2);
  for (char32_t c : text) {
    if (in_class(c)) {
      out += U' ';
      out += c;
      out += U' ';
    } else {
      out += c;
    }
  }
  text.swap(out);
}

template <class Predicate>
void erase_each(std::u32string& text, Predicate in_class) {
  text.erase(std::remove_if(text.begin(), text.end(), in_class), text.end());
}

enum class PairSpacing {
  kAfterEach,   // r"\1 \2 "
  kBeforeEach,  // r" \1 \2"
};

// re.sub(r"([first])([second])", replacement, text). After a match the scan resumes behind its
// second character, which therefore cannot start the next match: "a.." gives "a . .".
template <class First, class Second>
void space_pairs(std::u32string& text, First first, Second second, PairSpacing spacing) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 2);
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      if (spacing == PairSpacing::kBeforeEach) out += U' ';
      out += text[i];
      out += U' ';
      out += text[i + 1];
      if (spacing == PairSpacing::kAfterEach) out += U' ';
      i += 2;
    } else {
      out += text[i++];
    }
  }
  text.swap(out);
}

// _normalize_general_and_western.
void normalize_western(std::u32string& text) {
  replace_literal(text, U"\n-", U"");  // end-of-line hyphenation
  replace_literal(text, U"\n", U" ");
  replace_literal(text, U"&quot;", U"\"");  // in this order: "&amp;lt;" becomes "<"
  replace_literal(text, U"&amp;", U"&");
  replace_literal(text, U"&lt;", U"<");
  replace_literal(text, U"&gt;", U">");
  text = U" " + text + U" ";
  pad_each(text, is_split_punctuation);
  replace_literal(text, U"'s ", U" 's ");
  // r"'s$" -> r" 's" never matches: the text now ends with the padding space, and `$` matches
  // only at the end or before a final "\n".
  space_pairs(text, is_not_digit, is_period_or_comma, PairSpacing::kAfterEach);
  space_pairs(text, is_period_or_comma, is_not_digit, PairSpacing::kBeforeEach);
  space_pairs(text, is_digit, is_dash, PairSpacing::kAfterEach);
}

// _normalize_asian. Its substitutions only put spaces around single characters, which the final
// split removes again, so one pass over the union of their classes gives the same words.
// Its three Hiragana/Katakana/Katakana Phonetic Extensions substitutions,
// (^|^[kana])([kana]+)(?=$|^[kana]), can never match: without MULTILINE `^` holds only at
// position 0, so a match must start there and its run of kana reach the end; but
// _normalize_asian runs only after _normalize_general_and_western, whose result starts with a
// space. None of the three is reproduced.
void normalize_asian(std::u32string& text) {
  pad_each(text, [](char32_t c) { return is_cjk_split(c) || is_cjk_punctuation(c); });
}

std::string join_words(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += ' ';
    out.append(word);
  }
  return out;
}

// Edit distance and shifts: lib_ter.py.

using WordIds = std::vector<int32_t>;

constexpr int64_t kMaxShiftSize = 10;          // words in a shifted block
constexpr int64_t kMaxShiftDist = 50;          // |hypothesis - reference position| of a block
constexpr int64_t kBeamWidth = 25;             // columns each side of the pseudo-diagonal
constexpr int64_t kMaxShiftCandidates = 1000;  // shifts scored per sentence pair, all rounds
constexpr size_t kMaxCachedRows = 10000;       // BeamEditDistance's cache limit (speed only)
constexpr int32_t kUnreachable = 1 << 30;      // _INT_INFINITY: a cell outside the beam

// How a cell (hypothesis word i, reference word j) of the matrix was reached, named as in
// lib_ter.py, which turns the hypothesis into the reference here and flips the trace later.
enum class EditOp : uint8_t {
  kUndefined,   // 'x'
  kNop,         // ' ' from (i-1, j-1), the words equal
  kSubstitute,  // 's' from (i-1, j-1)
  kDelete,      // 'd' from (i-1, j): hypothesis word i faces no reference word
  kInsert,      // 'i' from (i, j-1): reference word j faces no hypothesis word
};

struct Cell {
  int32_t cost;
  EditOp op;
};

// lib_ter.BeamEditDistance for hypotheses of one length (a shift keeps the length). Row i of the
// matrix is computed only in a beam of columns around the pseudo-diagonal i * ref/hyp length
// (the whole last row), and only those cells are stored. Rows are cached in a trie of hypothesis
// prefixes, as lib_ter.py does, so that a shifted hypothesis recomputes only the rows after its
// longest prefix scored before. The cache changes no result: a row depends only on the prefix.
class BeamEditDistance {
 public:
  BeamEditDistance(const WordIds& ref, size_t hyp_length) : ref_(ref), hyp_length_(hyp_length) {
    const auto ref_length = static_cast<int64_t>(ref.size());
    const double length_ratio =
        hyp_length > 0 ? static_cast<double>(ref_length) / static_cast<double>(hyp_length) : 1.0;
    // With very different lengths a beam of 25 would not overlap the previous row's.
    int64_t beam_width = kBeamWidth;
    if (static_cast<double>(kBeamWidth) < length_ratio / 2) {
      beam_width = static_cast<int64_t>(std::ceil(length_ratio / 2 + kBeamWidth));
    }
    row_begin_.push_back(0);
    row_end_.push_back(ref_length + 1);
    for (size_t i = 1; i <= hyp_length; ++i) {
      auto diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * length_ratio));
      row_begin_.push_back(std::max<int64_t>(0, diagonal - beam_width));
      row_end_.push_back(i == hyp_length ? ref_length + 1
                                         : std::min(ref_length + 1, diagonal + beam_width));
    }
    cells_before_row_.push_back(0);
    for (size_t i = 0; i <= hyp_length; ++i) {
      cells_before_row_.push_back(cells_before_row_.back() +
                                  static_cast<size_t>(row_end_[i] - row_begin_[i]));
    }
    for (int64_t j = 0; j <= ref_length; ++j) {  // row 0: j insertions
      cached_cells_.push_back({static_cast<int32_t>(j), EditOp::kInsert});
    }
    node_row_offset_.push_back(0);  // the trie's root holds row 0
    rows_.resize(hyp_length + 1);
    path_nodes_.resize(hyp_length + 1);
  }

  // The edit distance of `hyp` (hyp_length words) to the reference; with `trace`, also the
  // operations of lib_ter.py's path through the matrix, first to last.
  int32_t operator()(const WordIds& hyp, std::vector<EditOp>* trace = nullptr) {
    size_t cached = 0;  // rows 1..cached are in the trie
    uint32_t node = 0;
    path_nodes_[0] = 0;
    while (cached < hyp_length_) {
      auto it = children_.find(child_key(node, hyp[cached]));
      if (it == children_.end()) break;
      node = it->second;
      path_nodes_[++cached] = node;
    }

    // New rows go straight into the trie's storage while it has room (lib_ter.py checks the
    // room once per hypothesis, then adds all its rows).
    const bool cache_new_rows = node_row_offset_.size() - 1 < kMaxCachedRows;
    const size_t new_cells = cells_before_row_[hyp_length_ + 1] - cells_before_row_[cached + 1];
    Cell* new_rows = nullptr;
    if (cache_new_rows) {
      size_t old_size = cached_cells_.size();
      if (cached_cells_.capacity() < old_size + new_cells) {
        cached_cells_.reserve(std::max(2 * cached_cells_.capacity(), old_size + new_cells));
      }
      cached_cells_.resize(old_size + new_cells);
      new_rows = cached_cells_.data() + old_size;
    } else {
      scratch_.resize(std::max(scratch_.size(), new_cells));
      new_rows = scratch_.data();
    }
    for (size_t i = 0; i <= cached; ++i) {
      rows_[i] = cached_cells_.data() + node_row_offset_[path_nodes_[i]];
    }
    for (size_t i = cached + 1; i <= hyp_length_; ++i) {
      Cell* row = new_rows + (cells_before_row_[i] - cells_before_row_[cached + 1]);
      compute_row(i, hyp[i - 1], row);
      rows_[i] = row;
    }

    if (trace != nullptr) trace_back(trace);

    if (cache_new_rows) {
      for (size_t i = cached + 1; i <= hyp_length_; ++i) {
        auto child = static_cast<uint32_t>(node_row_offset_.size());
        node_row_offset_.push_back(static_cast<size_t>(rows_[i] - cached_cells_.data()));
        children_.emplace(child_key(node, hyp[i - 1]), child);
        node = child;
      }
    }
    return cost(hyp_length_, static_cast<int64_t>(ref_.size()));
  }

 private:
  static uint64_t child_key(uint32_t node, int32_t word) {
    return (static_cast<uint64_t>(node) << 32) | static_cast<uint32_t>(word);
  }

  int32_t cost(size_t i, int64_t j) const {
    if (j < row_begin_[i] || j >= row_end_[i]) return kUnreachable;
    return rows_[i][j - row_begin_[i]].cost;
  }

  // Row i of the matrix after hypothesis word `word`, from row i - 1. On equal costs the first
  // of no-op/substitution, deletion, insertion wins (Tercom's preference with the trace flipped).
  void compute_row(size_t i, int32_t word, Cell* row) const {
    const int64_t begin = row_begin_[i];
    for (int64_t j = begin; j < row_end_[i]; ++j) {
      Cell cell{kUnreachable, EditOp::kUndefined};
      if (j == 0) {
        cell = {cost(i - 1, 0) + 1, EditOp::kDelete};
      } else {
        const bool same = word == ref_[static_cast<size_t>(j - 1)];
        const int32_t substitution = cost(i - 1, j - 1) + (same ? 0 : 1);
        if (substitution < cell.cost) {
          cell = {substitution, same ? EditOp::kNop : EditOp::kSubstitute};
        }
        const int32_t deletion = cost(i - 1, j) + 1;
        if (deletion < cell.cost) cell = {deletion, EditOp::kDelete};
        const int32_t insertion = (j > begin ? row[j - 1 - begin].cost : kUnreachable) + 1;
        if (insertion < cell.cost) cell = {insertion, EditOp::kInsert};
      }
      row[j - begin] = cell;
    }
  }

  void trace_back(std::vector<EditOp>* trace) const {
    trace->clear();
    size_t i = hyp_length_;
    auto j = static_cast<int64_t>(ref_.size());
    while (i > 0 || j > 0) {
      EditOp op = j >= row_begin_[i] && j < row_end_[i] ? rows_[i][j - row_begin_[i]].op
                                                        : EditOp::kUndefined;
      trace->push_back(op);
      switch (op) {
        case EditOp::kNop:
        case EditOp::kSubstitute:
          --i;
          --j;
          break;
        case EditOp::kInsert:
          --j;
          break;
        case EditOp::kDelete:
          --i;
          break;
        case EditOp::kUndefined:
          throw MetricError("TER: the edit path left the beam");  // lib_ter.py raises too
      }
    }
    std::reverse(trace->begin(), trace->end());
  }

  const WordIds& ref_;
  size_t hyp_length_;
  std::vector<int64_t> row_begin_;        // beam columns [begin, end) of each row
  std::vector<int64_t> row_end_;
  std::vector<size_t> cells_before_row_;  // beam cells of the rows above each row
  std::vector<Cell> cached_cells_;        // the trie's rows, back to back
  std::vector<size_t> node_row_offset_;   // trie node -> its row in cached_cells_
  std::unordered_map<uint64_t, uint32_t> children_;  // (node, next word) -> trie node
  std::vector<Cell> scratch_;             // new rows once the trie is full
  std::vector<const Cell*> rows_;         // the current hypothesis's rows
  std::vector<uint32_t> path_nodes_;      // the trie nodes of its cached prefix
};

// lib_ter.trace_to_alignment of the flipped trace: for each reference word, the position of the
// hypothesis word it is aligned with or follows (-1: before the first); and prefix sums of the
// error flags of hypothesis and reference words.
struct Alignment {
  std::vector<int64_t> hyp_position;
  std::vector<int64_t> hyp_errors_before;  // hyp_errors_before[k]: errors among words 0..k-1
  std::vector<int64_t> ref_errors_before;

  int64_t hyp_errors(int64_t start, int64_t length) const {
    return hyp_errors_before[static_cast<size_t>(start + length)] -
           hyp_errors_before[static_cast<size_t>(start)];
  }
  int64_t ref_errors(int64_t start, int64_t length) const {
    return ref_errors_before[static_cast<size_t>(start + length)] -
           ref_errors_before[static_cast<size_t>(start)];
  }
};

Alignment align_trace(const std::vector<EditOp>& trace) {
  Alignment alignment;
  alignment.hyp_errors_before.push_back(0);
  alignment.ref_errors_before.push_back(0);
  int64_t hyp_position = -1;
  auto add_hyp_word = [&](int64_t error) {
    ++hyp_position;
    alignment.hyp_errors_before.push_back(alignment.hyp_errors_before.back() + error);
  };
  auto add_ref_word = [&](int64_t error) {
    alignment.hyp_position.push_back(hyp_position);
    alignment.ref_errors_before.push_back(alignment.ref_errors_before.back() + error);
  };
  for (EditOp op : trace) {
    switch (op) {
      case EditOp::kNop:
      case EditOp::kSubstitute: {
        int64_t error = op == EditOp::kSubstitute ? 1 : 0;
        add_hyp_word(error);
        add_ref_word(error);
        break;
      }
      case EditOp::kDelete:  // flipped: an insertion into the reference
        add_hyp_word(1);
        break;
      case EditOp::kInsert:  // flipped: a deletion from the reference
        add_ref_word(1);
        break;
      case EditOp::kUndefined:
        break;
    }
  }
  return alignment;
}

// lib_ter._perform_shift: `words` with the block [start, start + length) moved before position
// `target`, Python's clamping slices included.
void perform_shift(const WordIds& words, int64_t start, int64_t length, int64_t target,
                   WordIds* shifted) {
  const auto size = static_cast<int64_t>(words.size());
  shifted->clear();
  auto append = [&](int64_t begin, int64_t end) {
    begin = std::min(begin, size);
    end = std::min(end, size);
    if (begin < end) shifted->insert(shifted->end(), words.begin() + begin, words.begin() + end);
  };
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, size);
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, size);
  } else {  // "shift within the shifted string", as lib_ter.py slices it
    append(0, start);
    append(start + length, length + target);
    append(start, start + length);
    append(length + target, size);
  }
}

// lib_ter._shift: scores every shift of a hypothesis block onto an equal reference block (Tercom's
// filters, up to kMaxShiftCandidates in all) and writes the best to *best_words. Returns its gain
// in edit distance, 0 when there is no candidate.
int64_t best_shift(const WordIds& words, const WordIds& ref, BeamEditDistance& edit_distance,
                   int64_t* checked_candidates, WordIds* best_words) {
  std::vector<EditOp> trace;
  const int64_t score = edit_distance(words, &trace);
  const Alignment alignment = align_trace(trace);
  const auto hyp_length = static_cast<int64_t>(words.size());
  const auto ref_length = static_cast<int64_t>(ref.size());

  // Tercom's ranking: highest gain, then longest block, earliest block, earliest target.
  bool found = false;
  std::array<int64_t, 4> best_rank{};
  WordIds candidate;
  for (int64_t start_h = 0; start_h < hyp_length; ++start_h) {
    const int64_t first_r = std::max<int64_t>(0, start_h - kMaxShiftDist);
    const int64_t last_r = std::min(ref_length - 1, start_h + kMaxShiftDist);
    for (int64_t start_r = first_r; start_r <= last_r; ++start_r) {
      // _find_shifted_pairs: every length of the common run, 1 to kMaxShiftSize.
      for (int64_t length = 1;
           length <= kMaxShiftSize && start_h + length <= hyp_length &&
           start_r + length <= ref_length &&
           words[static_cast<size_t>(start_h + length - 1)] ==
               ref[static_cast<size_t>(start_r + length - 1)];
           ++length) {
        // Shift only a block with an error onto a reference block with an error, and not
        // within itself.
        if (alignment.hyp_errors(start_h, length) == 0) continue;
        if (alignment.ref_errors(start_r, length) == 0) continue;
        const int64_t aligned = alignment.hyp_position[static_cast<size_t>(start_r)];
        if (start_h <= aligned && aligned < start_h + length) continue;

        int64_t previous_target = -1;
        for (int64_t offset = -1; offset < length; ++offset) {
          const int64_t r = start_r + offset;
          if (r >= ref_length) break;
          // Before the hypothesis word aligned with reference word r (lib_ter.py inserts before
          // where Tercom inserts after).
          const int64_t target = r < 0 ? 0 : alignment.hyp_position[static_cast<size_t>(r)] + 1;
          if (target == previous_target) continue;
          previous_target = target;
          perform_shift(words, start_h, length, target, &candidate);
          const std::array<int64_t, 4> rank = {score - edit_distance(candidate), length, -start_h,
                                               -target};
          ++*checked_candidates;
          // An equal rank means the same shift, hence the same words: the first one stays.
          if (!found || rank > best_rank) {
            found = true;
            best_rank = rank;
            best_words->swap(candidate);
          }
        }
        // The caller stops at the limit, dropping this round's shift: the rest would not count.
        if (*checked_candidates >= kMaxShiftCandidates) return found ? best_rank[0] : 0;
      }
    }
  }
  return found ? best_rank[0] : 0;
}

TerEdits edit_rate_of_ids(const WordIds& hyp, const WordIds& ref) {
  if (ref.empty()) return {static_cast<int64_t>(hyp.size()), 0};
  BeamEditDistance edit_distance(ref, hyp.size());
  WordIds words = hyp;
  WordIds shifted;
  int64_t shifts = 0;
  int64_t checked_candidates = 0;
  while (true) {
    int64_t gain = best_shift(words, ref, edit_distance, &checked_candidates, &shifted);
    // Reaching the candidate limit ends the search, and drops the shift found in that round.
    if (checked_candidates >= kMaxShiftCandidates || gain <= 0) break;
    ++shifts;
    words.swap(shifted);
  }
  return {shifts + edit_distance(words), static_cast<int64_t>(ref.size())};
}

}  // namespace

std::string tokenize_tercom(std::string_view sentence, const TerOptions& options) {
  std::string text = options.case_sensitive ? std::string(sentence) : lowercase(sentence);
  if (options.normalized || options.no_punct) {
    std::u32string code_points = decode_keeping_invalid_bytes(text);
    if (options.normalized) {
      normalize_western(code_points);
      if (options.asian_support) normalize_asian(code_points);
    }
    if (options.no_punct) {
      erase_each(code_points, [&](char32_t c) {
        return is_removed_punctuation(c) || (options.asian_support && is_cjk_punctuation(c));
      });
    }
    text = encode_keeping_invalid_bytes(code_points);
  }
  return join_words(split_whitespace(text));
}

TerEdits translation_edit_rate(const std::vector<std::string_view>& hyp_words,
                               const std::vector<std::string_view>& ref_words) {
  std::unordered_map<std::string_view, int32_t> word_ids;
  auto to_ids = [&](const std::vector<std::string_view>& words) {
    WordIds ids;
    ids.reserve(words.size());
    for (std::string_view word : words) {
      ids.push_back(word_ids.emplace(word, static_cast<int32_t>(word_ids.size())).first->second);
    }
    return ids;
  };
  WordIds hyp = to_ids(hyp_words);
  WordIds ref = to_ids(ref_words);
  return edit_rate_of_ids(hyp, ref);
}

TerStats& TerStats::operator+=(const TerStats& other) {
  edits += other.edits;
  ref_length += other.ref_length;
  return *this;
}

std::string TerScore::format(int width, const std::string& signature) const {
  return format_score_line(name(), score, width, signature, "");
}

Ter::Ter(TerOptions options) : options_(options) {}

std::string Ter::preprocess(std::string_view segment) const {
  return tokenize_tercom(rstrip_whitespace(segment), options_);
}

TerStats Ter::segment_stats(const std::string& hypothesis,
                            const std::vector<std::string>& references) const {
  if (references.empty()) throw MetricError("TER needs at least one reference per segment");
  const std::string hyp = preprocess(hypothesis);
  const std::vector<std::string_view> hyp_words = split_whitespace(hyp);
  int64_t best_edits = std::numeric_limits<int64_t>::max();
  int64_t ref_lengths = 0;
  for (const auto& reference : references) {
    const std::string ref = preprocess(reference);
    TerEdits edits = translation_edit_rate(hyp_words, split_whitespace(ref));
    ref_lengths += edits.ref_length;
    best_edits = std::min(best_edits, edits.edits);
  }
  TerStats stats;
  stats.edits = static_cast<double>(best_edits);
  stats.ref_length = static_cast<double>(ref_lengths) / static_cast<double>(references.size());
  return stats;
}

TerScore Ter::score_from_stats(const TerStats& stats) const {
  TerScore score;
  score.num_edits = static_cast<int64_t>(stats.edits);
  score.ref_length = stats.ref_length;
  if (stats.ref_length > 0) {
    score.score = 100 * (stats.edits / stats.ref_length);
  } else {
    score.score = stats.edits > 0 ? 100.0 : 0.0;  // edits against empty references: 100%
  }
  return score;
}

TerScore Ter::corpus_score(const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references) const {
  if (hypotheses.empty()) throw MetricError("no hypotheses to score");
  int num_refs = 0;
  auto segments = references_by_segment(references, hypotheses.size(), &num_refs);
  TerStats total;
  for (size_t i = 0; i < hypotheses.size(); ++i) total += segment_stats(hypotheses[i], segments[i]);
  TerScore score = score_from_stats(total);
  score.num_refs = num_refs;
  return score;
}

TerScore Ter::sentence_score(const std::string& hypothesis,
                             const std::vector<std::string>& references) const {
  return corpus_score({hypothesis}, single_segment_streams(references));
}

std::string Ter::signature(int num_refs, bool short_form) const {
  auto yes_no = [](bool value) { return value ? "yes" : "no"; };
  std::string nrefs = num_refs < 0 ? "var" : std::to_string(num_refs);
  return fmt::format(
      short_form ? "#:{}|c:{}|t:tercom|nr:{}|pn:{}|as:{}|v:{}"
                 : "nrefs:{}|case:{}|tok:tercom|norm:{}|punct:{}|asian:{}|version:{}",
      nrefs, options_.case_sensitive ? "mixed" : "lc", yes_no(options_.normalized),
      yes_no(!options_.no_punct), yes_no(options_.asian_support), kSignatureVersion);
}

}  // namespace nmtzoo
