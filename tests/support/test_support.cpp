// SPDX-License-Identifier: MIT
#include "tests/support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nmtzoo::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "nmtzoo_test_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

std::string TempDir::path(const std::string& name) const {
  return name.empty() ? root_ : (fs::path(root_) / name).string();
}

void write_text(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

void write_gzip(const std::string& path, const std::string& content) {
  gzFile file = gzopen(path.c_str(), "wb");
  gzwrite(file, content.data(), static_cast<unsigned>(content.size()));
  gzclose(file);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string multi30k(const std::string& file) {
  const char* env = std::getenv("NMTZOO_TEST_DATA");
  fs::path path = fs::path(env != nullptr ? env : NMTZOO_TEST_DATA) / file;
  if (!fs::exists(path)) {
    ADD_FAILURE() << "missing " << path
                  << ": run scripts/get-data.sh --from ../shared/data/multi30k (scripts/test.sh "
                     "does) or set NMTZOO_TEST_DATA";
  }
  return path.string();
}

bool require_all() {
  const char* value = std::getenv("NMTZOO_REQUIRE_ALL");
  return value != nullptr && std::string(value) == "1";
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t got = 0;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool python_numpy_available() {
  static const bool available =
      run_command("/usr/bin/python3 -c 'import numpy' 2>/dev/null").status == 0;
  return available;
}

}  // namespace nmtzoo::testing
