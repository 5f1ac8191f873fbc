// SPDX-License-Identifier: MIT
#include "torch_free/config/schema.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "torch_free/common/arch_options.h"
#include "torch_free/common/edit_distance.h"
#include "torch_free/common/option_values.h"
#include "torch_free/config/config.h"

namespace nmtzoo {
namespace {

std::string join_messages(const std::vector<std::string>& problems) {
  std::string text;
  for (const auto& problem : problems) text += (text.empty() ? "" : "\n") + problem;
  return text;
}

std::string scalar_text(const YAML::Node& node, std::string& error) {
  if (!node.IsScalar()) {
    error = node.IsSequence() ? "expects a single value, got a list"
            : node.IsMap()    ? "expects a single value, got a mapping"
                              : "expects a value, got nothing";
    return {};
  }
  return node.Scalar();
}

std::string quote(const std::string& text) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  return out.c_str();
}

std::string parse_int(const YAML::Node& node, int64_t& value) {
  std::string error;
  std::string text = scalar_text(node, error);
  return error.empty() ? parse_integer(text, value) : error;
}

std::string parse_float(const YAML::Node& node, double& value) {
  std::string error;
  std::string text = scalar_text(node, error);
  return error.empty() ? parse_number(text, value) : error;
}

std::string parse_bool(const YAML::Node& node, bool& value) {
  std::string error;
  std::string text = scalar_text(node, error);
  if (!error.empty()) return error;
  if (text == "true" || text == "yes") return value = true, "";
  if (text == "false" || text == "no") return value = false, "";
  return "expects true or false, got '" + text + "'";
}

// "3600", "90s", "50m", "1h30m" -> seconds.
std::string parse_duration(const YAML::Node& node, double& seconds) {
  std::string error;
  std::string text = scalar_text(node, error);
  if (!error.empty()) return error;
  std::string bad = "expects a duration such as 3600, 90s, 50m or 1h30m, got '" + text + "'";
  if (text.empty()) return bad;
  seconds = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t used = 0;
    double amount = 0;
    try {
      amount = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      return bad;
    }
    pos += used;
    double unit = 1;
    if (pos < text.size()) {
      switch (text[pos++]) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        default:
          return bad;
      }
    } else if (used != text.size()) {
      return bad;  // a bare number must be the whole text
    }
    if (!(amount >= 0)) return bad;
    seconds += amount * unit;
  }
  return "";
}

template <class T>
std::string parse_list(const YAML::Node& node, std::vector<T>& values,
                       std::string (*parse_item)(const YAML::Node&, T&)) {
  values.clear();
  if (node.IsScalar()) {
    T item{};
    std::string error = parse_item(node, item);
    if (error.empty()) values.push_back(item);
    return error;
  }
  if (!node.IsSequence()) return "expects a list";
  for (const auto& child : node) {
    T item{};
    std::string error = parse_item(child, item);
    if (!error.empty()) return "list item: " + error;
    values.push_back(item);
  }
  return "";
}

std::string parse_string(const YAML::Node& node, std::string& value) {
  std::string error;
  value = scalar_text(node, error);
  return error;
}

std::string parse_corpus(const YAML::Node& node, TrainCorpus& corpus) {
  if (!node.IsMap()) return parse_string(node, corpus.split);
  for (const auto& entry : node) {
    std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    std::string error;
    if (name == "split") {
      error = parse_string(entry.second, corpus.split);
    } else if (name == "weight") {
      error = parse_float(entry.second, corpus.weight);
      if (error.empty() && !(corpus.weight > 0)) {
        error = fmt::format("{} is out of range: expected > 0", corpus.weight);
      }
    } else {
      return "unknown key '" + name + "' in a corpus (expected split and weight)";
    }
    if (!error.empty()) return name + ": " + error;
  }
  return "";
}

std::string parse_corpora(const YAML::Node& node, std::vector<TrainCorpus>& corpora) {
  std::string error = node.IsMap() ? "expects a corpus name or a list of corpora"
                                   : parse_list(node, corpora, parse_corpus);
  if (!error.empty()) return error;
  if (corpora.empty()) return "expects at least one corpus";
  for (size_t i = 0; i < corpora.size(); ++i) {
    if (corpora[i].split.empty()) return fmt::format("corpus {} has no split name", i + 1);
    for (size_t j = 0; j < i; ++j) {
      if (corpora[j].split == corpora[i].split)
        return "corpus '" + corpora[i].split + "' is listed twice";
    }
  }
  return "";
}

