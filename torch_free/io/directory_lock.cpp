// SPDX-License-Identifier: MIT
#include "torch_free/io/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "torch_free/io/text_file.h"

namespace nmtzoo {

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& what) {
  // A folder that cannot be made (read-only file system, no permission, a file in the way) is
  // reported with mkdir's reason; the open below would only say the folder is missing.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::error_code ignored;
  if (ec && !std::filesystem::is_directory(dir, ignored)) {
    throw IoError("cannot create folder '" + dir + "': " + ec.message());
  }
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot create '" + path + "': " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(fd_, holder, sizeof holder - 1, 0);
    std::string pid = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (error_number == EWOULDBLOCK) {
      throw IoError("run folder '" + dir + "' is in use by process " + pid + " (" + what +
                    "); wait for it to finish or stop it, or use another folder");
    }
    throw IoError("cannot lock '" + path + "': " + std::strerror(error_number));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    // Best effort: the PID only makes the message above more helpful.
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace nmtzoo
