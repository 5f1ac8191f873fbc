// SPDX-License-Identifier: MIT
// Runs nmtzoo's own executables from tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nmtzoo::testing {

// Path of a built nmtzoo executable, e.g. bin("nmtzoo-translate").
std::string bin(const std::string& name);

class Subprocess {
 public:
  // Starts `args` (args[0] = program) with stdin from `stdin_path` ("" = /dev/null), stdout and
  // stderr into the given files, and `environment` ("NAME=value") added to this process's.
  Subprocess(const std::vector<std::string>& args, const std::string& stdin_path,
             const std::string& stdout_path, const std::string& stderr_path,
             const std::vector<std::string>& environment = {});
  ~Subprocess();
  pid_t pid() const { return pid_; }
  void signal(int number) const;
  // Exit status, or 128 + signal number when killed by a signal.
  int wait();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// Runs to completion; returns the exit status.
int run(const std::vector<std::string>& args, const std::string& stdin_path,
        const std::string& stdout_path, const std::string& stderr_path);

}  // namespace nmtzoo::testing
