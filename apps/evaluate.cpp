// nmtzoo-evaluate: BLEU, chrF and TER of detokenised output, with sacreBLEU 2.6.0's confidence
// intervals and paired significance tests, as sacreBLEU scores and prints them.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/common.h"
#include "core/io/text_file.h"
#include "core/metrics/bleu.h"
#include "core/metrics/chrf.h"
#include "core/metrics/results_table.h"
#include "core/metrics/significance.h"
#include "core/metrics/ter.h"
#include "core/metrics/text_normalize.h"

namespace {

using namespace nmtzoo;

const char* const kDescription =
    "Score detokenised output with BLEU, chrF and TER exactly as sacreBLEU 2.6.0 does (same\n"
    "tokenizers, smoothing, rounding, flags, confidence intervals and significance tests):\n"
    "    nmtzoo-evaluate REF [REF ...] -i HYP [-m bleu chrf ter] [options]\n"
    "    nmtzoo-evaluate REF -i BASELINE SYS2 [SYS3 ...] -m bleu chrf ter --paired-bs\n"
    "    cat HYP | nmtzoo-evaluate REF\n"
    "References come before -i. Files may be gzipped. Hypotheses are read from stdin without -i\n"
    "(tab-separated fields of stdin are several systems, as in sacreBLEU).\n"
    "\n"
    "Differences from the sacrebleu command:\n"
    "  * Output is sacreBLEU's text format by default (sacrebleu -f text), one line per metric:\n"
    "      BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo = 35.2 ...\n"
    "    --json (or -f json, or SACREBLEU_FORMAT=json) prints sacreBLEU's JSON instead; with\n"
    "    --sentence-level it prints one JSON object per line. The version 2.6.0+nmtzoo marks this\n"
    "    implementation. Colours are never used (sacreBLEU's output with --no-color).\n"
    "  * Several systems, --paired-bs, --paired-ar and --confidence give sacreBLEU's numbers\n"
    "    (its numpy generator is reproduced; SACREBLEU_SEED as in sacreBLEU, default 12345);\n"
    "    --paired-jobs N sets threads rather than processes. No -f latex.\n"
    "  * No test-set download (-t). Tokenizers: 13a (default), intl, char, none, zh; not\n"
    "    ja-mecab, ko-mecab, spm, flores*.\n"
    "As in sacreBLEU, --lowercase applies to BLEU only; chrF has --chrf-lowercase and TER\n"
    "--ter-case-sensitive. sacreBLEU's short aliases work: -lc -tok -s -sv -cc -cw -sl -sh -nr -w\n"
    "-b -f -m -i -q -l -ci -cin -par -pbs -parn -pbsn -j -nc.";

// sacreBLEU's multi-letter single-dash aliases, which CLI11 cannot declare as names.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table = {
      {"-lc", "--lowercase"},       {"-tok", "--tokenize"},       {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-sl", "--sentence-level"},
      {"-sh", "--short"},           {"-nr", "--num-refs"},        {"-ci", "--confidence"},
      {"-cin", "--confidence-n"},   {"-par", "--paired-ar"},      {"-pbs", "--paired-bs"},
      {"-parn", "--paired-ar-n"},   {"-pbsn", "--paired-bs-n"},   {"-nc", "--no-color"},
  };
  return table;
}

struct Cli {
  std::vector<std::string> refs;
  std::vector<std::string> input;
  std::vector<std::string> metrics{"bleu"};
  int num_refs = 1;
  std::optional<std::string> tokenize;  // unset: 13a, or what -l's target language asks for
  std::string language_pair;
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool lowercase = false;
  bool force = false;
  int chrf_char_order = 6;
  int chrf_word_order = 0;
  int chrf_beta = 2;
  bool chrf_whitespace = false;
  bool chrf_lowercase = false;
  bool chrf_eps_smoothing = false;
  bool ter_case_sensitive = false;
  bool ter_asian_support = false;
  bool ter_no_punct = false;
  bool ter_normalized = false;
  bool confidence = false;
  int64_t confidence_n = 1000;
  bool paired_ar = false;
  bool paired_bs = false;
  int64_t paired_ar_n = 10000;
  int64_t paired_bs_n = 1000;
  int paired_jobs = 2;
  bool no_color = false;
  bool sentence_level = false;
  bool score_only = false;
  bool short_signature = false;
  bool quiet = false;
  int width = 1;
  std::string format = "text";
  bool json = false;
};

