// SPDX-License-Identifier: MIT
#include "libtorch/runtime/checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <fmt/format.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "libtorch/models/encoder_decoder.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {
namespace {

// Version 2 embeds the tokenizer models; version 1 checkpoints name them by path.
constexpr int64_t kFormatVersion = 2;
constexpr int64_t kOldestReadableVersion = 1;

at::Tensor bytes_tensor(const std::string& bytes) {
  return torch::from_blob(const_cast<char*>(bytes.data()), {static_cast<int64_t>(bytes.size())},
                          torch::kUInt8)
      .clone();
}

std::string read_bytes(torch::serialize::InputArchive& archive, const std::string& key) {
  at::Tensor tensor;
  if (!archive.try_read(key, tensor, /*is_buffer=*/true)) return {};
  tensor = tensor.contiguous();
  return std::string(static_cast<const char*>(tensor.data_ptr()),
                     static_cast<size_t>(tensor.numel()));
}

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
  archive.write("progress.schedule_offset", c10::IValue(p.schedule_offset));
  archive.write("progress.budget_seconds", c10::IValue(p.budget_seconds));
  c10::List<double> sessions;  // flat: started_at, measured_gflops, scale per session
  for (const BudgetSession& s : p.budget_sessions) {
    sessions.push_back(s.started_at);
    sessions.push_back(s.measured_gflops);
    sessions.push_back(s.scale);
  }
  archive.write("progress.budget_sessions", c10::IValue(sessions));
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
  c10::IValue offset;  // absent from checkpoints written before fine-tuning existed
  if (archive.try_read("progress.schedule_offset", offset)) p.schedule_offset = offset.toInt();
  c10::IValue budget;  // absent before time budgets could be scaled: the budget was wall-clock
  p.budget_seconds =
      archive.try_read("progress.budget_seconds", budget) ? budget.toDouble() : p.wall_seconds;
  c10::IValue sessions;
  if (archive.try_read("progress.budget_sessions", sessions)) {
    const auto flat = sessions.toDoubleList().vec();
    if (flat.size() % 3 != 0) {
      throw std::runtime_error("checkpoint '" + path +
                               "': 'progress.budget_sessions' is not a list of triples");
    }
    for (size_t i = 0; i < flat.size(); i += 3) {
      p.budget_sessions.push_back({flat[i], flat[i + 1], flat[i + 2]});
    }
  }
  return p;
}

// LibTorch writes a checkpoint as a zip whose every record carries the CRC-32 of its bytes, but
// its reader never checks them (it builds miniz without CRC checks), so a flipped bit in a
// tensor would load silently. libzip checks each record's CRC when the record has been read to
// its end. Saving costs nothing extra: the writer computes the CRCs anyway.
void verify_checksums(const std::string& path) {
  int error_code = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &error_code);
  if (zip == nullptr) {
    zip_error_t error;
    zip_error_init_with_code(&error, error_code);
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw CheckpointError(
        CheckpointError::Kind::kUnreadable,
        "'" + path + "' is not a readable nmtzoo checkpoint (truncated or corrupt?): " + message);
  }
  std::unique_ptr<zip_t, void (*)(zip_t*)> closer(zip, zip_discard);
  std::vector<char> buffer(1 << 20);
  const zip_int64_t records = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < records; ++i) {
    zip_file_t* record = zip_fopen_index(zip, static_cast<zip_uint64_t>(i), 0);
    zip_int64_t n = record == nullptr ? -1 : 0;
    while (record != nullptr && (n = zip_fread(record, buffer.data(), buffer.size())) > 0) {
    }
    if (n < 0) {
      const zip_error_t* error =
          record != nullptr ? zip_file_get_error(record) : zip_get_error(zip);
      const bool crc = zip_error_code_zip(error) == ZIP_ER_CRC;
      std::string message = zip_error_strerror(const_cast<zip_error_t*>(error));
      const char* name = zip_get_name(zip, static_cast<zip_uint64_t>(i), 0);
      if (record != nullptr) zip_fclose(record);
      throw CheckpointError(CheckpointError::Kind::kUnreadable,
                            "checkpoint '" + path + "' is corrupt: " +
                                (crc ? std::string("checksum mismatch") : message) +
                                " in record '" + (name != nullptr ? name : "?") + "'");
    }
    zip_fclose(record);
  }
}

