#include "core/train/checkpoint_folder.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <utility>
#include <vector>

#include "core/io/atomic_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

// Points `link` at `target`'s contents atomically (a hard link renamed into place).
void link_atomically(const fs::path& target, const fs::path& link) {
  const fs::path temporary = temporary_path_beside(link.string());
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_hard_link(target, temporary, ec);
  if (ec) fs::copy_file(target, temporary, fs::copy_options::overwrite_existing);
  fs::rename(temporary, link);
}

}  // namespace

CheckpointFolder::CheckpointFolder(std::string dir, int64_t keep_last)
    : dir_(std::move(dir)), keep_last_(keep_last) {}

std::string CheckpointFolder::save(int64_t step, bool is_best,
                                   const std::function<void(const std::string&)>& write) {
  const fs::path dir = dir_;
  const fs::path numbered = dir / fmt::format("checkpoint_{}.pt", step);
  write(numbered.string());
  link_atomically(numbered, dir / "checkpoint_last.pt");
  if (is_best) link_atomically(numbered, dir / "checkpoint_best.pt");
  std::vector<std::pair<int64_t, fs::path>> numbered_files;
  const std::regex pattern("checkpoint_([0-9]+)\\.pt");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) numbered_files.emplace_back(std::stoll(match[1]), entry.path());
  }
  std::sort(numbered_files.begin(), numbered_files.end());
  const auto keep = static_cast<size_t>(keep_last_);
  for (size_t i = 0; i + keep < numbered_files.size(); ++i) fs::remove(numbered_files[i].second);
  return numbered.string();
}

}  // namespace nmtzoo
