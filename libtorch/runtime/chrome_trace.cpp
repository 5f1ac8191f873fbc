// SPDX-License-Identifier: MIT
#include "libtorch/runtime/chrome_trace.h"

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <filesystem>

namespace nmtzoo {

struct ChromeTrace::Profile {
  explicit Profile(const std::string& path) : record(path) {}
  torch::autograd::profiler::RecordProfile record;
};

ChromeTrace::ChromeTrace(const std::string& dir, const std::string& file) {
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  profile_ = std::make_unique<Profile>(dir + "/" + file);
}

ChromeTrace::~ChromeTrace() = default;

void ChromeTrace::stop() { profile_.reset(); }

}  // namespace nmtzoo