size_t code_point_count(std::string_view text) { return split_code_points(text).size(); }

struct TextStream {
  std::string name;
  std::vector<std::string> lines;  // right-stripped, as sacreBLEU reads them
};

std::string text_problem_message(const std::string& name, int64_t line, const TextProblem& problem) {
  return fmt::format("{}:{}: {} of the line", name, line, problem.describe());
}

TextStream read_file(const std::string& path) {
  TextStream stream{path, {}};
  LineReader reader(path);
  std::string line;
  while (reader.next(line)) {
    if (auto bad = find_text_problem(line)) {
      throw IoError(text_problem_message(path, reader.line_number(), *bad));
    }
    stream.lines.emplace_back(rstrip_whitespace(line));
  }
  return stream;
}

// Systems on stdin, lines split like Python's text-mode stdin (universal newlines: \n, \r\n,
// \r); as in sacreBLEU, tab-separated fields are several systems, as many on every line as on the
// first.
std::vector<TextStream> read_stdin_systems() {
  std::vector<TextStream> systems;
  std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  size_t start = 0;
  int64_t number = 0;
  while (start < data.size()) {
    size_t end = data.find_first_of("\r\n", start);
    std::string line = data.substr(start, end == std::string::npos ? end : end - start);
    if (end == std::string::npos) {
      start = data.size();
    } else {
      start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
    }
    ++number;
    if (auto bad = find_text_problem(line)) {
      throw IoError(text_problem_message("<stdin>", number, *bad));
    }
    std::vector<std::string_view> fields;
    std::string_view rest = rstrip_whitespace(line);
    for (size_t tab = rest.find('\t'); tab != std::string_view::npos; tab = rest.find('\t')) {
      fields.push_back(rest.substr(0, tab));
      rest.remove_prefix(tab + 1);
    }
    fields.push_back(rest);
    if (systems.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) {
        systems.push_back({fmt::format("System {}", i + 1), {}});
      }
    } else if (fields.size() != systems.size()) {
      throw IoError(fmt::format(
          "<stdin>:{}: {} tab-separated systems, but the first line has {} (tabs separate "
          "systems on stdin, as in sacreBLEU)",
          number, fields.size(), systems.size()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      systems[i].lines.emplace_back(rstrip_whitespace(fields[i]));
    }
  }
  if (systems.empty()) systems.push_back({"<stdin>", {}});
  return systems;
}

// Reference streams: one per file, or --num-refs tab-separated fields of a single file.
std::vector<TextStream> read_references(const Cli& cli) {
  std::vector<TextStream> streams;
  for (const auto& path : cli.refs) streams.push_back(read_file(path));
  if (cli.num_refs == 1) return streams;
  TextStream joined = std::move(streams.front());
  streams.assign(static_cast<size_t>(cli.num_refs), TextStream{});
  for (int r = 0; r < cli.num_refs; ++r) {
    streams[static_cast<size_t>(r)].name = fmt::format("{} (field {})", joined.name, r + 1);
  }
  for (size_t i = 0; i < joined.lines.size(); ++i) {
    std::vector<std::string> fields;
    std::string_view rest = joined.lines[i];
    while (static_cast<int>(fields.size()) < cli.num_refs - 1) {
      size_t tab = rest.find('\t');
      if (tab == std::string_view::npos) break;
      fields.emplace_back(rest.substr(0, tab));
      rest.remove_prefix(tab + 1);
    }
    fields.emplace_back(rest);
    if (static_cast<int>(fields.size()) != cli.num_refs) {
      throw IoError(fmt::format("{}:{}: expected {} tab-separated references, found {}",
                                joined.name, i + 1, cli.num_refs, fields.size()));
    }
    for (size_t r = 0; r < fields.size(); ++r) streams[r].lines.push_back(std::move(fields[r]));
  }
  return streams;
}

void check_lengths(const TextStream& hypotheses, const std::vector<TextStream>& references) {
  if (hypotheses.lines.empty()) throw IoError("'" + hypotheses.name + "' has no lines to score");
  for (const auto& reference : references) {
    if (reference.lines.size() != hypotheses.lines.size()) {
      throw IoError(fmt::format(
          "line counts differ: hypotheses '{}' have {} lines, but "
          "reference '{}' has {}",
          hypotheses.name, hypotheses.lines.size(), reference.name, reference.lines.size()));
    }
  }
}

// One metric's corpus (or segment) result, in the shapes sacreBLEU prints.
struct Result {
  std::string name;
  double score = 0.0;
  std::string verbose;  // BLEU only
  std::string signature;
  std::string short_signature;
  std::optional<ConfidenceInterval> confidence;  // --confidence
};

// Score.format's `sc`: the score, and "(μ = MEAN ± CI)" after a bootstrap with a positive mean.
std::string score_text(const Result& result, int width) {
  std::string text = fmt::format("{:.{}f}", result.score, width);
  if (result.confidence && result.confidence->mean > 0) {
    text += fmt::format(" (μ = {:.{}f} ± {:.{}f})", result.confidence->mean, width,
                        result.confidence->ci, width);
  }
  return text;
}

// sacreBLEU's Score.format(..., is_json=True): json.dumps(d, indent=1, ensure_ascii=False) of
// name, score (rounded to the width), signature, the confidence fields, verbose score and the
// signature's fields, in that order; with `indent` false, json.dumps(d) on one line.
std::string to_json(const Result& result, int width, bool indent) {
  std::vector<std::pair<std::string, std::string>> fields;  // key, JSON value text
  auto add = [&](const std::string& key, const std::string& value) {
    fields.emplace_back(key, nlohmann::json(value).dump());
  };
  auto rounded = [&](double value) {
    return python_float_repr(std::stod(fmt::format("{:.{}f}", value, width)));
  };
  add("name", result.name);
  fields.emplace_back("score", rounded(result.score));
  add("signature", result.signature);
  if (result.confidence && result.confidence->mean > 0) {
    fields.emplace_back("confidence_mean", rounded(result.confidence->mean));
    fields.emplace_back("confidence_var", rounded(result.confidence->ci));
    const std::string text = score_text(result, width);
    add("confidence", text.substr(text.find('(') + 1, text.size() - text.find('(') - 2));
  }
  if (!result.verbose.empty()) add("verbose_score", result.verbose);
  std::string_view rest = result.signature;
  while (!rest.empty()) {
    std::string_view pair = rest.substr(0, rest.find('|'));
    rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
    size_t colon = pair.find(':');
    add(std::string(pair.substr(0, colon)), std::string(pair.substr(colon + 1)));
  }
  std::string text = indent ? "{\n" : "{";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) text += indent ? ",\n" : ", ";
    text += (indent ? " " : "") + nlohmann::json(fields[i].first).dump() + ": " + fields[i].second;
  }
  return text + (indent ? "\n}" : "}");
}

