// The checkpoints folder of a run: numbered checkpoints (checkpoint_<step>.pt), the newest
// training.keep_last of them kept, and checkpoint_last.pt / checkpoint_best.pt pointing at one of
// them (hard links, replaced atomically; copies where the file system has no hard links).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nmtzoo {

class CheckpointFolder {
 public:
  CheckpointFolder(std::string dir, int64_t keep_last);

  const std::string& dir() const { return dir_; }
  std::string last() const { return dir_ + "/checkpoint_last.pt"; }

  // Writes checkpoint_<step>.pt through `write(path)` (which must write atomically), points
  // checkpoint_last.pt (and, when `is_best`, checkpoint_best.pt) at it, then deletes the oldest
  // numbered checkpoints beyond keep_last. Returns the numbered path.
  std::string save(int64_t step, bool is_best, const std::function<void(const std::string&)>& write);

 private:
  std::string dir_;
  int64_t keep_last_;
};

}  // namespace nmtzoo
