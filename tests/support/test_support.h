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

}  // namespace nmtzoo::testing
