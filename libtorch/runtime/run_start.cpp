// SPDX-License-Identifier: MIT
#include "libtorch/runtime/run_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "torch_free/archs/registry.h"
#include "torch_free/common/arch_options.h"
#include "torch_free/config/schema.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/directory_lock.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

// A path as every process names it (links and ".." resolved), to order and compare locks.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute : canonical).string();
}

// The folders whose locks make a preparation one critical section, each once, in the order of
// their resolved paths, so that no two processes wait for each other: the dataset's and, when a
// tokenizer is to be written, the tokenizer's. That lock folder is its own, never the folder of
// the models: that is often a run folder, which a trainer holds for its whole run.
std::vector<std::string> preparation_lock_dirs(const RunConfig& config, const std::string& held,
                                               bool tokenizer) {
  const fs::path prefix = config.tokenizer.prefix.empty() ? fs::path(config.run_dir()) / "spm"
                                                          : fs::path(config.tokenizer.prefix);
  const fs::path tokenizer_lock =
      prefix.parent_path() / ("." + prefix.filename().string() + ".lock");
  std::map<std::string, std::string> dirs;  // resolved -> as configured, for messages
  dirs.emplace(resolved(config.dataset_dir()), config.dataset_dir());
  if (tokenizer) dirs.emplace(resolved(tokenizer_lock.string()), tokenizer_lock.string());
  if (!held.empty()) dirs.erase(resolved(held));
  std::vector<std::string> ordered;
  for (const auto& entry : dirs) ordered.push_back(entry.second);
  return ordered;
}

// Locks `dir`, waiting while another process (or another thread of this one) holds it.
std::unique_ptr<DirectoryLock> lock_waiting(const std::string& dir, const std::string& what,
                                            std::ostream& log) {
  bool told = false;
  while (true) {
    try {
      return std::make_unique<DirectoryLock>(dir, what);
    } catch (const IoError& e) {
      // DirectoryLock's documented message for a folder held by another; any other error stands.
      if (std::string_view(e.what()).find(" is in use by process ") == std::string_view::npos)
        throw;
      if (!told) log << fmt::format("waiting for another preparation to end: {}\n", e.what());
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<std::string> tokenizer_models(const RunConfig& config) {
  if (config.tokenizer.joint) return {config.tokenizer_model(config.data.src_lang)};
  return {config.tokenizer_model(config.data.src_lang),
          config.tokenizer_model(config.data.tgt_lang)};
}

// A run without tokenizer files takes those embedded in the checkpoint it starts from rather than
// training new ones, which would not match the checkpoint's vocabulary.
void adopt_checkpoint_tokenizer(const RunConfig& config, const CheckpointInfo& info,
                                const std::string& path, std::ostream& log) {
  const std::string src_model = config.tokenizer_model(config.data.src_lang);
  const std::string tgt_model = config.tokenizer_model(config.data.tgt_lang);
  if (fs::exists(src_model) && fs::exists(tgt_model)) return;
  if (info.src_tokenizer_model.empty() || info.config.tokenizer.joint != config.tokenizer.joint)
    return;
  fs::create_directories(fs::absolute(src_model).parent_path());
  write_file_atomically(src_model, [&](std::ostream& out) { out << info.src_tokenizer_model; });
  if (!config.tokenizer.joint) {
    write_file_atomically(tgt_model, [&](std::ostream& out) { out << info.tgt_tokenizer_model; });
  }
  log << "adopted the tokenizer embedded in " << path << " as " << src_model
      << (config.tokenizer.joint ? "" : " and " + tgt_model) << "\n";
}

// The checks of check_start that need the tokenizers.
void check_tokenizers(const RunConfig& config, const StartCheckpoints& start,
                      const std::string& fingerprint) {
  if (start.resumed && start.resumed->tokenizer_fingerprint != fingerprint) {
    throw std::runtime_error("cannot resume: the tokenizer model changed since '" +
                             start.resume_path + "' was written");
  }
  if (start.init_from && start.init_from->tokenizer_fingerprint != fingerprint) {
    throw std::runtime_error(
        "training.init_from: '" + config.training.init_from + "' was trained with another " +
        "tokenizer than this run's '" + config.tokenizer_model(config.data.src_lang) + "'; " +
        "fine-tuning keeps the vocabulary: leave tokenizer.prefix unset (the run then adopts the " +
        "checkpoint's tokenizer) or point it at the one the checkpoint was trained with");
  }
}

}  // namespace

void resolve_run_paths(RunConfig& config) {
  config.training.output_dir = config.run_dir();
  if (config.tokenizer.prefix.empty()) config.tokenizer.prefix = config.run_dir() + "/spm";
}

std::vector<std::string> differing_keys(const RunConfig& now, const RunConfig& checkpoint,
                                        const std::vector<std::string>& sections) {
  std::vector<std::string> keys;
  // Where the dataset lives, and how a tokenizer would be trained (the fingerprint compares the
  // trained one), do not change what is resumed.
  const std::set<std::string> irrelevant{"data.bin_dir", "tokenizer.input_sentence_size"};
  // Nor do other architectures' model keys, which checkpoints do not store.
  const std::set<std::string> other_archs_keys = keys_of_other_archs(resolve_arch(now.model.arch));
  for (const auto& option : config_schema()) {
    if (irrelevant.count(option.key) > 0) continue;
    if (other_archs_keys.count(option.key) > 0) continue;
    const std::string section = option.key.substr(0, option.key.find('.'));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) continue;
    if (option.format(now) != option.format(checkpoint)) {
      keys.push_back(option.key + ": " + option.format(checkpoint) + " in the checkpoint, " +
                     option.format(now) + " now");
    }
  }
  return keys;
}

StartCheckpoints check_start(const RunConfig& config, const std::string& resume_path) {
  StartCheckpoints start;
  if (!resume_path.empty()) {
    // Resuming needs the same data, tokenizer and model as the checkpoint was trained with.
    start.resume_path = resume_path;
    start.resumed = read_checkpoint_info(resume_path);
    const auto changed =
        differing_keys(config, start.resumed->config, {"data", "tokenizer", "model"});
    if (!changed.empty()) {
      std::string message =
          "cannot resume: the config's data, tokenizer or model keys differ "
          "from the checkpoint's:";
      for (const auto& key : changed) message += "\n  " + key;
      throw std::runtime_error(message);
    }
    return start;
  }
  // Fine-tuning needs the model the checkpoint holds (dropout may differ) and its vocabulary
  // (checked by prepare_run, once the tokenizers are there).
  const std::string& path = config.training.init_from;
  if (path.empty()) return start;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw std::runtime_error("training.init_from: no checkpoint at '" + path + "'");
  }
  try {
    start.init_from = read_checkpoint_info(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("training.init_from: ") + e.what());
  }
  std::string message;
  for (const auto& key : differing_keys(config, start.init_from->config, {"model"})) {
    if (key.find("dropout: ") == std::string::npos) message += "\n  " + key;
  }
  if (!message.empty()) {
    throw std::runtime_error("training.init_from: '" + path +
                             "' holds another model than this "
                             "config describes:" +
                             message);
  }
  // A joint vocabulary and two never have one fingerprint: no tokenizer could be adopted or
  // trained.
  if (start.init_from->config.tokenizer.joint != config.tokenizer.joint) {
    throw std::runtime_error(fmt::format(
        "training.init_from: '{}' was trained with tokenizer.joint: {}, this config has {}; "
        "fine-tuning keeps the vocabulary",
        path, start.init_from->config.tokenizer.joint, config.tokenizer.joint));
  }
  return start;
}

