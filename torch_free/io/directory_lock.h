// SPDX-License-Identifier: MIT
// An exclusive, advisory lock on a folder, held for the lifetime of the object.
#pragma once

#include <string>

namespace nmtzoo {

// Locks `dir` through flock() on "<dir>/.lock", which records the holder's PID. The kernel drops
// the lock when the process ends however it ends, so a killed holder never leaves it stale.
class DirectoryLock {
 public:
  // Creates `dir` if needed. Throws IoError when another process holds the lock, naming it:
  // "run folder 'runs/x' is in use by process 1234 (<what>)", and when the folder or its lock
  // file cannot be made, with the system's reason ("Read-only file system", "Permission denied").
  DirectoryLock(const std::string& dir, const std::string& what);
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  int fd_ = -1;
};

}  // namespace nmtzoo
