// SPDX-License-Identifier: MIT
// An LD_PRELOAD library for tests: write() and writev() on files whose path contains
// $NMTZOO_FAIL_WRITES_TO fail with ENOSPC, as on a full disk, while every other file works.
// (A real full disk cannot be made without root or a dedicated filesystem; `ulimit -f` covers the
// other failure, EFBIG.)
#include <dlfcn.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

bool should_fail(int fd) {
  const char* pattern = std::getenv("NMTZOO_FAIL_WRITES_TO");
  if (pattern == nullptr || *pattern == '\0') return false;
  char target[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return std::strstr(target, pattern) != nullptr;
}

template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" ssize_t write(int fd, const void* data, size_t size) {
  static const auto real = next_definition<ssize_t (*)(int, const void*, size_t)>("write");
  if (should_fail(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd, data, size);
}

extern "C" ssize_t writev(int fd, const iovec* vectors, int count) {
  static const auto real = next_definition<ssize_t (*)(int, const iovec*, int)>("writev");
  if (should_fail(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd, vectors, count);
}
