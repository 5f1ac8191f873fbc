// nmtzoo-translate: translates text with a trained checkpoint, one output line per input line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
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
#include "core/data/translation_input.h"
#include "core/io/atomic_file.h"
#include "core/io/text_file.h"
#include "core/plot/svg.h"
#include "core/runtime/runtime.h"
#include "core/runtime/trained_model.h"
#include "core/io/progress.h"
#include "core/search/alignment.h"
#include "core/search/ensemble.h"
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
  std::vector<std::string> checkpoints;
  std::vector<double> weights;
  std::string ensemble_mode = "prob";
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

// The checkpoint's decoding section with the command line's values on top, checked once by the
// schema (ranges) and check_config (nbest <= beam).
TranslatorOptions translator_options(const Options& cli, RunConfig& config) {
  const bool nbest_given = std::any_of(cli.decoding.begin(), cli.decoding.end(),
                                       [](const KeyValue& v) { return v.key == "decoding.nbest"; });
  apply_key_values(config, cli.decoding);
  // A smaller beam from the command line narrows the checkpoint's n-best list with it.
  if (!nbest_given && !config.decoding.sampling) {
    config.decoding.nbest = std::min(config.decoding.nbest, config.decoding.beam);
  }
  check_config(config);
  TranslatorOptions options = TranslatorOptions::from(config.decoding);
  options.search.record_attention = !cli.attention_dir.empty() || !cli.alignment.empty();
  if (!options.shortlist_path.empty() &&
      (options.search.sampling || options.search.constraints != ConstraintMode::kNone)) {
    std::cerr << "note: " << (options.search.sampling ? "sampling" : "constrained decoding")
              << " needs the whole vocabulary: the shortlist is not used\n";
  }
  return options;
}

// The models of the command line (one, or an ensemble), all loaded and checked to share their
// vocabularies.
struct Members {
  std::vector<std::string> paths;
  std::vector<TrainedModel> models;
};

// The same pieces under the same ids (the model files' bytes also hold training paths, so they
// differ between runs that share a vocabulary).
bool same_vocabulary(const SentencePiece& a, const SentencePiece& b) {
  if (a.vocab_size() != b.vocab_size()) return false;
  for (int64_t id = 0; id < a.vocab_size(); ++id) {
    if (a.piece(id) != b.piece(id)) return false;
  }
  return true;
}

Members load_members(const Options& cli, const c10::Device& device) {
  Members members;
  for (const auto& path : cli.checkpoints) {
    members.paths.push_back(path);
    members.models.push_back(load_trained_model(path, device));
  }
  const Tokenizers& first = members.models.front().tokenizers;
  for (size_t i = 1; i < members.models.size(); ++i) {
    const Tokenizers& other = members.models[i].tokenizers;
    for (const auto& [side, a, b] : {std::tuple{"target", first.tgt, other.tgt},
                                     std::tuple{"source", first.src, other.src}}) {
      if (!same_vocabulary(*a, *b)) {
        throw std::invalid_argument(fmt::format(
            "{} and {} have different {} vocabularies ({} and {} pieces, from {} and {}): an "
            "ensemble needs the models to share them",
            members.paths.front(), members.paths[i], side, a->vocab_size(), b->vocab_size(),
            a->path(), b->path()));
      }
    }
  }
  if (!cli.weights.empty() && cli.weights.size() != cli.checkpoints.size()) {
    throw std::invalid_argument(fmt::format("--weights has {} values for {} checkpoints",
                                            cli.weights.size(), cli.checkpoints.size()));
  }
  for (double weight : cli.weights) {
    if (!(weight > 0) || !std::isfinite(weight)) {
      throw std::invalid_argument(fmt::format("--weights: {} is not a positive weight", weight));
    }
  }
  return members;
}

// A --*-layer or --*-head(s) value outside the model's attention layout.
// `has` is what the model has: "3 decoder attention layer(s)", or per layer "4 head(s)".
[[noreturn]] void bad_attention_flag(const std::string& flag, int64_t value, bool per_layer,
                                     const std::string& has, const std::string& give,
                                     const ModelConfig& model, const std::string& path) {
  throw std::invalid_argument(fmt::format("{} {}: {}model {} has {}; give {} ({})", flag, value,
                                          per_layer ? "each layer of " : "", model.arch,
                                          has, give, path));
}

