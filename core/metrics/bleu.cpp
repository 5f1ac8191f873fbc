#include "core/metrics/bleu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <unordered_map>
#include <utility>

#include "core/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

// Counts of the n-grams of each order 1..kBleuMaxOrder, keyed by their tokens joined with spaces
// (unambiguous: tokens never contain whitespace).
using NgramCounts = std::array<std::unordered_map<std::string, int64_t>, kBleuMaxOrder>;

NgramCounts count_ngrams(const std::vector<std::string_view>& tokens) {
  NgramCounts counts;
  std::string key;
  for (size_t start = 0; start < tokens.size(); ++start) {
    key.clear();
    for (size_t n = 0; n < static_cast<size_t>(kBleuMaxOrder) && start + n < tokens.size(); ++n) {
      if (n > 0) key.push_back(' ');
      key.append(tokens[start + n]);
      ++counts[n][key];
    }
  }
  return counts;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (text.find(from) == std::string::npos) return;
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, start)) {
    out.append(text, start, hit - start);
    out.append(to);
    start = hit + from.size();
  }
  out.append(text, start, std::string::npos);
  text.swap(out);
}

std::string join_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view word : split_whitespace(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

// Python's re.sub(r'(A)(B)', replacement, text) for single-character classes A and B: the scan
// takes the leftmost match, writes `before` + a + `middle` + b + `after`, and resumes after b.
template <typename Unit, typename IsA, typename IsB>
std::basic_string<Unit> substitute_pairs(const std::basic_string<Unit>& text, IsA is_a, IsB is_b,
                                         const std::basic_string<Unit>& before,
                                         const std::basic_string<Unit>& middle,
                                         const std::basic_string<Unit>& after) {
  std::basic_string<Unit> out;
  out.reserve(text.size() + text.size() / 2);
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && is_a(text[i]) && is_b(text[i + 1])) {
      out += before;
      out.push_back(text[i]);
      out += middle;
      out.push_back(text[i + 1]);
      out += after;
      i += 2;
    } else {
      out.push_back(text[i]);
      ++i;
    }
  }
  return out;
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// tokenizer_re.py's first class [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~ [ \ ] ^ _ ` space ! " # $ %
// & ( ) * + : ; < = > ? @ /. Not in it: the apostrophe, comma, hyphen, period, digits, letters.
bool is_13a_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// tokenizer_zh.py's _UCODE_RANGES, compared as Python compares strings. Two of its bounds are
// typos that Python reads as two-character strings: u'\u20000' is U+2000 followed by '0' and
// u'\u2a6d6' is U+2A6D then '6', so that "range" holds U+2001..U+2A6D (general punctuation,
// currency, arrows, ... as well); likewise u'\u2f800'..u'\u2fa1d' holds U+2F81..U+2FA1.
// Extension B itself (U+20000..) is not in it.
bool is_zh_character(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x3400, 0x4db5}, {0x4e00, 0x9fa5}, {0x9fa6, 0x9fbb}, {0xf900, 0xfa2d}, {0xfa30, 0xfa6a},
      {0xfa70, 0xfad9}, {0x2001, 0x2a6d}, {0x2f81, 0x2fa1}, {0xff00, 0xffef}, {0x2e80, 0x2eff},
      {0x3000, 0x303f}, {0x31c0, 0x31ef}, {0x2f00, 0x2fdf}, {0x2ff0, 0x2fff}, {0x3100, 0x312f},
      {0x31a0, 0x31bf}, {0xfe10, 0xfe1f}, {0xfe30, 0xfe4f}, {0x2600, 0x26ff}, {0x2700, 0x27bf},
      {0x3200, 0x32ff}, {0x3300, 0x33ff},
  };
  return std::any_of(std::begin(kRanges), std::end(kRanges),
                     [c](const auto& range) { return range.first <= c && c <= range.second; });
}

const char* tokenizer_name(BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::kNone:
      return "none";
    case BleuTokenizer::k13a:
      return "13a";
    case BleuTokenizer::kIntl:
      return "intl";
    case BleuTokenizer::kChar:
      return "char";
    case BleuTokenizer::kZh:
      return "zh";
  }
  return "?";
}

const char* smooth_name(BleuSmooth smooth) {
  switch (smooth) {
    case BleuSmooth::kNone:
      return "none";
    case BleuSmooth::kFloor:
      return "floor";
    case BleuSmooth::kAddK:
      return "add-k";
    case BleuSmooth::kExp:
      return "exp";
  }
  return "?";
}

