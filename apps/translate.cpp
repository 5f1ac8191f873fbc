// SPDX-License-Identifier: MIT
// nmtzoo-translate: translates text with a trained checkpoint, one output line per input line.
#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "apps/common.h"
#include "apps/key_aliases.h"
#include "apps/translator_flags.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/translation_json.h"
#include "libtorch/search/translator.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/aliases.h"
#include "torch_free/data/corpus.h"
#include "torch_free/data/translation_input.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/available_lines.h"
#include "torch_free/io/progress.h"
#include "torch_free/io/text_file.h"

namespace {

using namespace nmtzoo;

struct Options {
  TranslatorFlags model;
  std::string input_format = "text";
  std::string output_format = "plain";
  std::string alignment;         // "", hard, soft
  int64_t alignment_layer = -2;  // -2: the penultimate decoder layer of each model
  int64_t alignment_heads = 0;   // the mean of the first N heads; 0 = all
  bool quiet = false;
  std::string input;
  std::string output;
  std::string device = "auto";
  int64_t threads = 0;
  std::vector<KeyValue> decoding;  // --beam, --set decoding.beam=5, ... in the order given
  size_t buffer_lines = 1000;
  bool no_cache = false;
  std::string attention_dir;
  std::string stats_path;
  int64_t attention_count = 3;
  int64_t attention_layer = -1;
  int64_t attention_head = -1;
};

// The checkpoint's decoding section with the command line's values on top, checked by the schema
// (ranges) and check_config (nbest <= beam), and the attention the outputs need.
SearchOptions search_options(const Options& cli, const Translator& translator) {
  SearchOptions options = translator.search_options(cli.decoding);
  options.record_attention = !cli.attention_dir.empty() || !cli.alignment.empty();
  if (!cli.alignment.empty()) {
    options.attention = AttentionChoice{cli.alignment_layer, -1, cli.alignment_heads, true};
  } else {
    options.attention = AttentionChoice{cli.attention_layer, cli.attention_head, 0, false};
  }
  if (!options.shortlist.empty() &&
      (options.sampling || options.constraints != ConstraintMode::kNone)) {
    std::cerr << "note: " << (options.sampling ? "sampling" : "constrained decoding")
              << " needs the whole vocabulary: the shortlist is not used\n";
  }
  return options;
}

// Returns false when the model recorded no attention (e.g. rnn_encdec has none).
bool write_heatmap(const std::string& dir, int64_t line_number, const Translation& t,
                   const SentencePiece& target, const std::string& which) {
  if (t.nbest.empty()) return true;
  const std::string svg = attention_heatmap(
      t, 0, target, fmt::format("line {}: {} ({})", line_number, t.texts[0], which));
  if (svg.empty()) return false;
  std::filesystem::create_directories(dir);
  write_file_atomically(fmt::format("{}/attention_{:04d}.svg", dir, line_number),
                        [&](std::ostream& out) { out << svg; });
  return true;
}

int run(const Options& cli) {
  // An output may not replace an input; `-i x -o x` may (the input is read whole first).
  std::vector<NamedPath> inputs;
  for (const std::string& checkpoint : cli.model.checkpoints) inputs.push_back({"-c", checkpoint});
  check_output_is_not_an_input({"-o", cli.output}, inputs);
  inputs.insert(inputs.end(), {NamedPath{"-i", cli.input}, NamedPath{"-o", cli.output}});
  check_output_is_not_an_input({"--stats", cli.stats_path}, inputs);
  OutputDestination output(cli.output, "the translations");
  configure_threads(cli.threads);
  const InputFormat input_format = parse_input_format(cli.input_format);
  if (cli.alignment == "soft" && cli.output_format != "jsonl") {
    throw std::invalid_argument(
        "--alignment soft writes attention matrices: it needs --format jsonl");
  }
  const c10::Device device = resolve_device(parse_device_choice(cli.device), "--device");
  Translator translator(cli.model.checkpoints,
                        cli.model.options(device).recompute_prefix(cli.no_cache));
  const SearchOptions options = search_options(cli, translator);
  translator.prepare(options);
  const SentencePiece& target = *translator.tokenizers().tgt;
  const TranslationWriter writer(
      cli.output_format == "jsonl",
      TranslationJsonOptions{options.nbest > 1, true,
                             cli.alignment == "hard"   ? AlignmentOutput::kHard
                             : cli.alignment == "soft" ? AlignmentOutput::kSoft
                                                       : AlignmentOutput::kNone,
                             false},
      target);
  const std::string which_attention = translator.describe_attention(options);
  const auto models = translator.members().size();

  std::vector<std::string> file_lines;
  if (!cli.input.empty())
    file_lines = read_sentences(cli.input);  // checked before anything is written
  ProgressMeter progress(std::cerr, "sentences",
                         cli.input.empty() ? -1 : static_cast<int64_t>(file_lines.size()),
                         ::isatty(STDERR_FILENO) != 0, !cli.quiet);
  const std::string input_name = cli.input.empty() ? "stdin" : cli.input;
  int64_t line_number = 0;
  int64_t output_tokens = 0;
  bool warned_no_attention = false;
  LimitWarnings limit_warnings;
  auto start = std::chrono::steady_clock::now();
  std::ostream& out = output.stream();
  auto process = [&](const std::vector<std::string>& lines) {
    std::vector<TranslationRequest> requests;
    for (size_t i = 0; i < lines.size(); ++i) {
      const int64_t number = line_number + 1 + static_cast<int64_t>(i);
      requests.push_back(
          parse_request(lines[i], input_format, fmt::format("{}:{}", input_name, number)));
    }
    std::vector<Translation> translations;
    try {
      translations =
          translator.translate_batch(requests, options, line_number + 1,
                                     [&](int64_t done) { progress.update(line_number + done); });
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(input_name + ": " + e.what());
    } catch (const NonFiniteScores& e) {
      throw std::runtime_error(input_name + ": " + e.what());
    }
    progress.clear();
    for (size_t i = 0; i < translations.size(); ++i) {
      const int64_t number = line_number + 1 + static_cast<int64_t>(i);
      if (translations[i].truncated) {
        std::cerr << fmt::format(
            "warning: line {} is longer than the model accepts; its first {} "
            "tokens were translated\n",
            number, translator.max_source_tokens());
      }
      std::cerr << limit_warnings.of(translations[i], fmt::format("{}:{}", input_name, number));
      if (!cli.attention_dir.empty() && number <= cli.attention_count && !warned_no_attention &&
          !write_heatmap(cli.attention_dir, number, translations[i], target, which_attention)) {
        std::cerr << fmt::format(
            "warning: model {} has no attention; --attention-svg writes no "
            "heatmaps\n",
            translator.config().model.arch);
        warned_no_attention = true;
      }
      if (!translations[i].nbest.empty())
        output_tokens += static_cast<int64_t>(translations[i].nbest[0].tokens.size()) + 1;
    }
    writer.write(out, translations, line_number + 1);
    out.flush();
    output.check_stdout();
    line_number += static_cast<int64_t>(lines.size());
    progress.update(line_number);
  };

  if (!cli.input.empty()) {
    for (size_t begin = 0; begin < file_lines.size(); begin += cli.buffer_lines) {
      size_t end = std::min(file_lines.size(), begin + cli.buffer_lines);
      process(std::vector<std::string>(file_lines.begin() + static_cast<std::ptrdiff_t>(begin),
                                       file_lines.begin() + static_cast<std::ptrdiff_t>(end)));
    }
  } else {
    AvailableLines input(STDIN_FILENO);
    std::vector<std::string> lines;
    while (input.next_chunk(lines, cli.buffer_lines)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (auto bad = find_text_problem(lines[i])) {
          throw std::runtime_error(fmt::format(
              "stdin:{}: {}", line_number + 1 + static_cast<int64_t>(i), bad->describe()));
        }
      }
      process(lines);
    }
  }
  progress.clear();
  output.commit();
  const int64_t sentences = line_number;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string search_name = options.sampling ? fmt::format("sampling x{}", options.nbest)
                                                   : fmt::format("beam {}", options.beam);
  if (!cli.quiet) {
    const std::string shortlist =
        translator.mean_shortlist_size() > 0
            ? fmt::format(", shortlists of {:.0f} target tokens on average",
                          translator.mean_shortlist_size())
            : "";
    std::cerr << fmt::format(
        "translated {} sentences ({} target tokens) in {:.2f} s: {:.1f} "
        "sentences/s, {:.0f} tokens/s ({}, {} model(s), {} threads, {}{})\n",
        sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
        static_cast<double>(output_tokens) / seconds, search_name, models, torch::get_num_threads(),
        device.str(), shortlist);
  }
  if (!cli.stats_path.empty()) {
    write_file_atomically(cli.stats_path, [&](std::ostream& out) {
      out << fmt::format(
          "{{\"sentences\": {}, \"target_tokens\": {}, \"seconds\": {:.4f}, "
          "\"sentences_per_second\": {:.3f}, \"tokens_per_second\": {:.1f}, "
          "\"beam\": {}, \"models\": {}, \"threads\": {}, \"mean_shortlist_size\": {:.1f}}}\n",
          sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
          static_cast<double>(output_tokens) / seconds, options.beam, models,
          torch::get_num_threads(), translator.mean_shortlist_size());
    });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Translate text with an nmtzoo checkpoint, or an ensemble of checkpoints (-c A -c B): "
      "one output line per input line (n-best: 'line ||| text ||| score' lines, with "
      "' ||| alignment' when asked; --format jsonl: one JSON object per line). Decoding "
      "options default to the (first) checkpoint config's decoding section."};
  Options cli;
  add_translator_flags(app, cli.model)->required();
  app.add_option("-i,--input", cli.input,
                 "input file (plain or .gz); default: stdin, translated "
                 "as lines arrive");
  app.add_option("-o,--output", cli.output,
                 "output file, written atomically (a device or FIFO: in place); default: stdout");
  app.add_option("--input-format", cli.input_format,
                 "text: one source per line; tsv: source<TAB>prefix<TAB>constraint<TAB>...; jsonl: "
                 "{\"src\": ..., \"prefix\": ..., \"constraints\": [...]} per line")
      ->check(CLI::IsMember({"text", "tsv", "jsonl"}))
      ->capture_default_str();
  app.add_option(
         "--format", cli.output_format,
         "plain: text (n-best 'i ||| text ||| score'); jsonl: one object per input line with "
         "text, score, log_prob, tokens, alignment (and nbest)")
      ->check(CLI::IsMember({"plain", "jsonl"}))
      ->capture_default_str();
  app.add_option(
         "--alignment", cli.alignment,
         "hard: append Pharaoh 'src-tgt' word pairs (after a tab, or as ' ||| ...' in n-best, "
         "or 'alignment' in jsonl); soft: the attention matrix in jsonl")
      ->check(CLI::IsMember({"hard", "soft"}));
  app.add_option(
      "--alignment-layer", cli.alignment_layer,
      "decoder layer whose cross-attention aligns; default: the penultimate; -1 = mean of all");
  app.add_option("--alignment-heads", cli.alignment_heads,
                 "average the first N heads of that layer; 0 = all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_key_aliases(app, decoding_aliases(), cli.decoding);
  add_set_option(app, {"decoding"}, cli.decoding);
  app.add_option("--buffer-lines", cli.buffer_lines, "most lines translated together")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", cli.device, "cpu | cuda | auto")->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads; 0 = all cores")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stats", cli.stats_path, "also write the speed figures as JSON to this file");
  app.add_flag("-q,--quiet", cli.quiet, "no progress and no closing speed line on stderr");
  app.add_flag("--no-cache", cli.no_cache, "recompute the prefix each step (benchmarking only)");
  auto* attention_svg =
      app.add_option("--attention-svg", cli.attention_dir,
                     "write attention heatmaps of the first lines into this folder");
  app.add_option("--attention-count", cli.attention_count, "how many lines get a heatmap")
      ->check(CLI::NonNegativeNumber)
      ->needs(attention_svg)
      ->capture_default_str();
  auto* attention_layer = app.add_option("--attention-layer", cli.attention_layer,
                                         "decoder layer of the heatmap; -1 = mean of all")
                              ->needs(attention_svg)
                              ->capture_default_str();
  auto* attention_head =
      app.add_option("--attention-head", cli.attention_head, "head of that layer; -1 = mean of all")
          ->needs(attention_svg)
          ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!cli.alignment.empty() && (attention_layer->count() > 0 || attention_head->count() > 0)) {
    std::cerr << "error: with --alignment the heatmaps show the alignment's attention: choose it "
                 "with --alignment-layer and --alignment-heads\n";
    return 1;
  }
  nmtzoo::end_on_stop_signal_removing_temporaries();  // before any thread starts
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(cli); });
}
