// SPDX-License-Identifier: MIT
// Helpers shared by the tests: scratch folders, small files, the Multi30k location.
#pragma once

#include <string>

namespace nmtzoo::testing {

// A fresh folder removed at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name = "") const;

 private:
  std::string root_;
};

void write_text(const std::string& path, const std::string& content);
void write_gzip(const std::string& path, const std::string& content);
std::string read_text(const std::string& path);

// Path of a Multi30k file (NMTZOO_TEST_DATA, overridable by the environment variable of that
// name); fails the calling test with a hint when it is missing.
std::string multi30k(const std::string& file);

// True when NMTZOO_REQUIRE_ALL=1 (.ci/run sets it): a test that needs an external tool then
// fails instead of skipping (NMTZOO_SKIP_OR_FAIL).
bool require_all();

// Exit status and standard output of `/bin/sh -c command` (stderr goes to the test's stderr).
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);

// Whether Debian's /usr/bin/python3 imports numpy (scripts/setup.sh installs python3-numpy).
bool python_numpy_available();

}  // namespace nmtzoo::testing

// Skips the test, or fails it under NMTZOO_REQUIRE_ALL=1, for a missing external tool.
#define NMTZOO_SKIP_OR_FAIL(why)                                                  \
  do {                                                                            \
    if (::nmtzoo::testing::require_all()) {                                       \
      FAIL() << (why) << " (NMTZOO_REQUIRE_ALL=1; scripts/setup.sh installs it)"; \
    }                                                                             \
    GTEST_SKIP() << (why);                                                        \
  } while (false)