// Which cross-attention the model records (--alignment-* with --alignment, else the heatmap's
// --attention-*), checked against its architecture; none when it has no attention.
std::optional<AttentionChoice> attention_choice(const Options& cli, const ModelConfig& model,
                                                const std::string& path) {
  const AttentionLayout layout = arch_spec(model.arch).cross_attention(model);
  if (layout.layers == 0) return std::nullopt;
  const bool aligning = !cli.alignment.empty();
  AttentionChoice choice;
  if (aligning) {
    choice.layer = cli.alignment_layer == -2 ? std::max<int64_t>(0, layout.layers - 2) : cli.alignment_layer;
    choice.heads = cli.alignment_heads;
  } else {
    choice.layer = cli.attention_layer;
    choice.head = cli.attention_head;
  }
  const std::string layers = fmt::format("{} decoder attention layer(s)", layout.layers);
  const std::string heads = fmt::format("{} head(s)", layout.heads);
  if (choice.layer < -1 || choice.layer >= layout.layers) {
    bad_attention_flag(aligning ? "--alignment-layer" : "--attention-layer", choice.layer, false, layers,
                       fmt::format("0..{}, or -1 for their mean", layout.layers - 1), model, path);
  }
  if (choice.heads < 0 || choice.heads > layout.heads) {
    bad_attention_flag("--alignment-heads", choice.heads, true, heads,
                       fmt::format("1..{}, or 0 for all", layout.heads), model, path);
  }
  if (choice.head != -1 && choice.layer == -1) {
    throw std::invalid_argument("--attention-head needs --attention-layer: heads are per layer");
  }
  if (choice.head < -1 || choice.head >= layout.heads) {
    bad_attention_flag("--attention-head", choice.head, true, heads,
                       fmt::format("0..{}, or -1 for their mean", layout.heads - 1), model, path);
  }
  return choice;
}

// The model the search drives: the checkpoint's, or an ensemble of them, with the attention
// selection each records.
std::shared_ptr<EncoderDecoder> search_model(const Options& cli, const Members& members,
                                             TranslatorOptions& options) {
  std::vector<std::optional<AttentionChoice>> choices;
  bool any_attention = false;
  for (size_t i = 0; i < members.models.size(); ++i) {
    choices.push_back(attention_choice(cli, members.models[i].config.model, members.paths[i]));
    any_attention = any_attention || choices.back().has_value();
  }
  // Heatmaps are skipped with a warning; alignments and the coverage penalty cannot be.
  if ((!cli.alignment.empty() || options.search.coverage_penalty > 0) && !any_attention) {
    const std::string what = !cli.alignment.empty() ? "--alignment" : "the coverage penalty";
    throw std::invalid_argument(fmt::format("{} needs cross-attention, but model {} ({}) has none",
                                            what, members.models.front().config.model.arch,
                                            members.paths.front()));
  }
  if (members.models.size() == 1) {
    if (choices.front()) options.search.attention = *choices.front();
    std::shared_ptr<EncoderDecoder> model = members.models.front().model;
    if (cli.no_cache) model = std::make_shared<PrefixRecomputingModel>(model);
    return model;
  }
  if (cli.no_cache) throw std::invalid_argument("--no-cache is for one checkpoint, not an ensemble");
  std::vector<std::shared_ptr<EncoderDecoder>> models;
  for (const auto& member : members.models) models.push_back(member.model);
  auto ensemble = std::make_shared<EnsembleModel>(
      models, cli.weights, cli.ensemble_mode == "logprob" ? EnsembleMode::kLogProb : EnsembleMode::kProb);
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i]) ensemble->choose_attention(i, *choices[i]);
  }
  return ensemble;
}

