#include "core/train/trainer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <regex>

#include "core/config/loader.h"
#include "core/data/batch.h"
#include "core/data/batching.h"
#include "core/metrics/bleu.h"
#include "core/search/translator.h"
#include "core/train/distributed.h"
#include "core/train/loss.h"
#include "core/train/runtime.h"
#include "models/encoder_decoder.h"
#include "models/registry.h"
#include "tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop_requested{false};

extern "C" void request_stop(int) { g_stop_requested = true; }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string format_duration(double seconds) {
  auto s = static_cast<int64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", seconds);
}

// Keys of `sections` whose values differ between two configs.
std::vector<std::string> differing_keys(const RunConfig& a, const RunConfig& b,
                                        const std::vector<std::string>& sections) {
  std::vector<std::string> keys;
  for (const auto& option : config_schema()) {
    std::string section = option.key.substr(0, option.key.find('.'));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) continue;
    if (option.format(a) != option.format(b)) {
      keys.push_back(option.key + ": " + option.format(b) + " in the checkpoint, " +
                     option.format(a) + " now");
    }
  }
  return keys;
}

// Points `link` at `target`'s contents atomically (a hard link renamed into place).
void link_atomically(const fs::path& target, const fs::path& link) {
  fs::path temporary = link;
  temporary += ".tmp" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_hard_link(target, temporary, ec);
  if (ec) fs::copy_file(target, temporary, fs::copy_options::overwrite_existing);
  fs::rename(temporary, link);
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& c,
                                                        std::vector<at::Tensor> parameters) {
  const std::tuple<double, double> betas{c.betas[0], c.betas[1]};
  if (c.optimizer == OptimizerKind::kAdamW) {
    return std::make_unique<torch::optim::AdamW>(
        parameters,
        torch::optim::AdamWOptions(1e-3).betas(betas).eps(c.eps).weight_decay(c.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(
      parameters, torch::optim::AdamOptions(1e-3).betas(betas).eps(c.eps).weight_decay(c.weight_decay));
}

// Teacher-forced loss of one batch, projecting only the real (non-pad) target positions.
LossSums batch_loss(EncoderDecoder& model, const Batch& batch, double epsilon, bool bf16) {
  at::Tensor logits;
  at::Tensor real = batch.tgt_out.ne(kPadId);
  {
    CpuAutocast autocast(bf16);
    at::Tensor features = model.features(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
    logits = model.output_layer(features.index({real}));
  }
  return label_smoothed_nll(logits, batch.tgt_out.index({real}), epsilon);
}

int64_t schedule_dim(const ModelConfig& model) {
  return resolve_arch(model.arch) == "transformer" ? model.d_model : model.hidden_dim;
}

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_stop_requested; }

Trainer::Trainer(RunConfig config, bool resume, std::ostream& log,
                 std::shared_ptr<Communicator> communicator)
    : config_(std::move(config)),
      log_(communicator == nullptr || communicator->rank() == 0 ? log : quiet_),
      communicator_(std::move(communicator)),
      device_(resolve_device(config_.training.device)),
      metrics_("") {
  // The stored config must not depend on the file name it was loaded from.
  config_.training.output_dir = config_.run_dir();
  if (config_.tokenizer.prefix.empty()) config_.tokenizer.prefix = config_.run_dir() + "/spm";
  if (config_.training.best_metric == SelectionMetric::kBleu && !config_.training.valid_bleu) {
    throw ConfigError({config_.where("training.best_metric") +
                       ": training.best_metric is bleu, which needs training.valid_bleu: true"});
  }
  configure_threads(config_.training.threads);
  const std::string last = checkpoint_dir() + "/checkpoint_last.pt";
  if (!resume && fs::exists(last)) {
    throw std::runtime_error("run folder '" + config_.run_dir() + "' already holds checkpoints; " +
                             "continue it with --resume, or set training.output_dir to a new folder");
  }
  if (resume && !fs::exists(last)) {
    throw std::runtime_error("--resume: no checkpoint at '" + last + "'");
  }
  fs::create_directories(checkpoint_dir());
  metrics_ = MetricsLog(config_.run_dir() + "/metrics.jsonl");

  if (is_main()) {
    tokenizers_ = prepare_tokenizers(config_, log_);
  }
  if (communicator_) communicator_->barrier();
  if (!is_main()) tokenizers_ = load_tokenizers(config_);
  fingerprint_ = tokenizer_fingerprint(config_);

  const DataConfig& data = config_.data;
  ParallelText train_text = read_parallel(config_.corpus_path(data.train, data.src_lang),
                                          config_.corpus_path(data.train, data.tgt_lang),
                                          data.invalid_utf8);
  FilterStats filtered;
  train_data_ = filter_pairs(tokenize(train_text, *tokenizers_.src, *tokenizers_.tgt),
                             FilterOptions{data.max_len, data.max_len_ratio, true}, &filtered);
  if (train_data_.size() == 0) throw DataError("no training pairs left after filtering");
  for (size_t i = 0; i < train_data_.size(); ++i) {
    train_lengths_.push_back(static_cast<int64_t>(
        std::max(train_data_.src[i].size(), train_data_.tgt[i].size()) + 1));
  }
  ParallelText valid_text = read_parallel(config_.corpus_path(data.valid, data.src_lang),
                                          config_.corpus_path(data.valid, data.tgt_lang),
                                          InvalidUtf8Policy::kError);
  valid_sources_ = valid_text.src;
  valid_references_ = valid_text.tgt;
  valid_data_ = tokenize(valid_text, *tokenizers_.src, *tokenizers_.tgt);
  const auto max_tokens = static_cast<size_t>(config_.model.max_positions - 1);
  for (size_t i = 0; i < valid_data_.size(); ++i) {
    if (valid_data_.src[i].size() > max_tokens) valid_data_.src[i].resize(max_tokens);
    if (valid_data_.tgt[i].size() > max_tokens) valid_data_.tgt[i].resize(max_tokens);
  }

  torch::manual_seed(static_cast<uint64_t>(config_.training.seed));
  register_builtin_models();
  model_ = build_model(config_.model, VocabSizes{tokenizers_.src->vocab_size(),
                                                 tokenizers_.tgt->vocab_size(), tokenizers_.joint()});
  model_->to(device_);
  optimizer_ = make_optimizer(config_.training, model_->parameters());
  schedule_ = std::make_unique<LearningRateSchedule>(config_.training, schedule_dim(config_.model));

  if (resume) {
    CheckpointInfo info = read_checkpoint_info(last);
    auto changed = differing_keys(config_, info.config, {"data", "tokenizer", "model"});
    if (!changed.empty()) {
      std::string message = "cannot resume: the config's data, tokenizer or model keys differ "
                            "from the checkpoint's:";
      for (const auto& key : changed) message += "\n  " + key;
      throw std::runtime_error(message);
    }
    if (info.tokenizer_fingerprint != fingerprint_) {
      throw std::runtime_error("cannot resume: the tokenizer model changed since '" + last +
                               "' was written");
    }
    load_checkpoint_state(last, *model_, optimizer_.get(), /*restore_rng=*/true);
    progress_ = info.progress;
    if (is_main()) metrics_.truncate_after(progress_.step);
    log_ << fmt::format("resumed from {} at step {} (epoch {}, batch {})\n", last, progress_.step,
                        progress_.epoch + 1, progress_.epoch_batch);
  } else if (communicator_) {
    communicator_->broadcast_parameters(*model_);
  }
  if (communicator_ && communicator_->rank() > 0) {
    // Same weights everywhere, but each rank its own dropout masks.
    torch::manual_seed(static_cast<uint64_t>(config_.training.seed) * 1000003ULL +
                       static_cast<uint64_t>(communicator_->rank() + progress_.step));
  }
  if (is_main()) save_config(config_, config_.run_dir() + "/config.yaml");

  const int64_t parameters = count_parameters(*model_);
  log_ << fmt::format(
      "model {} ({}): {:.2f}M parameters | {} on {} with {} threads{} | train: {} | valid: {} "
      "pairs\n",
      config_.model.arch, resolve_arch(config_.model.arch), static_cast<double>(parameters) / 1e6,
      config_.training.bf16 ? "bf16 autocast" : "float32", device_.str(), torch::get_num_threads(),
      communicator_ ? fmt::format(" x {} processes", communicator_->world_size()) : "",
      filtered.summary(), valid_data_.size());
}

Trainer::~Trainer() = default;

bool Trainer::is_main() const { return !communicator_ || communicator_->rank() == 0; }

std::string Trainer::checkpoint_dir() const { return config_.run_dir() + "/checkpoints"; }

Trainer::StepStats Trainer::train_step(const std::vector<std::vector<int64_t>>& batches) {
  model_->train();
  optimizer_->zero_grad();
  StepStats stats;
  at::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device_));
  at::Tensor nll_sum = torch::zeros({}, torch::TensorOptions().device(device_));
  for (const auto& indices : batches) {
    if (indices.empty()) continue;  // a padding batch of a distributed shard
    Batch batch = make_batch(train_data_, indices).to(device_);
    if (record_shapes_ != nullptr) {
      record_shapes_->push_back({batch.src_tokens.size(0), batch.src_tokens.size(1),
                                 batch.tgt_in.size(1), batch.src_token_count,
                                 batch.tgt_token_count});
    }
    LossSums sums = batch_loss(*model_, batch, config_.training.label_smoothing, config_.training.bf16);
    if (hooks.on_batch_loss) hooks.on_batch_loss(sums.loss, progress_.step + 1);
    sums.loss.backward();
    loss_sum += sums.loss.detach();
    nll_sum += sums.nll.detach();
    stats.tokens += sums.tokens;
  }
  if (communicator_) {
    stats.tokens = communicator_->all_reduce_gradients(*model_, loss_sum, nll_sum, stats.tokens);
  }
  stats.loss = loss_sum.item<double>();
  stats.nll = nll_sum.item<double>();
  stats.finite = std::isfinite(stats.loss) && stats.tokens > 0;
  if (stats.finite) {
    const double scale = 1.0 / static_cast<double>(stats.tokens);
    for (auto& parameter : model_->parameters()) {
      if (parameter.grad().defined()) parameter.grad().mul_(scale);
    }
    double norm = torch::nn::utils::clip_grad_norm_(
        model_->parameters(), config_.training.clip_norm > 0 ? config_.training.clip_norm
                                                             : std::numeric_limits<double>::infinity());
    stats.finite = std::isfinite(norm);
  }
  if (!stats.finite) {
    optimizer_->zero_grad();
    ++bad_steps_in_row_;
    log_ << fmt::format("warning: non-finite loss or gradient at step {}; update skipped ({} in a "
                        "row)\n",
                        progress_.step + 1, bad_steps_in_row_);
    if (bad_steps_in_row_ >= config_.training.max_bad_steps) {
      throw std::runtime_error(fmt::format(
          "{} consecutive updates had a non-finite loss or gradient (training.max_bad_steps); "
          "stopping at step {}. Lower training.lr, raise training.warmup_steps or set "
          "training.clip_norm; checkpoint_last.pt holds the last good weights",
          bad_steps_in_row_, progress_.step));
    }
    return stats;
  }
  bad_steps_in_row_ = 0;
  current_lr_ = schedule_->at(progress_.step + 1, progress_.lr_factor);
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(current_lr_);
  optimizer_->step();
  ++progress_.step;
  progress_.tokens_seen += stats.tokens;
  if (communicator_ && config_.training.check_replicas &&
      !communicator_->replicas_identical(*model_)) {
    throw std::runtime_error(fmt::format("rank {}: the ranks' weights differ after step {}",
                                         communicator_->rank(), progress_.step));
  }
  return stats;
}

ValidationResult Trainer::validate() {
  auto start = Clock::now();
  torch::NoGradGuard no_grad;
  model_->eval();
  ValidationResult result;
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < valid_data_.size(); ++i) {
    lengths.push_back(static_cast<int64_t>(std::max(valid_data_.src[i].size(), valid_data_.tgt[i].size()) + 1));
  }
  double loss = 0, nll = 0;
  int64_t tokens = 0;
  for (const auto& indices : make_batches(lengths, {config_.training.max_tokens, 0, false})) {
    Batch batch = make_batch(valid_data_, indices).to(device_);
    LossSums sums = batch_loss(*model_, batch, config_.training.label_smoothing, config_.training.bf16);
    loss += sums.loss.item<double>();
    nll += sums.nll.item<double>();
    tokens += sums.tokens;
  }
  result.loss = loss / static_cast<double>(std::max<int64_t>(1, tokens));
  result.nll = nll / static_cast<double>(std::max<int64_t>(1, tokens));
  result.ppl = std::exp(result.nll);
  if (config_.training.valid_bleu) {
    TranslatorOptions options;
    options.search = SearchOptions::from(config_.decoding);
    options.search.beam = config_.training.valid_beam;
    options.search.nbest = 1;
    options.batch_tokens = config_.decoding.batch_tokens;
    Translator translator(*model_, tokenizers_, options, device_);
    std::vector<std::string> hypotheses;
    for (auto& translation : translator.translate(valid_sources_)) {
      hypotheses.push_back(std::move(translation.texts[0]));
    }
    result.bleu = Bleu().corpus_score(hypotheses, {valid_references_}).score;
  }
  result.seconds = seconds_since(start);
  return result;
}

