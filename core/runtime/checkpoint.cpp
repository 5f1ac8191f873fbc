#include "core/runtime/checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "core/config/loader.h"
#include "core/io/atomic_file.h"
#include "models/encoder_decoder.h"

namespace nmtzoo {
namespace {

constexpr int64_t kFormatVersion = 1;

void write_progress(torch::serialize::OutputArchive& archive, const TrainingProgress& p) {
  archive.write("progress.step", c10::IValue(p.step));
  archive.write("progress.epoch", c10::IValue(p.epoch));
  archive.write("progress.epoch_batch", c10::IValue(p.epoch_batch));
  archive.write("progress.train_seconds", c10::IValue(p.train_seconds));
  archive.write("progress.wall_seconds", c10::IValue(p.wall_seconds));
  archive.write("progress.best_score", c10::IValue(p.best_score));
  archive.write("progress.best_step", c10::IValue(p.best_step));
  archive.write("progress.validations_without_improvement",
                c10::IValue(p.validations_without_improvement));
  archive.write("progress.lr_factor", c10::IValue(p.lr_factor));
  archive.write("progress.tokens_seen", c10::IValue(p.tokens_seen));
}

c10::IValue read_value(torch::serialize::InputArchive& archive, const std::string& key,
                       const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(key, value)) {
    throw std::runtime_error("checkpoint '" + path + "' lacks '" + key + "'");
  }
  return value;
}

TrainingProgress read_progress(torch::serialize::InputArchive& archive, const std::string& path) {
  TrainingProgress p;
  auto integer = [&](const char* key) { return read_value(archive, key, path).toInt(); };
  auto real = [&](const char* key) { return read_value(archive, key, path).toDouble(); };
  p.step = integer("progress.step");
  p.epoch = integer("progress.epoch");
  p.epoch_batch = integer("progress.epoch_batch");
  p.train_seconds = real("progress.train_seconds");
  p.wall_seconds = real("progress.wall_seconds");
  p.best_score = real("progress.best_score");
  p.best_step = integer("progress.best_step");
  p.validations_without_improvement = integer("progress.validations_without_improvement");
  p.lr_factor = real("progress.lr_factor");
  p.tokens_seen = integer("progress.tokens_seen");
  return p;
}

void open_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw std::runtime_error("checkpoint '" + path + "' does not exist");
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error("'" + path + "' is not a readable nmtzoo checkpoint (truncated or "
                             "corrupt?): " + e.what_without_backtrace());
  }
  c10::IValue version;
  if (!archive.try_read("nmtzoo_checkpoint_version", version) || version.toInt() != kFormatVersion) {
    throw std::runtime_error("'" + path + "' is not an nmtzoo checkpoint of format version " +
                             std::to_string(kFormatVersion));
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const RunConfig& config, EncoderDecoder& model,
                     torch::optim::Optimizer* optimizer, const TrainingProgress& progress,
                     const std::string& fingerprint) {
  for (const auto& item : model.named_parameters()) {
    if (!torch::isfinite(item.value()).all().item<bool>()) {
      throw std::runtime_error("refusing to save non-finite weights (" + item.key() + ") to '" +
                               path + "'");
    }
  }
  torch::serialize::OutputArchive archive;
  archive.write("nmtzoo_checkpoint_version", c10::IValue(kFormatVersion));
  archive.write("config", c10::IValue(to_yaml(config)));
  archive.write("tokenizer_fingerprint", c10::IValue(fingerprint));
  write_progress(archive, progress);
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state(), /*is_buffer=*/true);
  // Through AtomicFile::write, which cannot throw: the archive writer finalises in its destructor,
  // where a failed write used to abort the process.
  AtomicFile file(path);
  archive.save_to([&](const void* data, size_t size) {
    file.write(data, size);
    return size;
  });
  file.commit();
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  torch::serialize::InputArchive archive;
  open_archive(archive, path);
  CheckpointInfo info;
  std::string yaml = read_value(archive, "config", path).toStringRef();
  try {
    info.config = parse_config(yaml, path + " (stored config)");
  } catch (const ConfigError& e) {
    throw std::runtime_error("the config stored in '" + path +
                             "' is not valid for this nmtzoo version:\n" + e.what());
  }
  info.tokenizer_fingerprint = read_value(archive, "tokenizer_fingerprint", path).toStringRef();
  info.progress = read_progress(archive, path);
  torch::serialize::InputArchive optimizer_archive;
  info.has_optimizer = archive.try_read("optimizer", optimizer_archive);
  return info;
}

void load_checkpoint_state(const std::string& path, EncoderDecoder& model,
                           torch::optim::Optimizer* optimizer, bool restore_rng) {
  torch::serialize::InputArchive archive;
  open_archive(archive, path);
  torch::serialize::InputArchive model_archive;
  if (!archive.try_read("model", model_archive)) {
    throw std::runtime_error("checkpoint '" + path + "' holds no model");
  }
  try {
    model.load(model_archive);
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optimizer_archive;
      if (!archive.try_read("optimizer", optimizer_archive)) {
        throw std::runtime_error("checkpoint '" + path + "' holds no optimizer state to resume");
      }
      optimizer->load(optimizer_archive);
    }
  } catch (const c10::Error& e) {
    throw std::runtime_error("checkpoint '" + path + "' does not fit the model built from its "
                             "config: " + e.what_without_backtrace());
  }
  if (restore_rng) {
    at::Tensor state;
    if (archive.try_read("rng_cpu", state, /*is_buffer=*/true)) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(state);
    }
  }
}

std::string tokenizer_fingerprint(const RunConfig& config) {
  uint64_t hash = 1469598103934665603ULL;
  auto mix = [&](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read tokenizer model '" + path + "'");
    for (std::istreambuf_iterator<char> it(in), end; it != end; ++it) {
      hash = (hash ^ static_cast<unsigned char>(*it)) * 1099511628211ULL;
    }
  };
  mix(config.tokenizer_model(config.data.src_lang));
  if (!config.tokenizer.joint) mix(config.tokenizer_model(config.data.tgt_lang));
  return fmt::format("{:016x}", hash);
}

}  // namespace nmtzoo
