// SPDX-License-Identifier: MIT
// Typed configuration of a run. Every field is declared, with its default, type, range and help,
// exactly once: in schema.cpp. Use default_config() or load_config() to get a filled RunConfig.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "torch_free/common/model_config.h"
#include "torch_free/common/tokenizer_choices.h"

namespace nmtzoo {

enum class InvalidUtf8Policy { kError, kSkip };
enum class DeviceChoice { kCpu, kCuda, kAuto };
enum class OptimizerKind { kAdam, kAdamW };
enum class LrSchedule { kInverseSqrt, kConstant, kPlateau, kLinear, kCosine };
// The validation score that picks checkpoint_best and drives early stopping.
enum class SelectionMetric { kBleu, kChrf, kLoss };
inline const char* selection_metric_name(SelectionMetric metric) {
  return metric == SelectionMetric::kBleu   ? "bleu"
         : metric == SelectionMetric::kChrf ? "chrf"
                                            : "loss";
}
enum class LengthPenalty { kNone, kAverage, kWu };
// The number format of decoding's matrix products.
enum class DecodeDtype { kFloat32, kBf16, kInt8 };
// Lexically constrained decoding (fairseq's --constraints): none, or constraints met in the given
// order, or in any order.
enum class ConstraintMode { kNone, kOrdered, kUnordered };

// One training corpus: <data.dir>/<split>.<lang>[.gz], and how many times per epoch each of its
// pairs is seen (fairseq's upsampling; a fraction samples that share of it, anew every epoch).
// A rule between keys of one section that their values break: the key as its section names it
// ("nbest") and what is wrong ("(3) exceeds beam (2)"), worded once. Each caller names the key as
// its user knows it: decoding.nbest in a config (check_config), the field nbest of a server
// request, the search's std::invalid_argument.
struct KeyProblem {
  std::string key;
  std::string message;
};

struct TrainCorpus {
  std::string split;
  double weight = 1.0;
  bool operator==(const TrainCorpus& other) const {
    return split == other.split && weight == other.weight;
  }
};

struct DataConfig {
  std::string dir;
  std::string src_lang;
  std::string tgt_lang;
  std::vector<std::string>
      directions;  // "de-en", ...: a multilingual run; empty: src_lang-tgt_lang
  std::vector<TrainCorpus> train;
  std::string valid;
  std::vector<std::string> test;
  int64_t max_len;
  double max_len_ratio;
  InvalidUtf8Policy invalid_utf8;
  std::string bin_dir;
};

struct TokenizerConfig {
  SubwordModel model_type;
  int64_t vocab_size;
  bool joint;
  double character_coverage;
  int64_t input_sentence_size;
  std::string prefix;
  double sampling_alpha;  // subword regularization of training pairs; 0 = off
  SamplingSides sampling_sides;

  std::vector<KeyProblem> validate() const;
};

struct TrainConfig {
  int64_t seed;
  DeviceChoice device;
  int64_t threads;
  std::string output_dir;
  int64_t max_tokens;
  int64_t update_freq;
  OptimizerKind optimizer;
  double lr;
  std::vector<double> betas;
  double eps;
  double weight_decay;
  LrSchedule schedule;
  int64_t warmup_steps;
  double plateau_factor;
  int64_t plateau_patience;
  double min_lr;
  double label_smoothing;
  double clip_norm;
  double ema_decay;  // weight average; 0 = off
  int64_t max_steps;
  int64_t max_epochs;
  double max_time;
  double reference_gflops;  // machine max_time is stated for; 0 = wall-clock time here
  int64_t valid_every;
  bool valid_bleu;
  int64_t valid_beam;
  SelectionMetric best_metric;
  int64_t patience;
  int64_t keep_last;
  int64_t keep_best;
  int64_t log_every;
  bool tensorboard;  // event files beside metrics.jsonl
  int64_t max_bad_steps;
  bool bf16;
  bool check_replicas;
  std::string init_from;
  bool reset_optimizer;
  bool reset_schedule;
  bool reset_progress;

  std::vector<KeyProblem> validate() const;
};

struct DecodeConfig {
  int64_t beam;
  int64_t nbest;
  LengthPenalty length_penalty;
  double alpha;
  double max_len_a;
  int64_t max_len_b;
  int64_t min_len;
  int64_t batch_tokens;
  DecodeDtype dtype;
  bool bf16;              // the older spelling of dtype: bf16
  std::string shortlist;  // lexical shortlist file, "" = none
  int64_t shortlist_top_k;
  int64_t shortlist_frequent;
  double unk_penalty;
  double coverage_penalty;
  bool sampling;
  double temperature;
  int64_t top_k;
  double top_p;
  int64_t seed;
  ConstraintMode constraints;
  std::string target_lang;  // of a multilingual model; "" = its only target language

  // Every section with rules between its keys has one validate(), which every caller uses: the
  // config check, the server, the Python module and the library's search.
  std::vector<KeyProblem> validate() const;
};

// nmtzoo-serve: where it listens, how long requests may wait to be batched, and its limits.
struct ServeConfig {
  std::string host;
  int64_t port;
  int64_t http_threads;
  int64_t decode_workers;
  double max_wait_ms;
  double read_timeout_s;
  int64_t max_body_bytes;
  int64_t max_lines;
  int64_t max_line_chars;
  int64_t max_queue;
  int64_t max_alternatives;
  std::vector<std::string> api_keys;
};

// One translation direction of a run's data.
struct LanguagePair {
  std::string src;
  std::string tgt;
  std::string name() const { return src + "-" + tgt; }
};

// The source-side token that asks a multilingual model for `lang` (Johnson et al. 2017's
// target-language tag, spelt as fairseq's and Marian's examples do): "<2en>".
std::string target_language_tag(const std::string& lang);

struct RunConfig {
  DataConfig data;
  TokenizerConfig tokenizer;
  ModelConfig model;
  TrainConfig training;
  DecodeConfig decoding;
  ServeConfig serve;

  std::string source;                         // the YAML file, or "" for defaults only
  std::set<std::string> explicit_keys;        // dotted keys set by the YAML or --set
  std::map<std::string, std::string> origin;  // dotted key -> "file:line" or "--set"

  // Paths derived from the options.
  std::string run_dir() const;  // training.output_dir or runs/<config stem>
  std::string tokenizer_model(const std::string& lang) const;
  std::string corpus_path(const std::string& split, const std::string& lang) const;
  std::string dataset_dir() const;  // data.bin_dir or <run dir>/data-bin
  // data.directions, or the one direction data.src_lang -> data.tgt_lang.
  std::vector<LanguagePair> language_pairs() const;
  // A multilingual run (data.directions) tags each source with its target language.
  bool multilingual() const { return !data.directions.empty(); }
  std::vector<std::string> target_languages() const;  // of language_pairs(), each once, in order
  // Where a key was set, for error messages: "file:line", "--set", or "default".
  std::string where(const std::string& key) const;
};

}  // namespace nmtzoo