void Trainer::save(const std::string& reason, bool is_best) {
  if (!is_main()) return;
  const fs::path dir = checkpoint_dir();
  const fs::path numbered = dir / fmt::format("checkpoint_{}.pt", progress_.step);
  save_checkpoint(numbered.string(), config_, *model_, optimizer_.get(), progress_, fingerprint_);
  link_atomically(numbered, dir / "checkpoint_last.pt");
  if (is_best) link_atomically(numbered, dir / "checkpoint_best.pt");
  // Keep the newest training.keep_last numbered checkpoints.
  std::vector<std::pair<int64_t, fs::path>> numbered_files;
  const std::regex pattern("checkpoint_([0-9]+)\\.pt");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) numbered_files.emplace_back(std::stoll(match[1]), entry.path());
  }
  std::sort(numbered_files.begin(), numbered_files.end());
  const auto keep = static_cast<size_t>(config_.training.keep_last);
  for (size_t i = 0; i + keep < numbered_files.size(); ++i) fs::remove(numbered_files[i].second);
  log_ << fmt::format("saved {} ({}){}\n", numbered.string(), reason, is_best ? ", new best" : "");
}

UpdateTiming Trainer::time_updates(int64_t warmup, int64_t count, int64_t repeats) {
  const TrainConfig& t = config_.training;
  auto batches = make_batches(train_lengths_, {t.max_tokens, static_cast<uint64_t>(t.seed), true}, 0);
  auto group_at = [&](int64_t update) {
    std::vector<std::vector<int64_t>> group;
    for (int64_t i = 0; i < t.update_freq; ++i) {
      group.push_back(batches[static_cast<size_t>(update * t.update_freq + i) % batches.size()]);
    }
    return group;
  };
  for (int64_t update = 0; update < warmup; ++update) train_step(group_at(update));
  UpdateTiming timing;
  for (int64_t pass = 0; pass < std::max<int64_t>(1, repeats); ++pass) {
    std::vector<BatchShape> shapes;
    record_shapes_ = &shapes;
    auto start = Clock::now();
    for (int64_t update = warmup; update < warmup + count; ++update) train_step(group_at(update));
    const double seconds = seconds_since(start);
    record_shapes_ = nullptr;
    if (pass == 0 || seconds < timing.seconds) {
      timing.seconds = seconds;
      timing.updates = count;
      timing.shapes = std::move(shapes);
    }
  }
  for (const auto& shape : timing.shapes) {
    timing.src_tokens += shape.src_tokens;
    timing.tgt_tokens += shape.tgt_tokens;
  }
  return timing;
}

