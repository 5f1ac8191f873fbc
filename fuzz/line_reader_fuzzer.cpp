// SPDX-License-Identifier: MIT
// LineReader on arbitrary file contents: the bytes are written to a scratch file and read back
// line by line. Unless they start with the gzip magic (LineReader then decompresses them), the
// lines must be the bytes split at each '\n', each without a final '\r' (the documented "\r\n"
// terminator), with line_number() counting them. An IoError naming the file is an acceptable
// answer (NUL bytes inside a line may become one). Each line is also checked by
// find_invalid_utf8: the bytes before the offset it reports are valid UTF-8.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "torch_free/io/text_file.h"

namespace {

// One file per process, rewritten for every input and removed at exit.
class ScratchFile {
 public:
  ScratchFile()
      : path_((std::filesystem::temp_directory_path() /
               ("nmtzoo_line_reader_fuzzer." + std::to_string(::getpid())))
                  .string()) {}
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  const std::string& write(std::string_view contents) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    NMTZOO_FUZZ_CHECK(out.good(), "cannot write the scratch file " + path_);
    return path_;
  }

 private:
  std::string path_;
};

std::vector<std::string> expected_lines(std::string_view contents) {
  std::vector<std::string> lines = nmtzoo::fuzz::split_lines(contents);
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool terminated = i + 1 < lines.size() || contents.back() == '\n';
    if (terminated && !lines[i].empty() && lines[i].back() == '\r') lines[i].pop_back();
  }
  return lines;
}

void check_utf8_offset(const std::string& line) {
  const auto invalid_at = nmtzoo::find_invalid_utf8(line);
  if (!invalid_at) return;
  NMTZOO_FUZZ_CHECK(*invalid_at < line.size() &&
                        !nmtzoo::find_invalid_utf8(std::string_view(line).substr(0, *invalid_at)),
                    "find_invalid_utf8 reported offset " + std::to_string(*invalid_at));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  const std::string_view contents(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  try {
    nmtzoo::LineReader reader(scratch.write(contents));
    std::string line;
    while (reader.next(line)) {
      lines.push_back(line);
      NMTZOO_FUZZ_CHECK(reader.line_number() == static_cast<int64_t>(lines.size()),
                        "line_number() " + std::to_string(reader.line_number()) + " after " +
                            std::to_string(lines.size()) + " lines");
      check_utf8_offset(line);
    }
  } catch (const nmtzoo::IoError&) {
    return 0;
  }
  const bool gzip = contents.size() >= 2 && contents[0] == '\x1f' && contents[1] == '\x8b';
  if (gzip) return 0;
  const std::vector<std::string> expected = expected_lines(contents);
  NMTZOO_FUZZ_CHECK(lines.size() == expected.size(),
                    std::to_string(lines.size()) + " lines read, " +
                        std::to_string(expected.size()) + " in the file");
  for (size_t i = 0; i < lines.size(); ++i) {
    NMTZOO_FUZZ_CHECK(lines[i] == expected[i], "line " + std::to_string(i + 1) + " reads as [" +
                                                   lines[i] + "], the file has [" + expected[i] +
                                                   "]");
  }
  return 0;
}