std::string text_line(const Result& result, const Cli& cli) {
  const std::string score = score_text(result, cli.width);
  if (cli.score_only) return score;
  const std::string& signature = cli.short_signature ? result.short_signature : result.signature;
  std::string line = signature.empty() ? result.name : result.name + "|" + signature;
  line += " = " + score;
  return result.verbose.empty() ? line : line + " " + result.verbose;
}

// sacreBLEU's print_single_results for one system.
void print_corpus_results(const std::vector<Result>& results, const Cli& cli) {
  if (cli.format == "json") {
    std::vector<std::string> texts;
    for (const auto& result : results) {
      texts.push_back(cli.score_only ? score_text(result, cli.width)
                                     : to_json(result, cli.width, true));
    }
    if (texts.size() == 1) {
      std::cout << texts.front() << "\n";
    } else {
      std::cout << "[\n";
      for (size_t i = 0; i < texts.size(); ++i) {
        std::cout << texts[i] << (i + 1 < texts.size() ? ",\n" : "\n");
      }
      std::cout << "]\n";
    }
    return;
  }
  std::vector<std::string> lines;
  for (const auto& result : results) lines.push_back(text_line(result, cli));
  if (lines.size() == 1 || cli.score_only) {
    for (const auto& line : lines) std::cout << line << "\n";
    return;
  }
  // Several metrics: right-align the names so that the '=' line up.
  size_t name_width = 0;
  for (const auto& line : lines) name_width = std::max(name_width, line.find('=') - 1);
  for (const auto& line : lines) {
    size_t name_end = line.find('=') - 1;
    std::cout << std::string(name_width - name_end, ' ') << line << "\n";
  }
}