TrainResult Trainer::train() {
  const TrainConfig& t = config_.training;
  const auto start = Clock::now();
  const double wall_offset = progress_.wall_seconds;
  const bool terminal = ::isatty(STDERR_FILENO) && &log_ == &std::cerr;
  TrainResult result;
  int64_t last_validated = progress_.step;
  StepStats window;
  double window_seconds = 0;
  int64_t window_steps = 0;
  double window_all_reduce_start = communicator_ ? communicator_->all_reduce_seconds() : 0.0;
  auto last_bar = Clock::now();

  auto elapsed_wall = [&] { return wall_offset + seconds_since(start); };
  auto progress_fraction = [&](double batches_in_epoch) {
    double fraction = 0;
    if (t.max_steps > 0) fraction = std::max(fraction, static_cast<double>(progress_.step) / static_cast<double>(t.max_steps));
    if (t.max_time > 0) fraction = std::max(fraction, progress_.wall_seconds / t.max_time);
    if (t.max_epochs > 0 && batches_in_epoch > 0) {
      fraction = std::max(fraction, (static_cast<double>(progress_.epoch) +
                                     static_cast<double>(progress_.epoch_batch) / batches_in_epoch) /
                                        static_cast<double>(t.max_epochs));
    }
    return std::min(fraction, 1.0);
  };
  auto validate_and_save = [&](const std::string& reason) {
    ValidationResult v = validate();
    result.last_validation = v;
    const bool by_bleu = t.best_metric == SelectionMetric::kBleu;
    const double score = by_bleu ? v.bleu : v.loss;
    const bool improved = std::isnan(progress_.best_score) ||
                          (by_bleu ? score > progress_.best_score : score < progress_.best_score);
    if (improved) {
      progress_.best_score = score;
      progress_.best_step = progress_.step;
      progress_.validations_without_improvement = 0;
    } else {
      ++progress_.validations_without_improvement;
      if (t.schedule == LrSchedule::kPlateau && t.plateau_patience > 0 &&
          progress_.validations_without_improvement % t.plateau_patience == 0) {
        progress_.lr_factor *= t.plateau_factor;
      }
    }
    progress_.wall_seconds = elapsed_wall();
    if (terminal) log_ << "\r\033[K";
    // At an epoch's end the epoch counter has already moved on.
    const int64_t epoch = progress_.epoch_batch == 0 ? progress_.epoch : progress_.epoch + 1;
    log_ << fmt::format("valid | epoch {} | step {} | loss {:.3f} | nll {:.3f} | ppl {:.2f}{} | "
                        "best {:.2f} at step {} | {:.1f}s\n",
                        epoch, progress_.step, v.loss, v.nll, v.ppl,
                        v.bleu >= 0 ? fmt::format(" | BLEU {:.2f}", v.bleu) : "",
                        progress_.best_score, progress_.best_step, v.seconds);
    if (is_main()) {
      nlohmann::json record{{"type", "valid"}, {"step", progress_.step}, {"epoch", progress_.epoch},
                            {"loss", v.loss}, {"nll", v.nll}, {"ppl", v.ppl},
                            {"wall_seconds", progress_.wall_seconds},
                            {"train_seconds", progress_.train_seconds}};
      if (v.bleu >= 0) record["bleu"] = v.bleu;
      metrics_.append(record);
    }
    save(reason, improved);
    if (is_main()) render_learning_curves(metrics_.path(), config_.run_dir(), config_.model.arch);
    last_validated = progress_.step;
  };

  bool stop = false;
  while (!stop) {
    BatchingOptions batching{t.max_tokens, static_cast<uint64_t>(t.seed), true};
    auto batches = make_batches(train_lengths_, batching, static_cast<uint64_t>(progress_.epoch));
    if (communicator_) batches = communicator_->shard(batches);
    const auto n = static_cast<int64_t>(batches.size());
    while (progress_.epoch_batch < n && !stop) {
      const int64_t begin = progress_.epoch_batch;
      const int64_t end = std::min(n, begin + t.update_freq);
      std::vector<std::vector<int64_t>> group(batches.begin() + begin, batches.begin() + end);
      auto step_start = Clock::now();
      StepStats stats = train_step(group);
      const double step_seconds = seconds_since(step_start);
      progress_.epoch_batch = end;
      progress_.train_seconds += step_seconds;
      progress_.wall_seconds = elapsed_wall();
      if (stats.finite) {
        window.loss += stats.loss;
        window.nll += stats.nll;
        window.tokens += stats.tokens;
        window_seconds += step_seconds;
        ++window_steps;
        if (progress_.step % t.log_every == 0) {
          const double per_token = 1.0 / static_cast<double>(std::max<int64_t>(1, window.tokens));
          const double tokens_per_second = static_cast<double>(window.tokens) / std::max(1e-9, window_seconds);
          const double fraction = progress_fraction(static_cast<double>(n));
          std::string eta = fraction > 0 ? format_duration(progress_.wall_seconds * (1 - fraction) / fraction) : "?";
          if (terminal) log_ << "\r\033[K";
          // Distributed: the all-reduce's share of each update (waiting for the slowest rank
          // included), the figure that decides how well more processes scale.
          double all_reduce_ms = -1;
          if (communicator_) {
            const double now = communicator_->all_reduce_seconds();
            all_reduce_ms = 1000.0 * (now - window_all_reduce_start) /
                            static_cast<double>(std::max<int64_t>(1, window_steps));
            window_all_reduce_start = now;
          }
          log_ << fmt::format("train | epoch {} | step {} | loss {:.3f} | ppl {:.2f} | lr {:.3e} | "
                              "{:.0f} tok/s{} | {} | ETA {}\n",
                              progress_.epoch + 1, progress_.step, window.loss * per_token,
                              std::exp(window.nll * per_token), current_lr_, tokens_per_second,
                              all_reduce_ms >= 0 ? fmt::format(" | all-reduce {:.1f} ms/update", all_reduce_ms) : "",
                              format_duration(progress_.wall_seconds), eta);
          if (is_main()) {
            nlohmann::json record{{"type", "train"}, {"step", progress_.step}, {"epoch", progress_.epoch},
                                  {"loss", window.loss * per_token}, {"nll", window.nll * per_token},
                                  {"lr", current_lr_}, {"tokens_per_second", tokens_per_second},
                                  {"wall_seconds", progress_.wall_seconds},
                                  {"train_seconds", progress_.train_seconds}};
            if (all_reduce_ms >= 0) record["all_reduce_ms_per_update"] = all_reduce_ms;
            metrics_.append(record);
          }
          window = StepStats{};
          window_seconds = 0;
          window_steps = 0;
        } else if (terminal && seconds_since(last_bar) > 0.25) {
          const double fraction = progress_fraction(static_cast<double>(n));
          const int filled = static_cast<int>(fraction * 20);
          log_ << fmt::format("\r\033[K[{}{}] {:3.0f}% epoch {} step {} loss {:.3f} lr {:.2e}",
                              std::string(static_cast<size_t>(filled), '#'),
                              std::string(static_cast<size_t>(20 - filled), '.'), fraction * 100,
                              progress_.epoch + 1, progress_.step,
                              stats.loss / static_cast<double>(std::max<int64_t>(1, stats.tokens)),
                              current_lr_)
               << std::flush;
          last_bar = Clock::now();
        }
        if (t.valid_every > 0 && progress_.step % t.valid_every == 0 && progress_.step != last_validated) {
          validate_and_save("validation");
          if (t.patience > 0 && progress_.validations_without_improvement >= t.patience) {
            result.stop_reason = fmt::format("early stopping: {} validations without improvement",
                                             t.patience);
            stop = true;
          }
        }
      }
      const bool signalled = communicator_ ? communicator_->any(g_stop_requested) : g_stop_requested.load();
      if (signalled) {
        result.interrupted = true;
        result.stop_reason = "interrupted by signal";
        stop = true;
      } else if (t.max_steps > 0 && progress_.step >= t.max_steps) {
        result.stop_reason = fmt::format("reached training.max_steps = {}", t.max_steps);
        stop = true;
      } else if (t.max_time > 0 && (communicator_ ? communicator_->any(progress_.wall_seconds >= t.max_time)
                                                  : progress_.wall_seconds >= t.max_time)) {
        result.stop_reason = fmt::format("reached training.max_time = {}", format_duration(t.max_time));
        stop = true;
      }
    }
    if (progress_.epoch_batch >= n) {
      ++progress_.epoch;
      progress_.epoch_batch = 0;
      if (!stop && progress_.step != last_validated) {
        validate_and_save("end of epoch");
        if (t.patience > 0 && progress_.validations_without_improvement >= t.patience) {
          result.stop_reason = fmt::format("early stopping: {} validations without improvement", t.patience);
          stop = true;
        }
      }
      if (t.max_epochs > 0 && progress_.epoch >= t.max_epochs && !stop) {
        result.stop_reason = fmt::format("reached training.max_epochs = {}", t.max_epochs);
        stop = true;
      }
    }
  }
  if (terminal) log_ << "\r\033[K";
  progress_.wall_seconds = elapsed_wall();
  if (result.interrupted) {
    save("interrupted", false);
  } else if (progress_.step != last_validated) {
    validate_and_save("end of training");
  }
  result.progress = progress_;
  return result;
}

}  // namespace nmtzoo