// BLEU.SMOOTH_DEFAULTS; nullopt for the methods that take no value.
std::optional<double> default_smooth_value(BleuSmooth smooth) {
  if (smooth == BleuSmooth::kFloor) return 0.1;
  if (smooth == BleuSmooth::kAddK) return 1.0;
  return std::nullopt;
}

// utils.my_log: log, with log(0) floored at -9999999999.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuTokenizer parse_bleu_tokenizer(const std::string& name) {
  for (auto tokenizer :
       {BleuTokenizer::kNone, BleuTokenizer::k13a, BleuTokenizer::kIntl, BleuTokenizer::kChar,
        BleuTokenizer::kZh}) {
    if (name == tokenizer_name(tokenizer)) return tokenizer;
  }
  throw MetricError("unknown BLEU tokenizer '" + name + "' (nmtzoo has none, 13a, intl, char, zh)");
}

BleuSmooth parse_bleu_smooth(const std::string& name) {
  for (auto smooth : {BleuSmooth::kNone, BleuSmooth::kFloor, BleuSmooth::kAddK, BleuSmooth::kExp}) {
    if (name == smooth_name(smooth)) return smooth;
  }
  throw MetricError("unknown BLEU smoothing method '" + name + "' (none, floor, add-k, exp)");
}

std::string to_string(BleuTokenizer tokenizer) { return tokenizer_name(tokenizer); }
std::string to_string(BleuSmooth smooth) { return smooth_name(smooth); }

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

std::string BleuScore::verbose() const {
  std::string text;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (n > 0) text.push_back('/');
    text += fmt::format("{:.1f}", precisions[n]);
  }
  text += fmt::format(" (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})", bp, ratio, sys_len,
                      ref_len);
  return text;
}

std::string BleuScore::format(int width, const std::string& signature) const {
  return format_score_line("BLEU", score, width, signature, verbose());
}

std::string format_score_line(const std::string& name, double score, int width,
                              const std::string& signature, const std::string& verbose) {
  std::string line = signature.empty() ? name : name + "|" + signature;
  line += fmt::format(" = {:.{}f}", score, std::max(width, 0));
  if (!verbose.empty()) line += " " + verbose;
  return line;
}

namespace {

// tokenizer_re.py, the regular expressions that 13a and zh share. They work on code points and
// this scan on bytes; they agree because every class involved is ASCII, and UTF-8 continuation
// bytes are never ASCII: a multi-byte character matches [^0-9] through its last byte exactly when
// it would as a whole.
std::string tokenize_regexp(std::string_view text) {
  // Every symbol of the first class gets a space on each side.
  std::string spaced;
  spaced.reserve(text.size() * 2);
  for (char c : text) {
    if (is_13a_symbol(c)) {
      spaced.push_back(' ');
      spaced.push_back(c);
      spaced.push_back(' ');
    } else {
      spaced.push_back(c);
    }
  }
  const std::string none, space = " ";
  auto is_period_or_comma = [](char c) { return c == '.' || c == ','; };
  auto is_not_digit = [](char c) { return !is_ascii_digit(c); };
  // ([^0-9])([\.,]) -> '\1 \2 ': period and comma unless preceded by a digit
  spaced = substitute_pairs(spaced, is_not_digit, is_period_or_comma, none, space, space);
  // ([\.,])([^0-9]) -> ' \1 \2': period and comma unless followed by a digit
  spaced = substitute_pairs(spaced, is_period_or_comma, is_not_digit, space, space, none);
  // ([0-9])(-) -> '\1 \2 ': dash preceded by a digit
  spaced = substitute_pairs(
      spaced, is_ascii_digit, [](char c) { return c == '-'; }, none, space, space);
  return join_words(spaced);
}

}  // namespace

// tokenizer_13a.py: mteval-v13a's entities and line joins, then the shared regular expressions on
// " {line} ".
std::string tokenize_13a(std::string_view line) {
  std::string text = " ";
  text += line;
  replace_all(text, "<skipped>", "");
  replace_all(text, "-\n", "");
  replace_all(text, "\n", " ");
  replace_all(text, "&quot;", "\"");
  replace_all(text, "&amp;", "&");
  replace_all(text, "&lt;", "<");
  replace_all(text, "&gt;", ">");
  text.push_back(' ');
  return tokenize_regexp(text);
}

