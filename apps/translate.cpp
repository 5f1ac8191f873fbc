// nmtzoo-translate: translates text with a trained checkpoint, one output line per input line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/common.h"
#include "apps/key_aliases.h"
#include "core/config/aliases.h"
#include "core/config/loader.h"
#include "core/data/corpus.h"
#include "core/io/atomic_file.h"
#include "core/io/text_file.h"
#include "core/plot/svg.h"
#include "core/runtime/runtime.h"
#include "core/runtime/trained_model.h"
#include "core/search/prefix_recomputing_model.h"
#include "core/search/translator.h"
#include "models/encoder_decoder.h"
#include "models/registry.h"

namespace {

using namespace nmtzoo;

// Lines from a file descriptor, handed out in chunks of whatever has already arrived, so an
// interactive user gets each line back at once while a piped file is still batched.
class AvailableLines {
 public:
  explicit AvailableLines(int fd) : fd_(fd) {}

  // Blocks for at least one line; false at the end of input.
  bool next_chunk(std::vector<std::string>& lines, size_t max_lines) {
    lines.clear();
    while (lines.size() < max_lines) {
      take_complete_lines(lines, max_lines);
      if (!lines.empty() && !readable_now()) break;
      if (lines.size() >= max_lines) break;
      if (!read_some()) {
        if (!pending_.empty()) lines.push_back(std::exchange(pending_, {}));
        break;
      }
    }
    return !lines.empty();
  }