PreparedRun prepare_run(const RunConfig& config, const StartCheckpoints& start, std::ostream& log,
                        const RunPreparation& options) {
  const std::vector<std::string> models = tokenizer_models(config);
  const bool tokenizers_exist =
      std::all_of(models.begin(), models.end(), [](const std::string& m) { return fs::exists(m); });
  if (tokenizers_exist && !options.force) {
    // The usual start of a prepared run writes nothing, so it takes no lock: a tokenizer or a
    // dataset in a read-only place serves. Tokenizer files are never replaced once there.
    PreparedRun ready;
    ready.tokenizers = load_tokenizers(config);
    ready.tokenizer_fingerprint = tokenizer_fingerprint(ready.tokenizers);
    check_tokenizers(config, start, ready.tokenizer_fingerprint);
    if (dataset_staleness(config, ready.tokenizer_fingerprint).empty()) return ready;
  }
  std::vector<std::unique_ptr<DirectoryLock>> locks;
  for (const std::string& dir :
       preparation_lock_dirs(config, options.held_dir, !tokenizers_exist)) {
    locks.push_back(lock_waiting(dir, options.what, log));
  }
  if (start.resumed) {
    adopt_checkpoint_tokenizer(config, *start.resumed, start.resume_path, log);
    for (const std::string& model : models) {
      if (!fs::exists(model)) {
        throw std::runtime_error("cannot resume: the tokenizer model '" + model + "', which '" +
                                 start.resume_path + "' was trained with, is missing");
      }
    }
  } else if (start.init_from) {
    adopt_checkpoint_tokenizer(config, *start.init_from, config.training.init_from, log);
  }
  PreparedRun prepared;
  prepared.tokenizers = prepare_tokenizers(config, log);
  prepared.tokenizer_fingerprint = tokenizer_fingerprint(prepared.tokenizers);
  check_tokenizers(config, start, prepared.tokenizer_fingerprint);
  prepared.stale =
      options.force ? "--force" : dataset_staleness(config, prepared.tokenizer_fingerprint);
  if (!prepared.stale.empty()) {
    log << fmt::format("preparing the binary dataset in {} ({})\n", config.dataset_dir(),
                       prepared.stale);
    prepared.made = prepare_dataset(config, prepared.tokenizers, log, options.dataset);
  }
  return prepared;
}

}  // namespace nmtzoo