template <class Section>
class SectionBuilder {
 public:
  SectionBuilder(std::vector<OptionSpec>& options, std::string name, Section RunConfig::*section)
      : options_(options), name_(std::move(name)), section_(section) {}

  void integer(const char* key, int64_t Section::*field, int64_t fallback, Range range,
               const char* help) {
    add(
        key, "int " + range.describe(), std::to_string(fallback), help,
        [=](const YAML::Node& node, Section& s) {
          int64_t value = 0;
          std::string error = parse_int(node, value);
          if (error.empty()) error = range.check(static_cast<double>(value));
          if (error.empty()) s.*field = value;
          return error;
        },
        [=](const Section& s) { return std::to_string(s.*field); });
  }

  void real(const char* key, double Section::*field, double fallback, Range range,
            const char* help) {
    add(
        key, "float " + range.describe(), format_number(fallback), help,
        [=](const YAML::Node& node, Section& s) {
          double value = 0;
          std::string error = parse_float(node, value);
          if (error.empty()) error = range.check(value);
          if (error.empty()) s.*field = value;
          return error;
        },
        [=](const Section& s) { return format_number(s.*field); });
  }

  void duration(const char* key, double Section::*field, double fallback, const char* help) {
    add(
        key, "duration (seconds, or 90s / 50m / 1h30m)", format_number(fallback), help,
        [=](const YAML::Node& node, Section& s) { return parse_duration(node, s.*field); },
        [=](const Section& s) { return format_number(s.*field); });
  }

  void boolean(const char* key, bool Section::*field, bool fallback, const char* help) {
    add(
        key, "bool", fallback ? "true" : "false", help,
        [=](const YAML::Node& node, Section& s) { return parse_bool(node, s.*field); },
        [=](const Section& s) { return std::string(s.*field ? "true" : "false"); });
  }

  void string(const char* key, std::string Section::*field, const std::string& fallback,
              const char* help) {
    add(
        key, "string", quote(fallback), help,
        [=](const YAML::Node& node, Section& s) { return parse_string(node, s.*field); },
        [=](const Section& s) { return quote(s.*field); });
  }

  void strings(const char* key, std::vector<std::string> Section::*field,
               const std::vector<std::string>& fallback, const char* help) {
    auto format = [](const std::vector<std::string>& values) {
      std::string text;
      for (const auto& v : values) text += (text.empty() ? "" : ", ") + quote(v);
      return "[" + text + "]";
    };
    add(
        key, "list of strings", format(fallback), help,
        [=](const YAML::Node& node, Section& s) {
          return parse_list(node, s.*field, parse_string);
        },
        [=](const Section& s) { return format(s.*field); });
  }

  // A corpus name, or a list of names and {split: NAME, weight: W} mappings.
  void corpora(const char* key, std::vector<TrainCorpus> Section::*field,
               const std::string& fallback, const char* help) {
    auto format = [](const std::vector<TrainCorpus>& values) {
      if (values.size() == 1 && values[0].weight == 1.0) return quote(values[0].split);
      std::string text;
      for (const auto& corpus : values) {
        text += text.empty() ? "" : ", ";
        text += corpus.weight == 1.0 ? quote(corpus.split)
                                     : fmt::format("{{split: {}, weight: {}}}", quote(corpus.split),
                                                   format_number(corpus.weight));
      }
      return "[" + text + "]";
    };
    add(
        key, "corpus name, or list of names and {split, weight} mappings", quote(fallback), help,
        [=](const YAML::Node& node, Section& s) {
          std::vector<TrainCorpus> values;
          std::string error = parse_corpora(node, values);
          if (error.empty()) s.*field = std::move(values);
          return error;
        },
        [=](const Section& s) { return format(s.*field); });
  }