// Returns false when the model recorded no attention (e.g. rnn_encdec has none).
bool write_heatmap(const std::string& dir, int64_t line_number, const Translation& t,
                   const Tokenizers& tokenizers, const std::string& which) {
  if (t.nbest.empty()) return true;
  if (!t.nbest[0].attention.defined()) return false;
  const Hypothesis& best = t.nbest[0];
  std::vector<std::string> target_pieces;
  for (int64_t id : best.tokens) target_pieces.push_back(tokenizers.tgt->piece(id));
  target_pieces.push_back("</s>");
  const auto source_length = static_cast<int64_t>(t.source_pieces.size());
  at::Tensor weights = best.attention.narrow(1, 0, source_length).to(torch::kFloat).contiguous();
  std::vector<std::vector<float>> rows;
  for (int64_t r = 0; r < weights.size(0); ++r) {
    rows.emplace_back(weights[r].data_ptr<float>(), weights[r].data_ptr<float>() + source_length);
  }
  std::filesystem::create_directories(dir);
  std::string path = fmt::format("{}/attention_{:04d}.svg", dir, line_number);
  write_file_atomically(path, [&](std::ostream& out) {
    out << heatmap_svg(rows, t.source_pieces, target_pieces,
                       fmt::format("line {}: {} ({})", line_number, t.texts[0], which));
  });
  return true;
}

// How each output line looks: the best text, an n-best list, or JSON; with word alignments.
class TranslationWriter {
 public:
  TranslationWriter(const Options& cli, const SearchOptions& search, const Tokenizers& tokenizers)
      : jsonl_(cli.output_format == "jsonl"), nbest_(search.nbest > 1), alignment_(cli.alignment),
        tokenizers_(tokenizers) {}

  void write(std::ostream& out, const std::vector<Translation>& translations, int64_t first_line) const {
    for (size_t i = 0; i < translations.size(); ++i) {
      const int64_t line = first_line + static_cast<int64_t>(i);
      if (jsonl_) {
        out << json_line(translations[i], line).dump() << '\n';
      } else {
        write_plain(out, translations[i], line);
      }
    }
  }

 private:
  std::vector<std::string> target_pieces(const Hypothesis& hypothesis) const {
    std::vector<std::string> pieces;
    for (int64_t id : hypothesis.tokens) pieces.push_back(tokenizers_.tgt->piece(id));
    return pieces;
  }
  static std::vector<std::string> source_words_pieces(const Translation& t) {
    return {t.source_pieces.begin(), t.source_pieces.end() - (t.source_pieces.empty() ? 0 : 1)};
  }
  std::string hard_alignment(const Translation& t, size_t k) const {
    if (k >= t.nbest.size() || !t.nbest[k].attention.defined()) return "";
    return pharaoh(hard_word_alignment(t.nbest[k].attention, source_words_pieces(t),
                                       target_pieces(t.nbest[k])));
  }

  void write_plain(std::ostream& out, const Translation& t, int64_t line) const {
    if (!nbest_) {
      out << t.texts[0];
      if (alignment_ == "hard") out << '\t' << hard_alignment(t, 0);
      out << '\n';
      return;
    }
    for (size_t k = 0; k < t.texts.size(); ++k) {
      const double score = k < t.nbest.size() ? t.nbest[k].score : 0.0;
      out << (line - 1) << " ||| " << t.texts[k] << " ||| " << fmt::format("{:.4f}", score);
      if (alignment_ == "hard") out << " ||| " << hard_alignment(t, k);
      out << '\n';
    }
  }

  nlohmann::json hypothesis_json(const Translation& t, size_t k) const {
    nlohmann::json entry;
    entry["text"] = t.texts[k];
    if (k >= t.nbest.size()) {  // an empty input line
      entry["score"] = nullptr;
      entry["tokens"] = nlohmann::json::array();
      return entry;
    }
    const Hypothesis& h = t.nbest[k];
    entry["score"] = h.score;
    entry["log_prob"] = h.log_prob;
    entry["tokens"] = target_pieces(h);
    if (!h.complete) entry["constraints_met"] = false;  // the length limit ended it first
    if (alignment_ == "hard") entry["alignment"] = hard_alignment(t, k);
    if (alignment_ == "soft" && h.attention.defined()) {
      // Rows: the target pieces and EOS; columns: the source pieces and EOS.
      const auto columns = static_cast<int64_t>(t.source_pieces.size());
      at::Tensor weights = h.attention.narrow(1, 0, columns).to(torch::kDouble).contiguous();
      nlohmann::json matrix = nlohmann::json::array();
      for (int64_t r = 0; r < weights.size(0); ++r) {
        nlohmann::json row = nlohmann::json::array();
        const double* values = weights[r].data_ptr<double>();
        for (int64_t c = 0; c < columns; ++c) row.push_back(std::round(values[c] * 1e4) / 1e4);
        matrix.push_back(std::move(row));
      }
      entry["attention"] = {{"source", t.source_pieces}, {"matrix", std::move(matrix)}};
    }
    return entry;
  }