// Python's json.dumps(value, indent=4) with its default ensure_ascii, for print_results_table.
std::string json_string(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

std::string json_number(const std::optional<double>& value) {
  return value ? python_float_repr(*value) : "null";
}

// One table cell of paired tests (_format_score_lines): "SCORE (MEAN ± CI)" and, for a compared
// system, "(p = P)" on a second line, with a star when p <= 0.05.
std::string paired_cell(const PairedResult& result, int width) {
  std::string text = fmt::format("{:.{}f}", result.score, width);
  if (result.mean) text += fmt::format(" ({:.{}f} ± {:.{}f})", *result.mean, width, *result.ci, width);
  if (result.p_value) {
    text += fmt::format("\n(p = {:.4f}){}", *result.p_value, *result.p_value > 0.05 ? "" : "*");
  }
  return text;
}

// The explanation sacreBLEU's print_results_table prints under a paired-test table.
void print_paired_header(const Cli& cli, const std::string& baseline_name) {
  const std::string message =
      cli.paired_bs ? fmt::format("Paired bootstrap resampling test with {} resampling trials",
                                  cli.paired_bs_n)
                    : fmt::format("Paired approximate randomization test with {} trials",
                                  cli.paired_ar_n);
  const std::string dashes(code_point_count(message), '-');
  std::cout << dashes << "\n" << message << "\n" << dashes << "\n";
  std::cout << " - Each system is pairwise compared to " << baseline_name << ".\n";
  std::cout << (cli.paired_bs ? "   Actual system score / bootstrap estimated true mean / 95% CI "
                                "are provided for each metric.\n"
                              : "   Actual system score is provided for each metric.\n");
  std::cout
      << "\n"
      << " - Null hypothesis: the system and the baseline translations are essentially\n"
      << "   generated by the same underlying process. For a given system and the baseline,\n"
      << "   the p-value is roughly the probability of the absolute score difference (delta)\n"
      << "   or higher occurring due to chance, under the assumption that the null hypothesis "
         "is correct.\n"
      << "\n"
      << " - Assuming a significance threshold of 0.05, the null hypothesis can be rejected\n"
      << "   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely to be "
         "attributed\n"
      << "   to chance, hence the system is significantly \"different\" than the baseline.\n"
      << "   Otherwise, the p-values are highlighted in red.\n"
      << "\n"
      << " - NOTE: Significance does not tell whether a system is \"better\" than the baseline "
         "but rather\n"
      << "   emphasizes the \"difference\" of the systems in terms of the replicability of the "
         "delta.\n"
      << "\n";
}

// sacreBLEU's print_results_table: the systems x metrics table in text (tabulate's fancy_grid),
// the paired-test explanation and the signatures; or the JSON list of systems.
void print_results_table(const std::vector<std::string>& system_names,
                         const std::vector<std::string>& metric_names,
                         const std::vector<std::vector<std::string>>& text_cells,
                         const std::vector<std::vector<std::string>>& json_values,
                         const std::vector<std::string>& signatures, const Cli& cli) {
  if (cli.format == "json") {
    std::string text = "[";
    for (size_t s = 0; s < system_names.size(); ++s) {
      text += s > 0 ? ",\n    {\n" : "\n    {\n";
      text += "        \"system\": " + json_string(system_names[s]);
      for (size_t m = 0; m < metric_names.size(); ++m) {
        text += ",\n        " + json_string(metric_names[m]) + ": " + json_values[s][m];
      }
      text += "\n    }";
    }
    std::cout << text << (system_names.empty() ? "]\n" : "\n]\n");
    return;
  }
  const bool paired = cli.paired_bs || cli.paired_ar;
  std::vector<std::string> headers{"System"};
  for (const auto& name : metric_names) headers.push_back(cli.paired_bs ? name + " (μ ± 95% CI)" : name);
  std::vector<std::vector<std::string>> rows;
  for (size_t s = 0; s < system_names.size(); ++s) {
    rows.push_back({system_names[s]});
    rows.back().insert(rows.back().end(), text_cells[s].begin(), text_cells[s].end());
  }
  std::cout << fancy_grid(headers, rows) << "\n";
  if (paired) print_paired_header(cli, system_names.front());
  std::cout << "-----------------\nMetric signatures\n-----------------\n";
  for (size_t m = 0; m < metric_names.size(); ++m) {
    const size_t name_length = code_point_count(metric_names[m]);
    std::cout << " - " << metric_names[m] << std::string(name_length < 10 ? 10 - name_length : 0, ' ')
              << " " << signatures[m] << "\n";
  }
}

// The metrics as asked, without repeats.
std::vector<std::string> metric_order(const std::vector<std::string>& requested, bool sorted) {
  std::vector<std::string> names;
  for (const auto& name : requested) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  // Paired tests keep the command line's order; the other modes sort (BLEU, CHRF, TER).
  if (sorted) std::sort(names.begin(), names.end());
  return names;
}

// sacreBLEU's warning for output that looks tokenized (BLEU without --force).
void warn_if_tokenized(const TextStream& hypotheses, const Cli& cli) {
  if (cli.force || cli.quiet) return;
  auto count =
      std::count_if(hypotheses.lines.begin(), hypotheses.lines.end(), [](const std::string& line) {
        return line.size() >= 2 && line.compare(line.size() - 2, 2, " .") == 0;
      });
  if (count >= 100) {
    std::cerr << "nmtzoo-evaluate: " << hypotheses.name << ": " << count
              << " lines end in a tokenized period (' .'); the output looks tokenized, which lowers "
                 "BLEU. Detokenize it, or pass --force.\n";
  }
}

// BLEU.__init__'s choice: --tokenize if given, else by -l's target language (zh -> zh, ja ->
// ja-mecab, ko -> ko-mecab), else 13a; with a mismatch between the two, sacreBLEU's warning.
std::string bleu_tokenizer_name(const Cli& cli) {
  std::string target;
  if (!cli.language_pair.empty()) {
    size_t dash = cli.language_pair.find('-');
    if (dash == std::string::npos) {
      throw IoError("--language-pair '" + cli.language_pair + "' is not of the form SRC-TRG");
    }
    target = cli.language_pair.substr(dash + 1);
  }
  const std::map<std::string, std::string> by_language = {
      {"zh", "zh"}, {"ja", "ja-mecab"}, {"ko", "ko-mecab"}};
  auto best = by_language.find(target);
  if (!cli.tokenize) {
    if (best == by_language.end()) return "13a";
    if (best->second != "zh") {
      throw IoError(fmt::format(
          "-l {} selects sacreBLEU's {} tokenizer, which needs MeCab and is not in "
          "nmtzoo-evaluate; choose one with --tokenize (13a, intl, char, none, zh)",
          cli.language_pair, best->second));
    }
    return best->second;
  }
  if (best != by_language.end() && *cli.tokenize != best->second && !cli.quiet) {
    const char* language = target == "zh" ? "Chinese" : target == "ja" ? "Japanese" : "Korean";
    std::cerr << fmt::format("nmtzoo-evaluate: consider using the '{}' or 'spm' tokenizer for {}.\n",
                             best->second, language);
  }
  return *cli.tokenize;
}

std::unique_ptr<TestedMetric> make_metric(const std::string& name, const Cli& cli) {
  if (name == "bleu") {
    BleuOptions options;
    options.tokenizer = parse_bleu_tokenizer(bleu_tokenizer_name(cli));
    options.smooth = parse_bleu_smooth(cli.smooth_method);
    options.smooth_value = cli.smooth_value;
    options.lowercase = cli.lowercase;
    options.effective_order = cli.sentence_level;  // as sacreBLEU does for sentence BLEU
    return make_tested_metric(options);
  }
  if (name == "chrf") {
    ChrfOptions options;
    options.char_order = cli.chrf_char_order;
    options.word_order = cli.chrf_word_order;
    options.beta = cli.chrf_beta;
    options.lowercase = cli.chrf_lowercase;
    options.whitespace = cli.chrf_whitespace;
    options.eps_smoothing = cli.chrf_eps_smoothing;
    return make_tested_metric(options);
  }
  TerOptions options;
  options.case_sensitive = cli.ter_case_sensitive;
  options.asian_support = cli.ter_asian_support;
  options.no_punct = cli.ter_no_punct;
  options.normalized = cli.ter_normalized;
  return make_tested_metric(options);
}

// The systems to score: the -i files (in paired tests a repeat of the baseline is dropped, as
// sacreBLEU does) or the tab-separated systems of stdin.
std::vector<TextStream> read_systems(const Cli& cli, bool paired) {
  if (cli.input.empty()) return read_stdin_systems();
  std::vector<TextStream> systems;
  for (const auto& path : cli.input) {
    auto same = [&](const TextStream& system) { return system.name == path; };
    if (std::any_of(systems.begin(), systems.end(), same)) {
      if (paired && systems.front().name == path) continue;
      throw IoError("'" + path + "' is given twice: each system needs its own file name");
    }
    systems.push_back(read_file(path));
  }
  return systems;
}

int run(const Cli& cli) {
  if (cli.refs.empty()) throw IoError("give at least one reference file before -i");
  if (cli.num_refs != 1 && cli.refs.size() > 1) {
    throw IoError("--num-refs splits one reference file on tabs; give only one reference file");
  }
  if (cli.sentence_level && cli.metrics.size() > 1) {
    throw IoError("only one metric can be used in sentence-level mode");
  }
  if (cli.format == "latex") throw IoError("-f latex is not supported; use text or json");
  const bool paired = cli.paired_bs || cli.paired_ar;
  const SacrebleuSeed seed = SacrebleuSeed::from_environment();  // checked before any work

  const std::vector<TextStream> reference_streams = read_references(cli);
  std::vector<TextStream> systems = read_systems(cli, paired);
  if (cli.sentence_level && systems.size() > 1) {
    throw IoError("only one system can be evaluated in sentence-level mode");
  }
  if (cli.sentence_level && (cli.confidence || paired)) {
    throw IoError("statistical tests are unavailable in sentence-level mode");
  }
  if (paired && systems.size() == 1) {
    throw IoError("paired tests need several systems: give them to -i (the first is the baseline)");
  }
  if (systems.size() > 1 && cli.confidence) {
    throw IoError("--confidence is for one system; use --paired-bs or --paired-ar for several");
  }
  for (const auto& system : systems) check_lengths(system, reference_streams);
  ReferenceStreams references;
  for (const auto& stream : reference_streams) references.push_back(stream.lines);
  const int num_refs = static_cast<int>(references.size());

  const std::vector<std::string> names = metric_order(cli.metrics, !paired);
  std::vector<std::unique_ptr<TestedMetric>> metrics;
  for (const auto& name : names) metrics.push_back(make_metric(name, cli));
  if (std::find(names.begin(), names.end(), "bleu") != names.end()) {
    for (const auto& system : systems) warn_if_tokenized(system, cli);
  }

  if (cli.sentence_level) {
    const TestedMetric& metric = *metrics.front();
    const std::vector<double> statistics = metric.segment_statistics(systems[0].lines, references);
    const size_t width = metric.statistics_size();
    for (size_t i = 0; i < systems[0].lines.size(); ++i) {
      const double* row = statistics.data() + i * width;
      Result result{metric.name(), metric.score(row), metric.verbose(row),
                    metric.signature(num_refs, false), metric.signature(num_refs, true), {}};
      if (cli.format == "json" && !cli.score_only) {
        std::cout << to_json(result, cli.width, false) << "\n";
      } else {
        std::cout << text_line(result, cli) << "\n";
      }
    }
    return 0;
  }

  if (systems.size() == 1) {
    const bool bootstrap = cli.confidence && cli.confidence_n > 1;
    std::vector<Result> results;
    for (const auto& metric : metrics) {
      const std::vector<double> statistics = metric->segment_statistics(systems[0].lines, references);
      const std::vector<double> sums = sum_statistics(statistics, metric->statistics_size());
      Result result{metric->name(), metric->score(sums.data()), metric->verbose(sums.data()),
                    metric->signature(num_refs, false), metric->signature(num_refs, true), {}};
      if (bootstrap) {
        // Metric.corpus_score(n_bootstrap=n): a fresh default_rng(seed) per metric, and bs and
        // seed (as given) in the signature.
        result.confidence = bootstrap_confidence(*metric, statistics, systems[0].lines.size(),
                                                 cli.confidence_n, seed.value);
        const std::vector<std::pair<std::string, std::string>> fields = {
            {"bs", std::to_string(cli.confidence_n)}, {"seed", seed.text}};
        result.signature = signature_with_test_fields(result.signature, fields, false);
        result.short_signature = signature_with_test_fields(result.short_signature, fields, true);
      }
      results.push_back(std::move(result));
    }
    print_corpus_results(results, cli);
    return 0;
  }

  std::vector<std::string> system_names;
  std::vector<std::vector<std::string>> hypotheses;
  for (auto& system : systems) {
    system_names.push_back(system.name);
    hypotheses.push_back(std::move(system.lines));
  }
  if (paired) {
    system_names.front() =
        cli.input.empty() ? "Baseline" : "Baseline: " + system_names.front();
    if (cli.input.empty()) {
      for (size_t s = 1; s < system_names.size(); ++s) system_names[s] = fmt::format("System {}", s);
    }
  }
  std::vector<std::string> metric_names;
  std::vector<std::vector<std::string>> text_cells(hypotheses.size());
  std::vector<std::vector<std::string>> json_values(hypotheses.size());
  std::vector<std::string> signatures;
  if (!paired) {
    for (const auto& metric : metrics) {
      metric_names.push_back(metric->name());
      signatures.push_back(metric->signature(num_refs, cli.short_signature));
      for (size_t s = 0; s < hypotheses.size(); ++s) {
        const std::vector<double> sums = sum_statistics(
            metric->segment_statistics(hypotheses[s], references), metric->statistics_size());
        text_cells[s].push_back(fmt::format("{:.{}f}", metric->score(sums.data()), cli.width));
        json_values[s].push_back(json_string(text_cells[s].back()));
      }
    }
  } else {
    PairedTestOptions options;
    options.kind = cli.paired_bs ? PairedTestKind::kBootstrap : PairedTestKind::kApproximateRandomization;
    options.samples = cli.paired_bs ? cli.paired_bs_n : cli.paired_ar_n;
    options.seed = seed;
    options.threads = cli.paired_jobs > 0 ? cli.paired_jobs
                                          : static_cast<int>(std::thread::hardware_concurrency());
    std::vector<const TestedMetric*> tested;
    for (const auto& metric : metrics) tested.push_back(metric.get());
    const PairedTestReport report = paired_test(hypotheses, references, tested, options);
    metric_names = report.metric_names;
    signatures = cli.short_signature ? report.short_signatures : report.signatures;
    for (size_t s = 0; s < hypotheses.size(); ++s) {
      for (const PairedResult& result : report.results[s]) {
        text_cells[s].push_back(paired_cell(result, cli.width));
        json_values[s].push_back(fmt::format(
            "{{\n            \"score\": {},\n            \"p_value\": {},\n            \"mean\": "
            "{},\n            \"ci\": {}\n        }}",
            python_float_repr(result.score), json_number(result.p_value),
            json_number(result.mean), json_number(result.ci)));
      }
    }
  }
  print_results_table(system_names, metric_names, text_cells, json_values, signatures, cli);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    auto alias = aliases().find(argv[i]);
    args.emplace_back(alias == aliases().end() ? argv[i] : alias->second);
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order

  CLI::App app{kDescription, "nmtzoo-evaluate"};
  app.get_formatter()->column_width(34);
  Cli cli;
  app.add_option("refs", cli.refs, "reference files (plain or gzip), one segment a line")
      ->type_name("REF");
  app.add_option("-i,--input", cli.input,
                 "system outputs (the first is the baseline of paired tests); stdin when absent")
      ->type_name("HYP");
  app.add_option("-m,--metrics", cli.metrics, "metrics to compute (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf", "ter"}));
  app.add_option("-l,--language-pair", cli.language_pair,
                 "SRC-TRG: a zh target selects the zh BLEU tokenizer unless --tokenize is given")
      ->type_name("SRC-TRG");
  app.add_option("--num-refs", cli.num_refs,
                 "(-nr) split the single reference file on tabs into this many references")
      ->check(CLI::PositiveNumber);

  auto* bleu_group = app.add_option_group("BLEU");
  bleu_group->add_option("--tokenize", cli.tokenize, "(-tok) BLEU tokenizer (default: 13a)")
      ->check(CLI::IsMember({"none", "13a", "intl", "char", "zh"}));
  bleu_group
      ->add_option("-s,--smooth-method", cli.smooth_method, "BLEU smoothing method (default: exp)")
      ->check(CLI::IsMember({"none", "floor", "add-k", "exp"}));
  bleu_group
      ->add_option("--smooth-value", cli.smooth_value,
                   "(-sv) value for floor (default 0.1) and add-k (default 1)")
      ->check(finite_non_negative());
  bleu_group->add_flag("--lowercase", cli.lowercase, "(-lc) case-insensitive BLEU");
  bleu_group->add_flag("--force", cli.force, "do not warn about output that looks tokenized");

  auto* chrf_group = app.add_option_group("chrF");
  chrf_group
      ->add_option("--chrf-char-order", cli.chrf_char_order,
                   "(-cc) character n-gram order (default: 6)")
      ->check(CLI::NonNegativeNumber);
  chrf_group
      ->add_option("--chrf-word-order", cli.chrf_word_order,
                   "(-cw) word n-gram order (default: 0); 2 gives chrF++")
      ->check(CLI::NonNegativeNumber);
  chrf_group->add_option("--chrf-beta", cli.chrf_beta, "recall weight (default: 2)")
      ->check(finite_non_negative());
  chrf_group->add_flag("--chrf-whitespace", cli.chrf_whitespace,
                       "keep whitespace in character n-grams");
  chrf_group->add_flag("--chrf-lowercase", cli.chrf_lowercase, "case-insensitive chrF");
  chrf_group->add_flag("--chrf-eps-smoothing", cli.chrf_eps_smoothing,
                       "epsilon smoothing as chrF++.py, NLTK and Moses, not effective order");

  auto* ter_group = app.add_option_group("TER (the defaults replicate Tercom)");
  ter_group->add_flag("--ter-case-sensitive", cli.ter_case_sensitive, "case-sensitive TER");
  ter_group->add_flag("--ter-asian-support", cli.ter_asian_support,
                      "with --ter-normalized, split CJK into characters; with --ter-no-punct, "
                      "also remove CJK and full-width punctuation");
  ter_group->add_flag("--ter-no-punct", cli.ter_no_punct, "remove punctuation");
  ter_group->add_flag("--ter-normalized", cli.ter_normalized,
                      "Tercom's normalisation and tokenization");

  auto* test_group = app.add_option_group("Confidence intervals and paired significance tests");
  test_group->add_flag("--confidence", cli.confidence,
                       "(-ci) 95% confidence interval of one system by bootstrap resampling");
  test_group->add_option("--confidence-n", cli.confidence_n,
                         "(-cin) bootstrap resamples for --confidence (default: 1000)");
  auto* paired_ar = test_group->add_flag(
      "--paired-ar", cli.paired_ar,
      "(-par) paired approximate randomization of every system against the first");
  auto* paired_bs = test_group->add_flag(
      "--paired-bs", cli.paired_bs,
      "(-pbs) paired bootstrap resampling of every system against the first");
  paired_ar->excludes(paired_bs);
  test_group->add_option("--paired-ar-n", cli.paired_ar_n,
                         "(-parn) approximate randomization trials (default: 10000)");
  test_group->add_option("--paired-bs-n", cli.paired_bs_n,
                         "(-pbsn) bootstrap resamples of the paired test (default: 1000)");
  test_group
      ->add_option("-j,--paired-jobs", cli.paired_jobs,
                   "threads for the paired tests (default: 2; 0 = one per core)")
      ->check(CLI::NonNegativeNumber);

  auto* report_group = app.add_option_group("Output");
  report_group->add_flag("--sentence-level", cli.sentence_level,
                         "(-sl) one score per segment, with effective order for BLEU");
  report_group->add_flag("-b,--score-only", cli.score_only, "print only the scores");
  report_group->add_option("-w,--width", cli.width, "decimals of the scores (default: 1)")
      ->check(CLI::Range(0, 20));
  report_group
      ->add_option("-f,--format", cli.format,
                   "text (default) or json; SACREBLEU_FORMAT=text|json overrides it")
      ->check(CLI::IsMember({"text", "json", "latex"}));
  report_group->add_flag("--json", cli.json, "same as --format json: sacreBLEU's JSON output");
  report_group->add_flag("--short", cli.short_signature, "(-sh) abbreviated signature");
  report_group->add_flag("-q,--quiet", cli.quiet, "no warnings");
  report_group->add_flag("--no-color", cli.no_color, "(-nc) accepted for sacreBLEU's sake: never coloured");
  app.set_version_flag("-V,--version", std::string("nmtzoo-evaluate, sacreBLEU ") +
                                           kSacrebleuVersion + " compatible (" + kSignatureVersion +
                                           ")");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (cli.json) cli.format = "json";
  if (const char* format = std::getenv("SACREBLEU_FORMAT")) {
    std::string value = format;
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "json" || value == "text" || value == "latex") cli.format = value;
  }
  return run_app([&] { return run(cli); });
}
