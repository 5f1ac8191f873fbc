// SPDX-License-Identifier: MIT
// nmtzoo-evaluate: BLEU, chrF and TER of detokenised output, with sacreBLEU 2.6.0's confidence
// intervals and paired significance tests, as sacreBLEU scores and prints them.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_checks.h"
#include "apps/common.h"
#include "torch_free/common/cpu_cores.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/evaluation_input.h"
#include "torch_free/metrics/metric_options.h"
#include "torch_free/metrics/score_report.h"
#include "torch_free/metrics/significance.h"

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
  MetricOptions metric;
  bool confidence = false;
  int64_t confidence_n = 1000;
  bool paired_ar = false;
  bool paired_bs = false;
  int64_t paired_ar_n = 10000;
  int64_t paired_bs_n = 1000;
  int paired_jobs = 2;
  bool no_color = false;
  ReportFormat report;  // width, score_only, short_signature; run() sets json and the test
  std::string format = "text";
  bool json = false;
};

int run(const Cli& cli) {
  if (cli.refs.empty()) throw IoError("give at least one reference file before -i");
  if (cli.num_refs != 1 && cli.refs.size() > 1) {
    throw IoError("--num-refs splits one reference file on tabs; give only one reference file");
  }
  const bool sentence_level = cli.metric.sentence_level;
  if (sentence_level && cli.metrics.size() > 1) {
    throw IoError("only one metric can be used in sentence-level mode");
  }
  if (cli.format == "latex") throw IoError("-f latex is not supported; use text or json");
  const bool paired = cli.paired_bs || cli.paired_ar;
  const SacrebleuSeed seed = SacrebleuSeed::from_environment();  // checked before any work

  const std::vector<TextStream> reference_streams = read_references(cli.refs, cli.num_refs);
  std::vector<TextStream> systems = read_systems(cli.input, paired, std::cin);
  if (sentence_level && systems.size() > 1) {
    throw IoError("only one system can be evaluated in sentence-level mode");
  }
  if (sentence_level && (cli.confidence || paired)) {
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

  const std::vector<std::string> names = metric_order(cli.metrics, !paired);
  std::vector<std::unique_ptr<ResampledMetric>> metrics;
  for (const auto& name : names) metrics.push_back(make_metric(name, cli.metric, std::cerr));
  if (std::find(names.begin(), names.end(), "bleu") != names.end()) {
    for (const auto& system : systems) warn_if_tokenized(system, cli.metric, std::cerr);
  }

  ReportFormat format = cli.report;
  format.json = cli.format == "json";
  if (paired) {
    format.paired =
        cli.paired_bs ? PairedTestKind::kBootstrap : PairedTestKind::kApproximateRandomization;
    format.paired_samples = cli.paired_bs ? cli.paired_bs_n : cli.paired_ar_n;
  }

  if (sentence_level) {
    print_segment_results(segment_results(*metrics.front(), systems[0].lines, references), format,
                          std::cout);
    return 0;
  }

  if (systems.size() == 1) {
    const size_t segments = systems[0].lines.size();
    std::vector<ScoreResult> results;
    for (const auto& metric : metrics) {
      const std::vector<double> statistics =
          metric->segment_statistics(systems[0].lines, references);
      results.push_back(corpus_result(*metric, statistics, static_cast<int>(references.size())));
      if (cli.confidence && cli.confidence_n > 1) {
        add_confidence(results.back(), *metric, statistics, segments, cli.confidence_n, seed);
      }
    }
    print_corpus_results(results, format, std::cout);
    return 0;
  }

  std::vector<std::string> system_names;
  std::vector<std::vector<std::string>> hypotheses;
  for (auto& system : systems) {
    system_names.push_back(system.name);
    hypotheses.push_back(std::move(system.lines));
  }
  std::vector<const ResampledMetric*> resampled;
  for (const auto& metric : metrics) resampled.push_back(metric.get());
  if (!paired) {
    print_results_table(scores_table(system_names, hypotheses, references, resampled, format),
                        format, std::cout);
    return 0;
  }
  system_names.front() = cli.input.empty() ? "Baseline" : "Baseline: " + system_names.front();
  if (cli.input.empty()) {
    for (size_t s = 1; s < system_names.size(); ++s) system_names[s] = fmt::format("System {}", s);
  }
  PairedTestOptions options;
  options.kind = *format.paired;
  options.samples = format.paired_samples;
  options.seed = seed;
  options.threads = cli.paired_jobs > 0 ? cli.paired_jobs : static_cast<int>(available_cores());
  const PairedTestReport report = paired_test(hypotheses, references, resampled, options);
  print_results_table(paired_table(system_names, report, format), format, std::cout);
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
  app.add_option("-l,--language-pair", cli.metric.language_pair,
                 "SRC-TRG: a zh target selects the zh BLEU tokenizer unless --tokenize is given")
      ->type_name("SRC-TRG");
  app.add_option("--num-refs", cli.num_refs,
                 "(-nr) split the single reference file on tabs into this many references")
      ->check(CLI::PositiveNumber);

  auto* bleu_group = app.add_option_group("BLEU");
  bleu_group->add_option("--tokenize", cli.metric.tokenize, "(-tok) BLEU tokenizer (default: 13a)")
      ->check(CLI::IsMember({"none", "13a", "intl", "char", "zh"}));
  bleu_group
      ->add_option("-s,--smooth-method", cli.metric.smooth_method,
                   "BLEU smoothing method (default: exp)")
      ->check(CLI::IsMember({"none", "floor", "add-k", "exp"}));
  bleu_group
      ->add_option("--smooth-value", cli.metric.smooth_value,
                   "(-sv) value for floor (default 0.1) and add-k (default 1)")
      ->check(finite_non_negative());
  bleu_group->add_flag("--lowercase", cli.metric.lowercase, "(-lc) case-insensitive BLEU");
  bleu_group->add_flag("--force", cli.metric.force,
                       "do not warn about output that looks tokenized");

  auto* chrf_group = app.add_option_group("chrF");
  chrf_group
      ->add_option("--chrf-char-order", cli.metric.chrf_char_order,
                   "(-cc) character n-gram order (default: 6)")
      ->check(CLI::NonNegativeNumber);
  chrf_group
      ->add_option("--chrf-word-order", cli.metric.chrf_word_order,
                   "(-cw) word n-gram order (default: 0); 2 gives chrF++")
      ->check(CLI::NonNegativeNumber);
  chrf_group->add_option("--chrf-beta", cli.metric.chrf_beta, "recall weight (default: 2)")
      ->check(finite_non_negative());
  chrf_group->add_flag("--chrf-whitespace", cli.metric.chrf_whitespace,
                       "keep whitespace in character n-grams");
  chrf_group->add_flag("--chrf-lowercase", cli.metric.chrf_lowercase, "case-insensitive chrF");
  chrf_group->add_flag("--chrf-eps-smoothing", cli.metric.chrf_eps_smoothing,
                       "epsilon smoothing as chrF++.py, NLTK and Moses, not effective order");

  auto* ter_group = app.add_option_group("TER (the defaults replicate Tercom)");
  ter_group->add_flag("--ter-case-sensitive", cli.metric.ter_case_sensitive, "case-sensitive TER");
  ter_group->add_flag("--ter-asian-support", cli.metric.ter_asian_support,
                      "with --ter-normalized, split CJK into characters; with --ter-no-punct, "
                      "also remove CJK and full-width punctuation");
  ter_group->add_flag("--ter-no-punct", cli.metric.ter_no_punct, "remove punctuation");
  ter_group->add_flag("--ter-normalized", cli.metric.ter_normalized,
                      "Tercom's normalisation and tokenization");

  auto* test_group = app.add_option_group("Confidence intervals and paired significance tests");
  test_group->add_flag("--confidence", cli.confidence,
                       "(-ci) 95% confidence interval of one system by bootstrap resampling");
  test_group->add_option("--confidence-n", cli.confidence_n,
                         "(-cin) bootstrap resamples for --confidence (default: 1000)");
  auto* paired_ar = test_group->add_flag(
      "--paired-ar", cli.paired_ar,
      "(-par) paired approximate randomization of every system against the first");
  auto* paired_bs =
      test_group->add_flag("--paired-bs", cli.paired_bs,
                           "(-pbs) paired bootstrap resampling of every system against the first");
  paired_ar->excludes(paired_bs);
  test_group->add_option("--paired-ar-n", cli.paired_ar_n,
                         "(-parn) approximate randomization trials (default: 10000)");
  test_group->add_option("--paired-bs-n", cli.paired_bs_n,
                         "(-pbsn) bootstrap resamples of the paired test (default: 1000)");
  for (const char* name : {"--confidence-n", "--paired-ar-n", "--paired-bs-n"})
    test_group->get_option(name)->check(CLI::Range(int64_t{0}, kMaxResamples));
  test_group
      ->add_option("-j,--paired-jobs", cli.paired_jobs,
                   "threads for the paired tests (default: 2; 0 = one per core)")
      ->check(CLI::NonNegativeNumber);

  auto* report_group = app.add_option_group("Output");
  report_group->add_flag("--sentence-level", cli.metric.sentence_level,
                         "(-sl) one score per segment, with effective order for BLEU");
  report_group->add_flag("-b,--score-only", cli.report.score_only, "print only the scores");
  report_group->add_option("-w,--width", cli.report.width, "decimals of the scores (default: 1)")
      ->check(CLI::Range(0, 20));
  report_group
      ->add_option("-f,--format", cli.format,
                   "text (default) or json; SACREBLEU_FORMAT=text|json overrides it")
      ->check(CLI::IsMember({"text", "json", "latex"}));
  report_group->add_flag("--json", cli.json, "same as --format json: sacreBLEU's JSON output");
  report_group->add_flag("--short", cli.report.short_signature, "(-sh) abbreviated signature");
  report_group->add_flag("-q,--quiet", cli.metric.quiet, "no warnings");
  report_group->add_flag("--no-color", cli.no_color,
                         "(-nc) accepted for sacreBLEU's sake: never coloured");
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