  void reals(const char* key, std::vector<double> Section::*field,
             const std::vector<double>& fallback, size_t count, Range range, const char* help) {
    auto format = [](const std::vector<double>& values) {
      std::string text;
      for (double v : values) text += (text.empty() ? "" : ", ") + format_number(v);
      return "[" + text + "]";
    };
    add(
        key, fmt::format("list of {} floats {}", count, range.describe()), format(fallback), help,
        [=](const YAML::Node& node, Section& s) {
          std::vector<double> values;
          std::string error = parse_list(node, values, parse_float);
          if (error.empty() && values.size() != count) {
            error = fmt::format("expects {} numbers, got {}", count, values.size());
          }
          for (double v : values) {
            if (error.empty()) error = range.check(v);
          }
          if (error.empty()) s.*field = values;
          return error;
        },
        [=](const Section& s) { return format(s.*field); });
  }

  template <class T>
  void choice(const char* key, T Section::*field, T fallback, ChoiceTable<T> table,
              const char* help) {
    add(
        key, "one of: " + choice_names(table), choice_name(table, fallback), help,
        [=](const YAML::Node& node, Section& s) {
          std::string error;
          std::string text = scalar_text(node, error);
          return error.empty() ? parse_choice(table, text, s.*field) : error;
        },
        [=](const Section& s) { return std::string(choice_name(table, s.*field)); });
  }

  // A key an architecture declared for itself, kept in `field` as its canonical text.
  void declared(const ArchOptionSpec& spec, std::map<std::string, std::string> Section::*field) {
    add(
        spec.key.c_str(), spec.type, spec.default_value, spec.help.c_str(),
        [=](const YAML::Node& node, Section& s) {
          std::string error;
          std::string text = scalar_text(node, error);
          std::string canonical;
          if (error.empty()) error = spec.parse(text, canonical);
          if (error.empty()) (s.*field)[spec.key] = canonical;
          return error;
        },
        [=](const Section& s) {
          auto value = (s.*field).find(spec.key);
          return value == (s.*field).end() ? spec.default_value : value->second;
        });
  }

  // Keys declared from here on may (or may not) be set per request of nmtzoo-serve.
  void per_request(bool allowed) { per_request_ = allowed; }
  // The last key's field name in a server request, when not its own name.
  void request_field(const char* name) { options_.back().request_field = name; }

 private:
  using Assign = std::function<std::string(const YAML::Node&, Section&)>;
  using Format = std::function<std::string(const Section&)>;

  void add(const char* key, std::string type, std::string fallback, const char* help, Assign assign,
           Format format) {
    auto section = section_;
    options_.push_back(
        OptionSpec{name_ + "." + key,
                   std::move(type),
                   std::move(fallback),
                   help,
                   [section, assign](const YAML::Node& node, RunConfig& c) {
                     return assign(node, c.*section);
                   },
                   [section, format](const RunConfig& c) { return format(c.*section); },
                   per_request_,
                   {}});
  }

  std::vector<OptionSpec>& options_;
  std::string name_;
  Section RunConfig::*section_;
  bool per_request_ = false;
};

const ChoiceTable<SharingChoice> kSharing{{"auto", SharingChoice::kAuto},
                                          {"none", SharingChoice::kNone},
                                          {"decoder", SharingChoice::kDecoder},
                                          {"all", SharingChoice::kAll}};