// tokenizer_zh.py: line.strip(), a space on each side of every Chinese character, then the shared
// regular expressions (without 13a's entities and outer spaces).
std::string tokenize_zh(std::string_view line) {
  std::string spaced;
  spaced.reserve(line.size() * 2);
  // An invalid byte is a piece of its own that decodes to U+FFFD: neither space nor Chinese.
  std::vector<std::string_view> pieces = split_code_points(line);
  auto code_point = [&](size_t i) { return decode_utf8(pieces[i]).front(); };
  size_t begin = 0;
  size_t end = pieces.size();
  while (begin < end && is_python_space(code_point(begin))) ++begin;
  while (end > begin && is_python_space(code_point(end - 1))) --end;
  for (size_t i = begin; i < end; ++i) {
    if (is_zh_character(code_point(i))) {
      spaced.push_back(' ');
      spaced.append(pieces[i]);
      spaced.push_back(' ');
    } else {
      spaced.append(pieces[i]);
    }
  }
  return tokenize_regexp(spaced);
}

// tokenizer_intl.py (mteval-v14 international tokenization), on code points.
std::string tokenize_intl(std::string_view line) {
  std::u32string text = decode_utf8(line);
  const std::u32string none, space = U" ";
  auto is_not_number = [](char32_t c) { return !is_unicode_number(c); };
  auto is_punct = [](char32_t c) { return is_unicode_punctuation(c); };
  // (\P{N})(\p{P}) -> '\1 \2 ': punctuation preceded by a non-number
  text = substitute_pairs(text, is_not_number, is_punct, none, space, space);
  // (\p{P})(\P{N}) -> ' \1 \2': punctuation followed by a non-number
  text = substitute_pairs(text, is_punct, is_not_number, space, space, none);
  // (\p{S}) -> ' \1 ': every symbol
  std::u32string spaced;
  spaced.reserve(text.size() * 2);
  for (char32_t c : text) {
    if (is_unicode_symbol(c)) {
      spaced += U' ';
      spaced += c;
      spaced += U' ';
    } else {
      spaced += c;
    }
  }
  return join_words(encode_utf8(spaced));
}

// tokenizer_char.py: " ".join(line) puts a space between all code points; whitespace collapses
// when the n-grams are extracted.
std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (std::string_view piece : split_code_points(line)) {
    if (!out.empty()) out.push_back(' ');
    out.append(piece);
  }
  return out;
}

std::string tokenize_bleu(std::string_view line, BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::kNone:
      return std::string(line);
    case BleuTokenizer::k13a:
      return tokenize_13a(line);
    case BleuTokenizer::kIntl:
      return tokenize_intl(line);
    case BleuTokenizer::kChar:
      return tokenize_char(line);
    case BleuTokenizer::kZh:
      return tokenize_zh(line);
  }
  return std::string(line);
}