  nlohmann::json json_line(const Translation& t, int64_t line) const {
    nlohmann::json result{{"line", line}};
    result.update(hypothesis_json(t, 0));
    if (t.truncated) result["truncated"] = true;
    if (nbest_) {
      nlohmann::json list = nlohmann::json::array();
      for (size_t k = 0; k < t.texts.size(); ++k) list.push_back(hypothesis_json(t, k));
      result["nbest"] = std::move(list);
    }
    return result;
  }

  bool jsonl_;
  bool nbest_;
  std::string alignment_;
  const Tokenizers& tokenizers_;
};

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
  const InputFormat input_format = parse_input_format(cli.input_format);
  if (cli.alignment == "soft" && cli.output_format != "jsonl") {
    throw std::invalid_argument("--alignment soft writes attention matrices: it needs --format jsonl");
  }
  const c10::Device device = resolve_device(parse_device_choice(cli.device), "--device");
  Members members = load_members(cli, device);
  const TrainedModel& first = members.models.front();
  RunConfig config = first.config;
  TranslatorOptions options = translator_options(cli, config);
  std::shared_ptr<EncoderDecoder> model = search_model(cli, members, options);
  Translator translator(*model, first.tokenizers, options, device);
  const TranslationWriter writer(cli, options.search, first.tokenizers);
  const std::string which_attention =
      members.models.size() > 1 ? "the models' mean" : options.search.attention.describe();

  std::vector<std::string> file_lines;
  if (!cli.input.empty()) file_lines = read_sentences(cli.input);  // checked before anything is written
  ProgressMeter progress(std::cerr, "sentences", cli.input.empty() ? -1 : static_cast<int64_t>(file_lines.size()),
                         ::isatty(STDERR_FILENO) != 0, !cli.quiet);
  const std::string input_name = cli.input.empty() ? "stdin" : cli.input;
  int64_t line_number = 0;
  int64_t output_tokens = 0;
  bool warned_no_attention = false;
  auto start = std::chrono::steady_clock::now();
  std::ostream& out = output.stream();
  auto process = [&](const std::vector<std::string>& lines) {
    std::vector<TranslationRequest> requests;
    for (size_t i = 0; i < lines.size(); ++i) {
      const int64_t number = line_number + 1 + static_cast<int64_t>(i);
      requests.push_back(parse_request(lines[i], input_format, fmt::format("{}:{}", input_name, number)));
    }
    translator.on_progress([&](int64_t done) { progress.update(line_number + done); });
    std::vector<Translation> translations;
    try {
      translations = translator.translate(requests, line_number + 1);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(input_name + ": " + e.what());
    }
    progress.clear();
    for (size_t i = 0; i < translations.size(); ++i) {
      const int64_t number = line_number + 1 + static_cast<int64_t>(i);
      if (translations[i].truncated) {
        std::cerr << fmt::format("warning: line {} is longer than the model accepts; its first {} "
                                 "tokens were translated\n",
                                 number, translator.max_source_tokens());
      }
      if (!cli.attention_dir.empty() && number <= cli.attention_count && !warned_no_attention &&
          !write_heatmap(cli.attention_dir, number, translations[i], first.tokenizers, which_attention)) {
        std::cerr << fmt::format("warning: model {} has no attention; --attention-svg writes no "
                                 "heatmaps\n",
                                 first.config.model.arch);
        warned_no_attention = true;
      }
      if (!translations[i].nbest.empty()) output_tokens += static_cast<int64_t>(translations[i].nbest[0].tokens.size()) + 1;
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
          throw std::runtime_error(fmt::format("stdin:{}: {}", line_number + 1 + static_cast<int64_t>(i),
                                               bad->describe()));
        }
      }
      process(lines);
    }
  }
  progress.clear();
  output.commit();
  const int64_t sentences = line_number;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string search_name = options.search.sampling ? fmt::format("sampling x{}", options.search.nbest)
                                                          : fmt::format("beam {}", options.search.beam);
  if (!cli.quiet) {
    const std::string shortlist =
        translator.mean_shortlist_size() > 0
            ? fmt::format(", shortlists of {:.0f} target tokens on average", translator.mean_shortlist_size())
            : "";
    std::cerr << fmt::format("translated {} sentences ({} target tokens) in {:.2f} s: {:.1f} "
                             "sentences/s, {:.0f} tokens/s ({}, {} model(s), {} threads, {}{})\n",
                             sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
                             static_cast<double>(output_tokens) / seconds, search_name,
                             members.models.size(), torch::get_num_threads(), device.str(), shortlist);
  }
  if (!cli.stats_path.empty()) {
    write_file_atomically(cli.stats_path, [&](std::ostream& out) {
      out << fmt::format("{{\"sentences\": {}, \"target_tokens\": {}, \"seconds\": {:.4f}, "
                         "\"sentences_per_second\": {:.3f}, \"tokens_per_second\": {:.1f}, "
                         "\"beam\": {}, \"models\": {}, \"threads\": {}, \"mean_shortlist_size\": {:.1f}}}\n",
                         sentences, output_tokens, seconds, static_cast<double>(sentences) / seconds,
                         static_cast<double>(output_tokens) / seconds, options.search.beam,
                         members.models.size(), torch::get_num_threads(), translator.mean_shortlist_size());
    });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Translate text with an nmtzoo checkpoint, or an ensemble of checkpoints (-c A -c B): "
               "one output line per input line (n-best: 'line ||| text ||| score' lines, with "
               "' ||| alignment' when asked; --format jsonl: one JSON object per line). Decoding "
               "options default to the (first) checkpoint config's decoding section."};
  Options cli;
  app.add_option("-c,--checkpoint", cli.checkpoints,
                 "checkpoint (.pt) written by nmtzoo-train; repeat for an ensemble of any "
                 "architectures sharing the vocabularies")
      ->required();
  app.add_option("--weights", cli.weights, "ensemble: one positive weight per checkpoint, e.g. "
                                          "0.5,0.3,0.2 (default: equal)")
      ->delimiter(',');
  app.add_option("--ensemble-mode", cli.ensemble_mode,
                 "prob: log of the weighted mean of probabilities (fairseq); logprob: weighted sum "
                 "of log-probabilities (Marian)")
      ->check(CLI::IsMember({"prob", "logprob"}))
      ->capture_default_str();
  app.add_option("-i,--input", cli.input, "input file (plain or .gz); default: stdin, translated "
                                          "as lines arrive");
  app.add_option("-o,--output", cli.output, "output file, written atomically; default: stdout");
  app.add_option("--input-format", cli.input_format,
                 "text: one source per line; tsv: source<TAB>prefix<TAB>constraint<TAB>...; jsonl: "
                 "{\"src\": ..., \"prefix\": ..., \"constraints\": [...]} per line")
      ->check(CLI::IsMember({"text", "tsv", "jsonl"}))
      ->capture_default_str();
  app.add_option("--format", cli.output_format,
                 "plain: text (n-best 'i ||| text ||| score'); jsonl: one object per input line with "
                 "text, score, log_prob, tokens, alignment (and nbest)")
      ->check(CLI::IsMember({"plain", "jsonl"}))
      ->capture_default_str();
  app.add_option("--alignment", cli.alignment,
                 "hard: append Pharaoh 'src-tgt' word pairs (after a tab, or as ' ||| ...' in n-best, "
                 "or 'alignment' in jsonl); soft: the attention matrix in jsonl")
      ->check(CLI::IsMember({"hard", "soft"}));
  app.add_option("--alignment-layer", cli.alignment_layer,
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
  auto* attention_svg = app.add_option("--attention-svg", cli.attention_dir,
                                       "write attention heatmaps of the first lines into this folder");
  app.add_option("--attention-count", cli.attention_count, "how many lines get a heatmap")
      ->check(CLI::NonNegativeNumber)
      ->needs(attention_svg)
      ->capture_default_str();
  auto* attention_layer = app.add_option("--attention-layer", cli.attention_layer,
                                         "decoder layer of the heatmap; -1 = mean of all")
                              ->needs(attention_svg)
                              ->capture_default_str();
  auto* attention_head = app.add_option("--attention-head", cli.attention_head,
                                        "head of that layer; -1 = mean of all")
                             ->needs(attention_svg)
                             ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!cli.alignment.empty() && (attention_layer->count() > 0 || attention_head->count() > 0)) {
    std::cerr << "error: with --alignment the heatmaps show the alignment's attention: choose it "
                 "with --alignment-layer and --alignment-heads\n";
    return 1;
  }
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(cli); });
}