std::vector<OptionSpec> build_schema() {
  std::vector<OptionSpec> options;
  const Range& positive = kPositive;
  const Range& non_negative = kNonNegative;
  const Range& probability = kProbability;

  SectionBuilder<DataConfig> data(options, "data", &RunConfig::data);
  data.string("dir", &DataConfig::dir, "data/multi30k",
              "folder holding <split>.<lang>[.gz] files, one sentence a line");
  data.string("src_lang", &DataConfig::src_lang, "de", "source language suffix");
  data.string("tgt_lang", &DataConfig::tgt_lang, "en", "target language suffix");
  data.strings(
      "directions", &DataConfig::directions, {},
      "a multilingual run: its directions ([de-en, fr-en]), each read as <split>.<src> and "
      "<split>.<tgt> of every corpus, one joint tokenizer, each source tagged with its "
      "target language (<2en>); empty: the one direction src_lang -> tgt_lang");
  data.corpora("train", &DataConfig::train, "train",
               "training corpus, or several: [news, {split: backtranslated, weight: 0.5}]; a "
               "weight is the corpus's sampling rate per epoch (2 = twice, 0.5 = a fresh half)");
  data.string("valid", &DataConfig::valid, "val", "validation split name (model selection)");
  data.strings("test", &DataConfig::test,
               {"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"},
               "test split names, translated and scored after training");
  data.integer("max_len", &DataConfig::max_len, 128, positive,
               "training pairs with more subword tokens on either side are dropped");
  data.real("max_len_ratio", &DataConfig::max_len_ratio, 9.0, Range{1},
            "training pairs whose token-length ratio exceeds this are dropped");
  data.choice<InvalidUtf8Policy>(
      "invalid_utf8", &DataConfig::invalid_utf8, InvalidUtf8Policy::kError,
      {{"error", InvalidUtf8Policy::kError}, {"skip", InvalidUtf8Policy::kSkip}},
      "a training line that is not UTF-8: stop with its file and line, "
      "or skip the pair and count it");
  data.string("bin_dir", &DataConfig::bin_dir, "",
              "binary dataset folder (nmtzoo-prepare's output, made by nmtzoo-train when missing "
              "or stale); empty = <run dir>/data-bin");

  SectionBuilder<TokenizerConfig> tok(options, "tokenizer", &RunConfig::tokenizer);
  tok.choice<SubwordModel>("model_type", &TokenizerConfig::model_type, SubwordModel::kBpe,
                           {{"bpe", SubwordModel::kBpe}, {"unigram", SubwordModel::kUnigram}},
                           "SentencePiece model type");
  tok.integer("vocab_size", &TokenizerConfig::vocab_size, 8000, Range{16, 1 << 20},
              "vocabulary size, special tokens included");
  tok.boolean("joint", &TokenizerConfig::joint, true,
              "one vocabulary for both languages (needed for model.share_embeddings: all)");
  tok.real("character_coverage", &TokenizerConfig::character_coverage, 1.0, Range{0.9, 1.0},
           "fraction of characters covered by the model's alphabet");
  tok.integer("input_sentence_size", &TokenizerConfig::input_sentence_size, 2000000, non_negative,
              "train on a random sample of at most this many sentences (bounds its memory on "
              "large corpora); 0 = all");
  tok.string("prefix", &TokenizerConfig::prefix, "",
             "model path prefix (<prefix>.model, or <prefix>.<lang>.model when not joint); "
             "empty = <run dir>/spm; trained when missing");
  tok.real("sampling_alpha", &TokenizerConfig::sampling_alpha, 0.0, Range{0},
           "subword regularization: each training sentence segmented afresh every epoch, by "
           "BPE-dropout with this merge-drop probability (bpe) or unigram sampling with this "
           "smoothing (unigram; 0.1-0.5 is usual); never validation or test; 0 = off");
  tok.choice<SamplingSides>("sampling_sides", &TokenizerConfig::sampling_sides,
                            SamplingSides::kBoth,
                            {{"source", SamplingSides::kSource},
                             {"target", SamplingSides::kTarget},
                             {"both", SamplingSides::kBoth}},
                            "which side of a training pair tokenizer.sampling_alpha re-segments");

  SectionBuilder<ModelConfig> model(options, "model", &RunConfig::model);
  model.string("arch", &ModelConfig::arch, "transformer_small",
               "architecture or preset name (see the model registry); presets fill unset keys");
  // The architectures' own keys, as they declared them (torch_free/archs/*_arch.cpp).
  for (const auto& spec : published_arch_options())
    model.declared(spec, &ModelConfig::arch_options);
  model.integer("max_positions", &ModelConfig::max_positions, 1024, Range{1, 1 << 20},
                "longest sequence the model accepts, in tokens");
  const Range layer_count{1, 1000};
  model.integer("encoder_layers", &ModelConfig::encoder_layers, 6, layer_count, "encoder layers");
  model.integer("decoder_layers", &ModelConfig::decoder_layers, 6, layer_count, "decoder layers");
  model.real("dropout", &ModelConfig::dropout, 0.1, probability, "dropout probability");
  model.real("source_word_dropout", &ModelConfig::source_word_dropout, 0.0, probability,
             "training: drop each source token's whole embedding with this probability "
             "(Marian's --dropout-src; Sennrich & Zhang 2019)");
  model.real("target_word_dropout", &ModelConfig::target_word_dropout, 0.0, probability,
             "training: the same for the decoder's input tokens (Marian's --dropout-trg)");
  model.choice<SharingChoice>("share_embeddings", &ModelConfig::share_embeddings,
                              SharingChoice::kAuto, kSharing,
                              "tie embeddings: none, decoder (input = output projection), all "
                              "(also the encoder; joint vocabulary only), auto (all if joint)");

  SectionBuilder<TrainConfig> train(options, "training", &RunConfig::training);
  train.integer("seed", &TrainConfig::seed, 1, non_negative,
                "seed for initialisation, shuffling, dropout");
  train.choice<DeviceChoice>(
      "device", &TrainConfig::device, DeviceChoice::kAuto,
      {{"auto", DeviceChoice::kAuto}, {"cpu", DeviceChoice::kCpu}, {"cuda", DeviceChoice::kCuda}},
      "where to train; auto = cuda when available");
  train.integer("threads", &TrainConfig::threads, 0, non_negative,
                "CPU threads for LibTorch; 0 = all cores");
  train.string(
      "output_dir", &TrainConfig::output_dir, "",
      "run folder for checkpoints, logs and the resolved config; empty = runs/<config name>");
  train.integer("max_tokens", &TrainConfig::max_tokens, 4096, positive,
                "batch size in tokens (padded, the larger of source and target)");
  train.integer("update_freq", &TrainConfig::update_freq, 1, positive,
                "batches accumulated per optimizer step");
  train.choice<OptimizerKind>("optimizer", &TrainConfig::optimizer, OptimizerKind::kAdam,
                              {{"adam", OptimizerKind::kAdam}, {"adamw", OptimizerKind::kAdamW}},
                              "optimizer");
  train.real("lr", &TrainConfig::lr, 0.0, non_negative,
             "peak learning rate; 0 with inverse_sqrt = d_model^-0.5 * warmup^-0.5 (the paper)");
  train.reals("betas", &TrainConfig::betas, {0.9, 0.98}, 2, probability, "Adam betas");
  train.real("eps", &TrainConfig::eps, 1e-9, Range{0, 1}, "Adam epsilon");
  train.real("weight_decay", &TrainConfig::weight_decay, 0.0, non_negative, "weight decay");
  train.choice<LrSchedule>("schedule", &TrainConfig::schedule, LrSchedule::kInverseSqrt,
                           {{"inverse_sqrt", LrSchedule::kInverseSqrt},
                            {"constant", LrSchedule::kConstant},
                            {"plateau", LrSchedule::kPlateau},
                            {"linear", LrSchedule::kLinear},
                            {"cosine", LrSchedule::kCosine}},
                           "learning-rate schedule; linear and cosine decay the rate to min_lr "
                           "over the run's budget (the largest used fraction of max_steps, "
                           "max_time and max_epochs)");
  train.integer("warmup_steps", &TrainConfig::warmup_steps, 4000, non_negative,
                "linear warmup steps (inverse_sqrt; also applied to the others)");
  train.real("plateau_factor", &TrainConfig::plateau_factor, 0.5, Range{0, 1, true},
             "plateau: multiply the rate by this when validation stops improving");
  train.integer("plateau_patience", &TrainConfig::plateau_patience, 2, non_negative,
                "plateau: validations without improvement before decaying");
  train.real("min_lr", &TrainConfig::min_lr, 0.0, non_negative,
             "plateau: lower bound on the rate; linear and cosine: the rate at the budget's end");
  train.real("label_smoothing", &TrainConfig::label_smoothing, 0.1, probability,
             "label smoothing epsilon");
  train.real("clip_norm", &TrainConfig::clip_norm, 0.0, non_negative,
             "clip gradients to this global norm; 0 = off");
  train.real("ema_decay", &TrainConfig::ema_decay, 0.0, probability,
             "exponential moving average of the weights (Marian's exponential smoothing): "
             "validation, checkpoints and translation use the average, whose decay is "
             "min(this, (1 + step) / (10 + step)); 0 = off, 0.999-0.9999 usual");
  train.integer("max_steps", &TrainConfig::max_steps, 0, non_negative,
                "stop after this many updates; 0 = no limit");
  train.integer("max_epochs", &TrainConfig::max_epochs, 0, non_negative,
                "stop after this many epochs; 0 = no limit");
  train.duration("max_time", &TrainConfig::max_time, 0,
                 "stop after this much training time; 0 = no limit");
  train.real("reference_gflops", &TrainConfig::reference_gflops, 0.0, non_negative,
             "max_time is time on a machine whose float32 matmul ceiling (2048^3, as nmtzoo-bench "
             "measures it) is this many GFLOP/s: each start, resume and validation measures this "
             "machine's and counts the seconds here until the next measurement as "
             "measured/reference seconds of max_time (recorded in training_summary.json); 0 = "
             "wall-clock seconds here");
  train.integer(
      "valid_every", &TrainConfig::valid_every, 1000, non_negative,
      "validate and checkpoint every this many updates, and at each epoch end; 0 = epochs only");
  train.boolean("valid_bleu", &TrainConfig::valid_bleu, true,
                "decode the validation set and score BLEU and chrF2");
  train.integer("valid_beam", &TrainConfig::valid_beam, 1, positive,
                "beam size for validation BLEU");
  train.choice<SelectionMetric>("best_metric", &TrainConfig::best_metric, SelectionMetric::kBleu,
                                {{"bleu", SelectionMetric::kBleu},
                                 {"chrf", SelectionMetric::kChrf},
                                 {"loss", SelectionMetric::kLoss}},
                                "validation metric choosing checkpoint_best and early stopping "
                                "(BLEU, chrF2 or label-smoothed loss)");
  train.integer("patience", &TrainConfig::patience, 0, non_negative,
                "stop after this many validations without improvement; 0 = never");
  train.integer("keep_last", &TrainConfig::keep_last, 5, positive, "numbered checkpoints kept");
  train.integer(
      "keep_best", &TrainConfig::keep_best, 0, non_negative,
      "numbered checkpoints with the best validation scores (best_metric) kept besides the "
      "newest keep_last, for nmtzoo-average --best");
  train.integer("log_every", &TrainConfig::log_every, 100, positive, "updates between log lines");
  train.boolean("tensorboard", &TrainConfig::tensorboard, true,
                "write TensorBoard event files into the run folder (events.out.tfevents.*): the "
                "train scalars every log_every updates, the valid ones at each validation");
  train.integer("max_bad_steps", &TrainConfig::max_bad_steps, 10, positive,
                "abort after this many consecutive non-finite losses");
  train.boolean(
      "bf16", &TrainConfig::bf16, false,
      "CPU bfloat16 autocast for matrix products (faster on AMX, slightly less accurate)");
  train.boolean("check_replicas", &TrainConfig::check_replicas, false,
                "multi-process: verify after every update that all ranks hold identical weights");
  train.string("init_from", &TrainConfig::init_from, "",
               "fine-tune: start a new run from this checkpoint's weights (same model keys, "
               "tokenizer and vocabulary; its tokenizer is adopted when the run has none)");
  train.boolean("reset_optimizer", &TrainConfig::reset_optimizer, true,
                "with init_from: a fresh optimizer (false: keep the checkpoint's Adam moments)");
  train.boolean("reset_schedule", &TrainConfig::reset_schedule, true,
                "with init_from: restart the learning-rate schedule (warmup included) at step 0");
  train.boolean("reset_progress", &TrainConfig::reset_progress, true,
                "with init_from: count updates, epochs and time from zero (false: continue the "
                "checkpoint's counts, so max_steps and max_time include them)");

  SectionBuilder<DecodeConfig> decode(options, "decoding", &RunConfig::decoding);
  decode.per_request(true);
  decode.integer("beam", &DecodeConfig::beam, 5, Range{1, 1024}, "beam size; 1 = greedy");
  decode.integer(
      "nbest", &DecodeConfig::nbest, 1, Range{1, 1024},
      "hypotheses output per sentence (<= beam; with sampling: samples per sentence, each "
      "a decoding of its own, hence the bound)");
  decode.choice<LengthPenalty>("length_penalty", &DecodeConfig::length_penalty,
                               LengthPenalty::kAverage,
                               {{"none", LengthPenalty::kNone},
                                {"avg", LengthPenalty::kAverage},
                                {"wu", LengthPenalty::kWu}},
                               "final score: none = log-prob, avg = log-prob / len^alpha, "
                               "wu = log-prob / ((5+len)/6)^alpha (GNMT)");
  decode.real("alpha", &DecodeConfig::alpha, 1.0, non_negative, "length penalty strength");
  decode.real(
      "max_len_a", &DecodeConfig::max_len_a, 1.5, Range{0, 1000},
      "output length limit a * source_len + b: a (the model's max_positions caps the limit)");
  decode.integer(
      "max_len_b", &DecodeConfig::max_len_b, 10, Range{0, 1 << 20},
      "output length limit a * source_len + b: b (the model's max_positions caps the limit)");
  decode.integer("min_len", &DecodeConfig::min_len, 1, non_negative, "shortest output, in tokens");
  decode.per_request(false);
  decode.integer("batch_tokens", &DecodeConfig::batch_tokens, 4096, positive,
                 "decoding batch size in source tokens");
  decode.choice<DecodeDtype>("dtype", &DecodeConfig::dtype, DecodeDtype::kFloat32,
                             {{"float32", DecodeDtype::kFloat32},
                              {"bf16", DecodeDtype::kBf16},
                              {"int8", DecodeDtype::kInt8}},
                             "number format of the matrix products: float32; bf16 (CPU autocast: "
                             "products in bfloat16); int8 (CPU: linear layers with int8 weights, "
                             "quantized per row at first use, products in oneDNN)");
  decode.boolean("bf16", &DecodeConfig::bf16, false,
                 "the same as dtype: bf16 (the older spelling)");
  decode.string(
      "target_lang", &DecodeConfig::target_lang, "",
      "the language a multilingual model translates into (its data.directions' targets); "
      "\"\" = the model's only one. A jsonl line's target sets it for that line, a server "
      "request's target for the request; a text holding the model's tag (<2de>) is refused");
  decode.string(
      "shortlist", &DecodeConfig::shortlist, "",
      "lexical shortlist file (nmtzoo-shortlist): each batch scores only its source tokens' "
      "likely translations and the most frequent target tokens; \"\" = the whole vocabulary; "
      "not used for sampling or constraints");
  decode.integer(
      "shortlist_top_k", &DecodeConfig::shortlist_top_k, 10, positive,
      "shortlist: candidates kept per source token (10 and 100 were chosen on Multi30k's val)");
  decode.integer("shortlist_frequent", &DecodeConfig::shortlist_frequent, 100, non_negative,
                 "shortlist: most frequent target tokens always kept");
  decode.per_request(true);
  // Bounded so that scores stay finite in float32: -1e39 would make <unk> +inf, a score no
  // hypothesis survives, and every output empty; 1e6 already keeps <unk> out.
  decode.real("unk_penalty", &DecodeConfig::unk_penalty, 0.0, Range{-1e6, 1e6},
              "subtracted from the log-probability of <unk> (negative: reward it)");
  decode.real("coverage_penalty", &DecodeConfig::coverage_penalty, 0.0, non_negative,
              "GNMT coverage penalty beta: + beta * sum_j log(min(attention to source word j, 1)); "
              "needs a model with attention");
  decode.boolean("sampling", &DecodeConfig::sampling, false,
                 "sample instead of beam search: nbest samples per sentence");
  // Bounded both ways so that T and 1/T stay finite in float32 (1e39 would make every weight 0 or
  // NaN, and every output empty).
  decode.real("temperature", &DecodeConfig::temperature, 1.0, Range{1e-6, 1e6},
              "sampling: divides the log-probabilities (< 1 sharper, > 1 flatter)");
  decode.integer("top_k", &DecodeConfig::top_k, 0, non_negative,
                 "sampling: only from the k most probable tokens; 0 = all");
  decode.real("top_p", &DecodeConfig::top_p, 1.0, Range{1e-6, 1.0},
              "sampling: only from the smallest set of tokens holding this probability (nucleus)");
  decode.integer("seed", &DecodeConfig::seed, 1, non_negative,
                 "sampling: each line's generator is seeded from this and the line number");
  decode.choice<ConstraintMode>("constraints", &DecodeConfig::constraints, ConstraintMode::kNone,
                                {{"none", ConstraintMode::kNone},
                                 {"ordered", ConstraintMode::kOrdered},
                                 {"unordered", ConstraintMode::kUnordered}},
                                "lexically constrained beam search over the constraints of tsv or "
                                "jsonl input: met in the given order, or in any order");
  decode.request_field("constraint_order");

  SectionBuilder<ServeConfig> serve(options, "serve", &RunConfig::serve);
  serve.string(
      "host", &ServeConfig::host, "127.0.0.1",
      "nmtzoo-serve's address (0.0.0.0: every interface; the default serves this machine only)");
  serve.integer("port", &ServeConfig::port, 8080, Range{0, 65535}, "TCP port; 0 = any free port");
  serve.integer("http_threads", &ServeConfig::http_threads, 64, Range{1, 4096},
                "requests handled at once (idle keep-alive connections and clients still sending "
                "their request hold none); decoding has its own queue and thread, so this does not "
                "cap the batch");
  serve.integer("decode_workers", &ServeConfig::decode_workers, 1, Range{1, 256},
                "batches decoded at once on the same loaded models, each with --threads / "
                "decode_workers CPU threads (CTranslate2's inter_threads): more raise throughput "
                "when requests are small and come from many clients; 1 makes the largest batches");
  serve.real("max_wait_ms", &ServeConfig::max_wait_ms, 10.0, Range{0, 60000},
             "a request waits at most this long for others to share its batch");
  serve.real("read_timeout_s", &ServeConfig::read_timeout_s, 10.0, Range{0.1, 3600},
             "a request's head and body must arrive within this of its first byte (else 408), its "
             "answer be written within as long; an idle connection is closed after it");
  serve.integer("max_body_bytes", &ServeConfig::max_body_bytes, 1 << 20, positive,
                "larger request bodies, counted after decompression, are refused as soon as the "
                "bound is passed (413)");
  serve.integer("max_lines", &ServeConfig::max_lines, 1000, positive,
                "sentences per request (lines of every q together)");
  serve.integer("max_line_chars", &ServeConfig::max_line_chars, 5000, positive,
                "characters per sentence (longer: 400)");
  serve.integer("max_queue", &ServeConfig::max_queue, 10000, positive,
                "sentences waiting to be decoded; a request beyond it gets 503");
  serve.integer("max_alternatives", &ServeConfig::max_alternatives, 16, Range{0, 1024},
                "LibreTranslate's alternatives per request (more: 400); each widens the beam");
  serve.strings("api_keys", &ServeConfig::api_keys, {},
                "accepted LibreTranslate api_key values; empty = no key needed (a given key is "
                "ignored)");
  return options;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems_)
    : std::runtime_error(join_messages(problems_)), problems(std::move(problems_)) {}

