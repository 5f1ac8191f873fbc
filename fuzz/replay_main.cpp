// SPDX-License-Identifier: MIT
// Replays a fuzz target's corpus without libFuzzer, for the normal build's ctest: the empty input,
// then every file of the folders (or the files) given, in name order, each passed once to the
// target's LLVMFuzzerTestOneInput. Each file is named on stderr before it runs, so the last name
// printed is the input that crashed, failed an invariant or threw an unexpected exception.
//
//   <target>_replay CORPUS_DIR_OR_FILE...
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::directory_iterator(argv[i])) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.emplace_back(argv[i]);
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE... (no input found)\n", argv[0]);
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());

  auto replay = [](const std::string& bytes) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  };
  replay("");
  for (const auto& path : inputs) {
    std::fprintf(stderr, "replaying %s\n", path.c_str());
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    replay({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  }
  std::fprintf(stderr, "replayed %zu inputs and the empty one: no failure\n", inputs.size());
  return 0;
}