int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1;
  int64_t closest_len = -1;
  for (int64_t ref_len : ref_lens) {
    int64_t diff = std::abs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

BleuScore compute_bleu(const BleuStats& stats, BleuSmooth smooth,
                       std::optional<double> smooth_value, bool effective_order) {
  if (!smooth_value) smooth_value = default_smooth_value(smooth);
  BleuScore result;
  result.sys_len = stats.sys_len;
  result.ref_len = stats.ref_len;
  result.counts = stats.correct;
  result.totals = stats.total;
  result.ratio = stats.ref_len != 0
                     ? static_cast<double>(stats.sys_len) / static_cast<double>(stats.ref_len)
                     : 0.0;
  if (stats.sys_len < stats.ref_len) {
    result.bp = stats.sys_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) /
                                                       static_cast<double>(stats.sys_len))
                                  : 0.0;
  } else {
    result.bp = 1.0;
  }
  // No match of any order: 0 whatever the smoothing (sacreBLEU issue #141).
  if (std::all_of(stats.correct.begin(), stats.correct.end(), [](int64_t c) { return c == 0; })) {
    return result;
  }
  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    double correct = static_cast<double>(stats.correct[n - 1]);
    double total = static_cast<double>(stats.total[n - 1]);
    if (smooth == BleuSmooth::kAddK && n > 1) {
      correct += *smooth_value;
      total += *smooth_value;
    }
    if (total == 0.0) break;
    if (effective_order) eff_order = n;
    double& precision = result.precisions[n - 1];
    if (correct == 0.0) {
      if (smooth == BleuSmooth::kExp) {
        smooth_mteval *= 2.0;
        precision = 100.0 / (smooth_mteval * total);
      } else if (smooth == BleuSmooth::kFloor) {
        precision = 100.0 * *smooth_value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += floored_log(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / eff_order);
  return result;
}

std::vector<std::vector<std::string>> single_segment_streams(
    const std::vector<std::string>& references) {
  std::vector<std::vector<std::string>> streams;
  streams.reserve(references.size());
  for (const auto& reference : references) streams.push_back({reference});
  return streams;
}

std::vector<std::vector<std::string>> references_by_segment(
    const std::vector<std::vector<std::string>>& references, size_t num_segments, int* num_refs) {
  if (references.empty()) throw MetricError("no references given");
  for (size_t r = 0; r < references.size(); ++r) {
    if (references[r].size() != num_segments) {
      throw MetricError(fmt::format("reference stream {} has {} segments, the hypotheses {}", r + 1,
                                    references[r].size(), num_segments));
    }
  }
  // An empty reference is a reference of no tokens, as in sacreBLEU since 2.2.0 (its issue #161):
  // Metric._cache_references drops only None, which its command line never produces.
  std::vector<std::vector<std::string>> segments(num_segments);
  for (size_t i = 0; i < num_segments; ++i) {
    segments[i].reserve(references.size());
    for (const auto& stream : references) segments[i].push_back(stream[i]);
  }
  if (num_refs != nullptr) *num_refs = static_cast<int>(references.size());
  return segments;
}

Bleu::Bleu(BleuOptions options) : options_(options) {}

std::string Bleu::preprocess(std::string_view segment) const {
  if (options_.lowercase) {
    std::string lower = lowercase(segment);
    return tokenize_bleu(rstrip_whitespace(lower), options_.tokenizer);
  }
  return tokenize_bleu(rstrip_whitespace(segment), options_.tokenizer);
}

BleuStats Bleu::segment_stats(const std::string& hypothesis,
                              const std::vector<std::string>& references) const {
  // Reference n-grams: the maximum count of each over the references.
  NgramCounts ref_ngrams;
  std::vector<int64_t> ref_lens;
  for (const auto& reference : references) {
    std::string tokenized = preprocess(reference);
    std::vector<std::string_view> tokens = split_whitespace(tokenized);
    ref_lens.push_back(static_cast<int64_t>(tokens.size()));
    NgramCounts counts = count_ngrams(tokens);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      for (auto& [ngram, count] : counts[n]) {
        int64_t& best = ref_ngrams[n][ngram];
        best = std::max(best, count);
      }
    }
  }
  std::string tokenized = preprocess(hypothesis);
  std::vector<std::string_view> tokens = split_whitespace(tokenized);
  BleuStats stats;
  stats.sys_len = static_cast<int64_t>(tokens.size());
  stats.ref_len = closest_ref_len(stats.sys_len, ref_lens);
  NgramCounts hyp_ngrams = count_ngrams(tokens);
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    for (const auto& [ngram, count] : hyp_ngrams[n]) {
      stats.total[n] += count;
      auto match = ref_ngrams[n].find(ngram);
      if (match != ref_ngrams[n].end()) stats.correct[n] += std::min(count, match->second);
    }
  }
  return stats;
}

BleuScore Bleu::score_from_stats(const BleuStats& stats) const {
  return compute_bleu(stats, options_.smooth, options_.smooth_value, options_.effective_order);
}

BleuScore Bleu::corpus_score(const std::vector<std::string>& hypotheses,
                             const std::vector<std::vector<std::string>>& references) const {
  if (hypotheses.empty()) throw MetricError("no hypotheses to score");
  int num_refs = 0;
  auto segments = references_by_segment(references, hypotheses.size(), &num_refs);
  BleuStats total;
  for (size_t i = 0; i < hypotheses.size(); ++i) total += segment_stats(hypotheses[i], segments[i]);
  BleuScore score = score_from_stats(total);
  score.num_refs = num_refs;
  return score;
}

BleuScore Bleu::sentence_score(const std::string& hypothesis,
                               const std::vector<std::string>& references) const {
  return corpus_score({hypothesis}, single_segment_streams(references));
}

std::string Bleu::signature(int num_refs, bool short_form) const {
  std::string smooth = smooth_name(options_.smooth);
  if (auto fallback = default_smooth_value(options_.smooth)) {
    smooth += fmt::format("[{:.2f}]", options_.smooth_value.value_or(*fallback));
  }
  std::string nrefs = num_refs < 0 ? "var" : std::to_string(num_refs);
  return fmt::format(short_form ? "#:{}|c:{}|e:{}|tok:{}|s:{}|v:{}"
                                : "nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}",
                     nrefs, options_.lowercase ? "lc" : "mixed",
                     options_.effective_order ? "yes" : "no", tokenizer_name(options_.tokenizer),
                     smooth, kSignatureVersion);
}

BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        BleuOptions options) {
  return Bleu(options).sentence_score(hypothesis, references);
}

}  // namespace nmtzoo