 private:
  bool readable_now() const {
    pollfd descriptor{fd_, POLLIN, 0};
    return ::poll(&descriptor, 1, 0) > 0;
  }
  bool read_some() {
    if (eof_) return false;
    char buffer[65536];
    ssize_t n = ::read(fd_, buffer, sizeof buffer);
    while (n < 0 && errno == EINTR) n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0) throw IoError(std::string("reading stdin failed: ") + std::strerror(errno));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }
  void take_complete_lines(std::vector<std::string>& lines, size_t max_lines) {
    size_t start = 0;
    for (size_t newline; lines.size() < max_lines &&
                         (newline = pending_.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      std::string line = pending_.substr(start, newline - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
    }
    pending_.erase(0, start);
  }

  int fd_;
  std::string pending_;
  bool eof_ = false;
};

struct Options {
  std::string checkpoint;
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

// The checkpoint's decoding section with the command line's values on top, checked once by the
// schema (ranges) and check_config (nbest <= beam).
TranslatorOptions translator_options(const Options& cli, RunConfig& config) {
  const bool nbest_given = std::any_of(cli.decoding.begin(), cli.decoding.end(),
                                       [](const KeyValue& v) { return v.key == "decoding.nbest"; });
  apply_key_values(config, cli.decoding);
  // A smaller beam from the command line narrows the checkpoint's n-best list with it.
  if (!nbest_given) config.decoding.nbest = std::min(config.decoding.nbest, config.decoding.beam);
  check_config(config);
  TranslatorOptions options = TranslatorOptions::from(config.decoding);
  options.search.record_attention = !cli.attention_dir.empty();
  options.search.attention_layer = cli.attention_layer;
  options.search.attention_head = cli.attention_head;
  return options;
}

// --attention-layer and --attention-head against the model, before any decoding.
void check_attention_choice(const Options& cli, const ModelConfig& model) {
  const AttentionLayout layout = arch_spec(model.arch).cross_attention(model);
  if (cli.attention_layer < -1 || cli.attention_layer >= layout.layers) {
    throw std::invalid_argument(fmt::format(
        "--attention-layer {}: model {} has {} decoder attention layer(s); give 0..{}, or -1 for "
        "their mean",
        cli.attention_layer, model.arch, layout.layers, layout.layers - 1));
  }
  if (cli.attention_head != -1 && cli.attention_layer == -1) {
    throw std::invalid_argument("--attention-head needs --attention-layer: heads are per layer");
  }
  if (cli.attention_head < -1 || cli.attention_head >= layout.heads) {
    throw std::invalid_argument(fmt::format(
        "--attention-head {}: each layer of model {} has {} head(s); give 0..{}, or -1 for their "
        "mean",
        cli.attention_head, model.arch, layout.heads, layout.heads - 1));
  }
}

// Returns false when the model recorded no attention (e.g. rnn_encdec has none).
bool write_heatmap(const std::string& dir, int64_t line_number, const Translation& t,
                   const Translator& translator, const Tokenizers& tokenizers) {
  if (t.nbest.empty()) return true;
  if (!t.nbest[0].attention.defined()) return false;
  const Hypothesis& best = t.nbest[0];
  std::vector<std::string> target_pieces;
  for (int64_t id : best.tokens) target_pieces.push_back(tokenizers.tgt->piece(id));
  target_pieces.push_back("</s>");
  const auto source_length = static_cast<int64_t>(t.source_pieces.size());
  at::Tensor weights = best.attention.narrow(1, 0, source_length).to(torch::kFloat);
  std::vector<std::vector<float>> rows;
  for (int64_t r = 0; r < weights.size(0); ++r) {
    rows.emplace_back(weights[r].data_ptr<float>(), weights[r].data_ptr<float>() + source_length);
  }
  const auto& search = translator.options().search;
  std::string which = search.attention_layer < 0
                          ? "mean of layers and heads"
                          : fmt::format("layer {}, {}", search.attention_layer,
                                        search.attention_head < 0
                                            ? std::string("mean of heads")
                                            : fmt::format("head {}", search.attention_head));
  std::filesystem::create_directories(dir);
  std::string path = fmt::format("{}/attention_{:04d}.svg", dir, line_number);
  write_file_atomically(path, [&](std::ostream& out) {
    out << heatmap_svg(rows, t.source_pieces, target_pieces,
                       fmt::format("line {}: {} ({})", line_number, t.texts[0], which));
  });
  return true;
}

void write_translations(std::ostream& out, const std::vector<Translation>& translations,
                        int64_t first_line, bool nbest_format) {
  for (size_t i = 0; i < translations.size(); ++i) {
    const Translation& t = translations[i];
    if (!nbest_format) {
      out << t.texts[0] << '\n';
      continue;
    }
    for (size_t k = 0; k < t.texts.size(); ++k) {
      double score = k < t.nbest.size() ? t.nbest[k].score : 0.0;
      out << (first_line + static_cast<int64_t>(i) - 1) << " ||| " << t.texts[k] << " ||| "
          << fmt::format("{:.4f}", score) << '\n';
    }
  }
}

// Where translations go: stdout, or a file that replaces `-o` only when everything succeeded.
class Output {
 public:
  // Opens the file before any work, so a bad path fails at once.
  explicit Output(const std::string& path) {
    if (!path.empty()) file_.emplace(path);
  }
  std::ostream& stream() { return file_ ? file_->stream() : std::cout; }
  // Checked after every chunk, so a failing stdout (a full disk behind a redirection, a closed
  // pipe) stops the run instead of losing lines silently.
  void check_stdout() const {
    if (!file_ && !std::cout) throw IoError("writing the translations to stdout failed");
  }
  void commit() {
    if (file_) file_->commit();
  }

 private:
  std::optional<AtomicFile> file_;
};

int run(const Options& cli) {
  Output output(cli.output);
  configure_threads(cli.threads);
  const c10::Device device = resolve_device(parse_device_choice(cli.device), "--device");
  TrainedModel trained = load_trained_model(cli.checkpoint, device);
  RunConfig& config = trained.config;
  TranslatorOptions options = translator_options(cli, config);
  if (!cli.attention_dir.empty()) check_attention_choice(cli, config.model);
  std::shared_ptr<EncoderDecoder> model = trained.model;
  if (cli.no_cache) model = std::make_shared<PrefixRecomputingModel>(model);
  Translator translator(*model, trained.tokenizers, options, device);
  const bool nbest_format = options.search.nbest > 1;

  int64_t line_number = 0;
  int64_t sentences = 0;
  int64_t output_tokens = 0;
  bool warned_no_attention = false;
  auto start = std::chrono::steady_clock::now();
  std::ostream& out = output.stream();
  auto process = [&](const std::vector<std::string>& lines) {
    auto translations = translator.translate(lines);
    for (size_t i = 0; i < translations.size(); ++i) {
      int64_t number = line_number + 1 + static_cast<int64_t>(i);
      if (translations[i].truncated) {
        std::cerr << fmt::format("warning: line {} is longer than the model accepts; its first {} "
                                 "tokens were translated\n",
                                 number, translator.max_source_tokens());
      }
      if (!cli.attention_dir.empty() && number <= cli.attention_count && !warned_no_attention &&
          !write_heatmap(cli.attention_dir, number, translations[i], translator, trained.tokenizers)) {
        std::cerr << fmt::format("warning: model {} has no attention; --attention-svg writes no "
                                 "heatmaps\n",
                                 trained.config.model.arch);
        warned_no_attention = true;
      }
      if (!translations[i].nbest.empty()) output_tokens += static_cast<int64_t>(translations[i].nbest[0].tokens.size()) + 1;
    }
    write_translations(out, translations, line_number + 1, nbest_format);
    out.flush();
    output.check_stdout();
    line_number += static_cast<int64_t>(lines.size());
    sentences += static_cast<int64_t>(lines.size());
  };

  if (!cli.input.empty()) {
    // The whole file is checked before anything is written.
    std::vector<std::string> lines = read_sentences(cli.input);
    for (size_t begin = 0; begin < lines.size(); begin += cli.buffer_lines) {
      size_t end = std::min(lines.size(), begin + cli.buffer_lines);
      process(std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(begin),
                                       lines.begin() + static_cast<std::ptrdiff_t>(end)));
    }
  } else {
    AvailableLines input(STDIN_FILENO);
    std::vector<std::string> lines;
    while (input.next_chunk(lines, cli.buffer_lines)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (auto bad = find_text_problem(lines[i])) {
          throw std::runtime_error(fmt::format("stdin:{}: {}", line_number + 1 + static_cast<int64_t>(i),
                                               bad->describe()));
        }
      }
      process(lines);
    }
  }
  output.commit();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << fmt::format("translated {} sentences ({} target tokens) in {:.2f} s: {:.1f} "
                           "sentences/s, {:.0f} tokens/s (beam {}, {} threads, {})\n",
                           sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
                           static_cast<double>(output_tokens) / seconds, options.search.beam,
                           torch::get_num_threads(), device.str());
  if (!cli.stats_path.empty()) {
    write_file_atomically(cli.stats_path, [&](std::ostream& out) {
      out << fmt::format("{{\"sentences\": {}, \"target_tokens\": {}, \"seconds\": {:.4f}, "
                         "\"sentences_per_second\": {:.3f}, \"tokens_per_second\": {:.1f}, "
                         "\"beam\": {}, \"threads\": {}}}\n",
                         sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
                         static_cast<double>(output_tokens) / seconds, options.search.beam,
                         torch::get_num_threads());
    });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Translate text with an nmtzoo checkpoint: one output line per input line "
               "(n-best: 'line ||| text ||| score' lines). Decoding options default to the "
               "checkpoint config's decoding section."};
  Options cli;
  app.add_option("-c,--checkpoint", cli.checkpoint, "checkpoint (.pt) written by nmtzoo-train")
      ->required();
  app.add_option("-i,--input", cli.input, "input file (plain or .gz); default: stdin, translated "
                                          "as lines arrive");
  app.add_option("-o,--output", cli.output, "output file, written atomically; default: stdout");
  add_key_aliases(app, decoding_aliases(), cli.decoding);
  add_set_option(app, {"decoding"}, cli.decoding);
  app.add_option("--buffer-lines", cli.buffer_lines, "most lines translated together")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", cli.device, "cpu | cuda | auto")->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads; 0 = all cores")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--stats", cli.stats_path, "also write the speed figures as JSON to this file");
  app.add_flag("--no-cache", cli.no_cache, "recompute the prefix each step (benchmarking only)");
  auto* attention_svg = app.add_option("--attention-svg", cli.attention_dir,
                                       "write attention heatmaps of the first lines into this folder");
  app.add_option("--attention-count", cli.attention_count, "how many lines get a heatmap")
      ->check(CLI::NonNegativeNumber)
      ->needs(attention_svg)
      ->capture_default_str();
  app.add_option("--attention-layer", cli.attention_layer,
                 "decoder layer of the heatmap; -1 = mean of all")
      ->needs(attention_svg)
      ->capture_default_str();
  app.add_option("--attention-head", cli.attention_head, "head of that layer; -1 = mean of all")
      ->needs(attention_svg)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(cli); });
}
