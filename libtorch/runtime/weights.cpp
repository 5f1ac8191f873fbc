// SPDX-License-Identifier: MIT
#include "libtorch/runtime/weights.h"

#include <fmt/format.h>
#include <torch/serialize.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <sstream>

#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/config.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {

namespace {

std::vector<std::pair<std::string, at::Tensor>> named_tensors(const torch::nn::Module& model) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model.named_parameters()) tensors.emplace_back(item.key(), item.value());
  for (const auto& item : model.named_buffers()) tensors.emplace_back(item.key(), item.value());
  return tensors;
}

std::string shape_text(const at::Tensor& tensor) {
  std::ostringstream text;
  text << tensor.sizes();
  return text.str();
}

}  // namespace

void export_weights(const torch::nn::Module& model, const std::string& path) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : named_tensors(model)) {
    dict.insert(name, tensor.detach().to(torch::kCPU).contiguous());
  }
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

namespace {

// Why `file` cannot be copied into `target` without changing what it says, or "": copy_ would
// drop a complex tensor's imaginary part, cast floats into integers, and take NaN or infinity.
std::string value_problem(const at::Tensor& file, const at::Tensor& target) {
  const bool fits = !file.is_complex() && file.scalar_type() != at::kBool &&
                    file.is_floating_point() == target.is_floating_point();
  if (!fits) {
    return fmt::format("is {} in the file but {} in the model", c10::toString(file.scalar_type()),
                       c10::toString(target.scalar_type()));
  }
  if (file.is_floating_point()) {
    const int64_t non_finite = file.isfinite().logical_not().sum().item<int64_t>();
    if (non_finite > 0) return fmt::format("holds {} NaN or infinite values", non_finite);
  }
  return "";
}

}  // namespace

void import_weights(torch::nn::Module& model, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open weights file '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    throw std::runtime_error("'" + path + "' is not a weights file readable by torch.load: " +
                             e.what_without_backtrace());
  }
  if (!value.isGenericDict()) {
    throw std::runtime_error("'" + path + "' does not hold a dict of name -> tensor");
  }
  std::map<std::string, at::Tensor> loaded;
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) {
      throw std::runtime_error("'" + path + "' holds an entry that is not name -> tensor");
    }
    loaded.emplace(entry.key().toStringRef(), entry.value().toTensor());
  }
  std::vector<std::string> problems;
  auto targets = named_tensors(model);
  for (const auto& [name, tensor] : targets) {
    auto it = loaded.find(name);
    if (it == loaded.end()) {
      problems.push_back("missing " + name + " " + shape_text(tensor));
    } else if (it->second.sizes() != tensor.sizes()) {
      problems.push_back(name + " has shape " + shape_text(it->second) + " in the file but " +
                         shape_text(tensor) + " in the model");
    } else if (auto problem = value_problem(it->second, tensor); !problem.empty()) {
      problems.push_back(name + " " + problem);
    }
  }
  std::set<std::string> expected;
  for (const auto& [name, unused] : targets) expected.insert(name);
  for (const auto& [name, tensor] : loaded) {
    if (expected.count(name) == 0)
      problems.push_back("unexpected " + name + " " + shape_text(tensor));
  }
  if (!problems.empty()) {
    std::string message = "weights in '" + path + "' do not fit the model:";
    for (const auto& problem : problems) message += "\n  " + problem;
    throw std::runtime_error(message);
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : targets) tensor.copy_(loaded.at(name));
}

void export_model_spec(const RunConfig& unresolved, int64_t target_vocab, const std::string& path) {
  RunConfig config = unresolved;
  apply_model_preset(config);  // the preset's sizes, where the config left them unset
  nlohmann::json model{{"arch", resolve_arch(config.model.arch)},
                       {"encoder_layers", config.model.encoder_layers},
                       {"decoder_layers", config.model.decoder_layers},
                       {"vocab", target_vocab},
                       {"max_len_a", config.decoding.max_len_a},
                       {"max_len_b", config.decoding.max_len_b},
                       {"max_tokens", config.training.max_tokens}};
  // The architecture's own keys: numbers as numbers, choices as strings.
  for (const auto& [key, text] : arch_option_values(config.model)) {
    model[key] = nlohmann::json::accept(text) ? nlohmann::json::parse(text) : nlohmann::json(text);
  }
  write_file_atomically(path, [&](std::ostream& out) { out << model.dump(); });
}

}  // namespace nmtzoo
