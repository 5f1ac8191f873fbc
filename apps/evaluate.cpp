// nmtzoo-evaluate: BLEU and chrF of one system's detokenised output, as sacreBLEU 2.x scores it.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/common.h"
#include "core/io/text_file.h"
#include "core/metrics/bleu.h"
#include "core/metrics/chrf.h"
#include "core/metrics/text_normalize.h"

namespace {

using namespace nmtzoo;

const char* const kDescription =
    "Score one system's detokenised output with BLEU and/or chrF exactly as sacreBLEU 2.6.0\n"
    "does (same tokenizers, smoothing, rounding and flags), without Python:\n"
    "    nmtzoo-evaluate REF [REF ...] -i HYP [-m bleu chrf] [options]\n"
    "    cat HYP | nmtzoo-evaluate REF\n"
    "References come before -i. Files may be gzipped. Hypotheses are read from stdin without -i.\n"
    "\n"
    "Differences from the sacrebleu command:\n"
    "  * Output is sacreBLEU's text format by default (sacrebleu -f text), one line per metric:\n"
    "      BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo = 35.2 ...\n"
    "    --json (or -f json) prints sacreBLEU's default JSON instead; with --sentence-level it\n"
    "    prints one JSON object per line. The version 2.6.0+nmtzoo marks this implementation.\n"
    "  * One system only; no test-set download (-t), significance tests or TER.\n"
    "  * Tokenizers: 13a (default), intl, char, none, zh; not ja-mecab, ko-mecab, spm, flores*.\n"
    "As in sacreBLEU, --lowercase applies to BLEU only; chrF has --chrf-lowercase. sacreBLEU's\n"
    "short aliases work: -lc -tok -s -sv -cc -cw -sl -sh -nr -w -b -f -m -i -q -l.";

// sacreBLEU's multi-letter single-dash aliases, which CLI11 cannot declare as names.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table = {
      {"-lc", "--lowercase"},       {"-tok", "--tokenize"},       {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-sl", "--sentence-level"},
      {"-sh", "--short"},           {"-nr", "--num-refs"},
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
  bool sentence_level = false;
  bool score_only = false;
  bool short_signature = false;
  bool quiet = false;
  int width = 1;
  std::string format = "text";
  bool json = false;
};

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

// Hypotheses on stdin, split like Python's text-mode stdin (universal newlines: \n, \r\n, \r).
// sacreBLEU reads tab-separated fields of stdin as several systems; that is refused here.
TextStream read_stdin() {
  TextStream stream{"<stdin>", {}};
  std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find_first_of("\r\n", start);
    std::string line = data.substr(start, end == std::string::npos ? end : end - start);
    if (end == std::string::npos) {
      start = data.size();
    } else {
      start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
    }
    const auto number = static_cast<int64_t>(stream.lines.size()) + 1;
    if (auto bad = find_text_problem(line)) {
      throw IoError(text_problem_message(stream.name, number, *bad));
    }
    std::string_view text = rstrip_whitespace(line);
    if (text.find('\t') != std::string_view::npos) {
      throw IoError(
          fmt::format("{}:{}: a tab separates systems on sacreBLEU's stdin; "
                      "nmtzoo-evaluate scores one system: give it with -i FILE",
                      stream.name, number));
    }
    stream.lines.emplace_back(text);
  }
  return stream;
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

// One metric's result, in the shapes sacreBLEU prints.
struct Result {
  std::string name;
  double score = 0.0;
  std::string verbose;  // BLEU only
  std::string signature;
  std::string short_signature;
};

std::string score_text(const Result& result, int width) {
  return fmt::format("{:.{}f}", result.score, width);
}

// Python's repr() of a float, as json.dumps writes it: the shortest digits that read back as the
// same double (fmt's default, like Python's) and ".0" on integral values.
std::string python_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

// sacreBLEU's Score.format(..., is_json=True): json.dumps(d, indent=1, ensure_ascii=False) of
// name, score (rounded to the width), signature, verbose score and the signature's fields, in
// that order; with `indent` false, json.dumps(d) on one line. Strings are escaped by nlohmann.
std::string to_json(const Result& result, int width, bool indent) {
  std::vector<std::pair<std::string, std::string>> fields;  // key, JSON value text
  auto add = [&](const std::string& key, const std::string& value) {
    fields.emplace_back(key, nlohmann::json(value).dump());
  };
  add("name", result.name);
  fields.emplace_back("score", python_float(std::stod(score_text(result, width))));
  add("signature", result.signature);
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
  if (cli.score_only) return score_text(result, cli.width);
  const std::string& signature = cli.short_signature ? result.short_signature : result.signature;
  return format_score_line(result.name, result.score, cli.width, signature, result.verbose);
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

std::vector<std::string> sorted_metric_names(const std::vector<std::string>& requested) {
  std::vector<std::string> names = requested;
  std::sort(names.begin(), names.end());  // sacreBLEU prints metrics sorted: BLEU, then CHRF
  names.erase(std::unique(names.begin(), names.end()), names.end());
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
    std::cerr << "nmtzoo-evaluate: " << count << " lines end in a tokenized period (' .'); the "
              << "output looks tokenized, which lowers BLEU. Detokenize it, or pass --force.\n";
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

int run(const Cli& cli) {
  if (cli.refs.empty()) throw IoError("give at least one reference file before -i");
  if (cli.input.size() > 1) {
    throw IoError("nmtzoo-evaluate scores one system; -i got " + std::to_string(cli.input.size()) +
                  " files");
  }
  if (cli.num_refs != 1 && cli.refs.size() > 1) {
    throw IoError("--num-refs splits one reference file on tabs; give only one reference file");
  }
  if (cli.sentence_level && cli.metrics.size() > 1) {
    throw IoError("only one metric can be used in sentence-level mode");
  }

  BleuOptions bleu_options;
  bleu_options.tokenizer = parse_bleu_tokenizer(bleu_tokenizer_name(cli));
  bleu_options.smooth = parse_bleu_smooth(cli.smooth_method);
  bleu_options.smooth_value = cli.smooth_value;
  bleu_options.lowercase = cli.lowercase;
  bleu_options.effective_order = cli.sentence_level;  // as sacreBLEU does for sentence BLEU
  ChrfOptions chrf_options;
  chrf_options.char_order = cli.chrf_char_order;
  chrf_options.word_order = cli.chrf_word_order;
  chrf_options.beta = cli.chrf_beta;
  chrf_options.lowercase = cli.chrf_lowercase;
  chrf_options.whitespace = cli.chrf_whitespace;
  chrf_options.eps_smoothing = cli.chrf_eps_smoothing;
  const Bleu bleu(bleu_options);
  const Chrf chrf(chrf_options);

  std::vector<TextStream> references = read_references(cli);
  TextStream hypotheses = cli.input.empty() ? read_stdin() : read_file(cli.input.front());
  check_lengths(hypotheses, references);
  std::vector<std::vector<std::string>> reference_lines;
  for (auto& reference : references) reference_lines.push_back(std::move(reference.lines));

  const std::vector<std::string> metrics = sorted_metric_names(cli.metrics);
  if (std::find(metrics.begin(), metrics.end(), "bleu") != metrics.end()) {
    warn_if_tokenized(hypotheses, cli);
  }
  auto score = [&](const std::string& metric, const std::vector<std::string>& hyps,
                   const std::vector<std::vector<std::string>>& refs) {
    Result result;
    if (metric == "bleu") {
      BleuScore bleu_score = bleu.corpus_score(hyps, refs);
      result = {"BLEU", bleu_score.score, bleu_score.verbose(), bleu.signature(bleu_score.num_refs),
                bleu.signature(bleu_score.num_refs, true)};
    } else {
      ChrfScore chrf_score = chrf.corpus_score(hyps, refs);
      result = {chrf_score.name(), chrf_score.score, "", chrf.signature(chrf_score.num_refs),
                chrf.signature(chrf_score.num_refs, true)};
    }
    return result;
  };

  if (cli.sentence_level) {
    std::vector<std::vector<std::string>> segment_refs(reference_lines.size(), {""});
    for (size_t i = 0; i < hypotheses.lines.size(); ++i) {
      for (size_t r = 0; r < reference_lines.size(); ++r) {
        segment_refs[r][0] = reference_lines[r][i];
      }
      Result result = score(metrics.front(), {hypotheses.lines[i]}, segment_refs);
      if (cli.format == "json" && !cli.score_only) {
        std::cout << to_json(result, cli.width, false) << "\n";
      } else {
        std::cout << text_line(result, cli) << "\n";
      }
    }
    return 0;
  }
  std::vector<Result> results;
  for (const auto& metric : metrics) {
    results.push_back(score(metric, hypotheses.lines, reference_lines));
  }
  print_corpus_results(results, cli);
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
  app.add_option("-i,--input", cli.input, "system output; stdin when absent")->type_name("HYP");
  app.add_option("-m,--metrics", cli.metrics, "metrics to compute (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf"}));
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

  auto* report_group = app.add_option_group("Output");
  report_group->add_flag("--sentence-level", cli.sentence_level,
                         "(-sl) one score per segment, with effective order for BLEU");
  report_group->add_flag("-b,--score-only", cli.score_only, "print only the scores");
  report_group->add_option("-w,--width", cli.width, "decimals of the scores (default: 1)")
      ->check(CLI::Range(0, 20));
  report_group->add_option("-f,--format", cli.format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  report_group->add_flag("--json", cli.json, "same as --format json: sacreBLEU's JSON output");
  report_group->add_flag("--short", cli.short_signature, "(-sh) abbreviated signature");
  report_group->add_flag("-q,--quiet", cli.quiet, "no warnings");
  app.set_version_flag("-V,--version", std::string("nmtzoo-evaluate, sacreBLEU ") +
                                           kSacrebleuVersion + " compatible (" + kSignatureVersion +
                                           ")");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (cli.json) cli.format = "json";
  return run_app([&] { return run(cli); });
}