void open_archive(torch::serialize::InputArchive& archive, const std::string& path) {
  if (path.find('\0') !=
      std::string::npos) {  // the C API would read the path up to it: another file
    throw CheckpointError(
        CheckpointError::Kind::kUnreadable,
        "checkpoint path '" + path.substr(0, path.find('\0')) + "\\0...' holds a NUL byte");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw CheckpointError(CheckpointError::Kind::kDirectory,
                          "checkpoint '" + path + "' is a directory, not a checkpoint file");
  }
  std::ifstream probe(path, std::ios::binary);
  if (!probe)
    throw CheckpointError(CheckpointError::Kind::kMissing,
                          "checkpoint '" + path + "' does not exist");
  auto unreadable = [&](const std::string& why) {
    return CheckpointError(
        CheckpointError::Kind::kUnreadable,
        "'" + path + "' is not a readable nmtzoo checkpoint (truncated or corrupt?): " + why);
  };
  c10::IValue version;
  bool has_version = false;
  // A damaged record can fail in LibTorch's zip reader (c10::Error) or, inside the archive's
  // TorchScript code, in its parser (another std::exception): either way, name the file.
  try {
    archive.load_from(path);
    has_version = archive.try_read("nmtzoo_checkpoint_version", version);
  } catch (const c10::Error& e) {
    throw unreadable(e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw unreadable(e.what());
  }
  if (!has_version || !version.isInt() || version.toInt() < kOldestReadableVersion ||
      version.toInt() > kFormatVersion) {
    throw CheckpointError(CheckpointError::Kind::kUnreadable,
                          fmt::format("'{}' is not an nmtzoo checkpoint of format version {} to {}",
                                      path, kOldestReadableVersion, kFormatVersion));
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const RunConfig& config, EncoderDecoder& model,
                     torch::optim::Optimizer* optimizer, const TrainingProgress& progress,
                     const Tokenizers& tokenizers,
                     const std::vector<at::Tensor>* training_weights) {
  for (const auto& item : model.named_parameters()) {
    if (!torch::isfinite(item.value()).all().item<bool>()) {
      throw std::runtime_error("refusing to save non-finite weights (" + item.key() + ") to '" +
                               path + "'");
    }
  }
  torch::serialize::OutputArchive archive;
  archive.write("nmtzoo_checkpoint_version", c10::IValue(kFormatVersion));
  archive.write("config", c10::IValue(to_yaml(config, resolve_arch(config.model.arch))));
  archive.write("tokenizer_fingerprint", c10::IValue(tokenizer_fingerprint(tokenizers)));
  archive.write("tokenizer.src_model", bytes_tensor(tokenizers.src->serialized()),
                /*is_buffer=*/true);
  if (!tokenizers.joint()) {
    archive.write("tokenizer.tgt_model", bytes_tensor(tokenizers.tgt->serialized()),
                  /*is_buffer=*/true);
  }
  write_progress(archive, progress);
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  if (training_weights != nullptr) {
    const auto names = model.named_parameters().keys();
    TORCH_CHECK(names.size() == training_weights->size(),
                "training weights: ", training_weights->size(), " tensors for ", names.size(),
                " parameters");
    torch::serialize::OutputArchive weights_archive;
    for (size_t i = 0; i < names.size(); ++i)
      weights_archive.write(names[i], (*training_weights)[i]);
    archive.write("training_weights", weights_archive);
  }
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state(), /*is_buffer=*/true);
  // Through AtomicFile::write, which cannot throw: the archive writer finalises in its destructor,
  // where an exception would abort the process.
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
  verify_checksums(path);
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
  info.src_tokenizer_model = read_bytes(archive, "tokenizer.src_model");
  info.tgt_tokenizer_model = read_bytes(archive, "tokenizer.tgt_model");
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
    throw std::runtime_error("checkpoint '" + path +
                             "' does not fit the model built from its "
                             "config: " +
                             e.what_without_backtrace());
  }
  if (restore_rng) {
    at::Tensor state;
    if (archive.try_read("rng_cpu", state, /*is_buffer=*/true)) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(state);
    }
  }
}

bool load_training_weights(const std::string& path, EncoderDecoder& model) {
  torch::serialize::InputArchive archive;
  open_archive(archive, path);
  torch::serialize::InputArchive weights_archive;
  if (!archive.try_read("training_weights", weights_archive)) return false;
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    at::Tensor value;
    if (!weights_archive.try_read(item.key(), value)) {
      throw std::runtime_error("checkpoint '" + path + "' lacks the training weights of '" +
                               item.key() + "'");
    }
    if (!value.sizes().equals(item.value().sizes())) {
      throw std::runtime_error("checkpoint '" + path + "': training weights of '" + item.key() +
                               "' do not fit the model built from its config");
    }
    item.value().copy_(value);
  }
  return true;
}

}  // namespace nmtzoo
