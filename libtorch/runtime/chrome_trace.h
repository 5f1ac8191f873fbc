// SPDX-License-Identifier: MIT
// A Chrome trace (LibTorch's profiler) of everything LibTorch runs while the object lives, for
// the benchmarks' --trace; nothing when the folder is empty.
#pragma once

#include <memory>
#include <string>

namespace nmtzoo {

class ChromeTrace {
 public:
  // Writes <dir>/<file> when destroyed; creates `dir`.
  ChromeTrace(const std::string& dir, const std::string& file);
  ~ChromeTrace();
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;
  void stop();  // writes the trace now

 private:
  struct Profile;
  std::unique_ptr<Profile> profile_;
};

}  // namespace nmtzoo