const std::vector<OptionSpec>& config_schema() {
  // Rebuilt when an architecture registered since publishes keys; registration happens at start
  // (register_builtin_models()), before any config is read.
  static std::mutex mutex;
  static std::vector<OptionSpec> schema;
  static uint64_t generation = ~uint64_t{0};
  std::lock_guard<std::mutex> lock(mutex);
  if (generation != arch_options_generation()) {
    generation = arch_options_generation();
    schema = build_schema();
  }
  return schema;
}

const std::vector<std::string>& config_sections() {
  static const std::vector<std::string> sections{"data",     "tokenizer", "model",
                                                 "training", "decoding",  "serve"};
  return sections;
}

const OptionSpec* find_option(const std::string& key) {
  for (const auto& option : config_schema()) {
    if (option.key == key) return &option;
  }
  return nullptr;
}

std::vector<const OptionSpec*> section_options(const std::string& section) {
  std::vector<const OptionSpec*> options;
  const std::string prefix = section + ".";
  for (const auto& option : config_schema()) {
    if (option.key.compare(0, prefix.size(), prefix) == 0) options.push_back(&option);
  }
  return options;
}

std::string section_fingerprint(const RunConfig& config, const std::string& section) {
  std::string text;
  for (const OptionSpec* option : section_options(section)) {
    text += option->key + '=' + option->format(config) + '\n';
  }
  return text;
}

std::string suggest_key(const std::string& key) {
  auto dot = key.find('.');
  std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
  std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  std::string best;
  size_t best_cost = std::numeric_limits<size_t>::max();
  for (const auto& option : config_schema()) {
    auto option_dot = option.key.find('.');
    std::string option_name = option.key.substr(option_dot + 1);
    bool same_section = option.key.compare(0, option_dot, section) == 0;
    // A right name in the wrong section is the likeliest slip; then a near name in the section.
    size_t cost = edit_distance(name, option_name) * 2 + (same_section ? 0 : 1);
    if (cost < best_cost) {
      best_cost = cost;
      best = option.key;
    }
  }
  size_t allowed = std::max<size_t>(2, name.size() / 3) * 2 + 1;
  return best_cost <= allowed ? best : "";
}

}  // namespace nmtzoo
