// Crash-safe file replacement: write beside the destination, then fsync and rename over it.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

namespace nmtzoo {

// A file that replaces `path` only when commit() succeeds. Until then the bytes go to a temporary
// file beside `path` (".<name>.tmp.<pid>"), which the destructor removes, so a crash or an error
// at any instant leaves the old file (or none) at `path`, never a partial one.
//
// write() never throws: a failed write (a full disk, a file-size limit) is remembered and the
// rest ignored, and commit() reports it. That makes it safe behind writer callbacks that must not
// throw, such as LibTorch's archive writer, which finalises in its destructor.
class AtomicFile {
 public:
  // Creates the temporary file; throws IoError naming `path` (not the temporary) when it cannot.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const void* data, size_t size) noexcept;
  // A buffered stream over write(); its state never fails, commit() reports errors.
  std::ostream& stream();
  // Flushes, fsyncs, renames over `path` and fsyncs the folder; throws IoError naming `path`,
  // e.g. "writing 'x.pt' failed: No space left on device (disk full?)".
  void commit();
  const std::string& path() const { return path_; }

 private:
  class StreamBuffer;
  void write_bytes(const void* data, size_t size) noexcept;
  [[noreturn]] void fail(const std::string& what, int error_number);
  [[noreturn]] void fail_writing(int error_number);

  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  int write_error_ = 0;  // errno of the first failed write
  bool committed_ = false;
  std::unique_ptr<StreamBuffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

// Where this process writes what will replace `path`: ".<name>.tmp.<pid>" beside it, the name
// remove_stale_temporary_files() recognises; a name too long for that keeps a prefix and a hash
// of itself, within the file system's 255-byte limit.
std::string temporary_path_beside(const std::string& path);

// Replaces `path` atomically with what `write` puts into the stream (see AtomicFile).
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Removes the temporary files AtomicFile leaves behind when its process is killed
// (".<name>.tmp.<pid>" in `dir`, not recursively) whose process no longer runs. Returns how many.
size_t remove_stale_temporary_files(const std::string& dir);

}  // namespace nmtzoo
