// SPDX-License-Identifier: MIT
// A tiny untrained Transformer checkpoint and a way to run nmtzoo-translate on it, for the
// translate app's tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo::testing {

class TranslateAppFixture : public ::testing::Test {
 protected:
  void SetUp() override { checkpoint_ = run_.save_untrained_checkpoint(); }
  // Runs nmtzoo-translate -c CHECKPOINT (default: the fixture's) --threads 1 EXTRA with
  // `input_text` on stdin; returns the exit status.
  int translate(const std::vector<std::string>& extra, const std::string& input_text,
                const std::string& checkpoint = "") {
    write_text(run_.path("input.txt"), input_text);
    std::vector<std::string> args{bin("nmtzoo-translate"), "-c",
                                  checkpoint.empty() ? checkpoint_ : checkpoint, "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args, run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt"));
  }
  std::string out() const { return read_text(run_.path("stdout.txt")); }
  std::string err() const { return read_text(run_.path("stderr.txt")); }

  TinyRun run_{"transformer"};
  std::string checkpoint_;
};

}  // namespace nmtzoo::testing
