// SPDX-License-Identifier: MIT
// Crash-safe file replacement: write beside the destination, then fsync and rename over it.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace nmtzoo {

// A file that replaces `path` only when commit() succeeds. Until then the bytes go to a temporary
// file beside `path` (".<name>.tmp.<pid>"), which the destructor removes, so a crash or an error
// at any instant leaves the old file (or none) at `path`, never a partial one.
//
// A symbolic link at `path` stays a link: the file it leads to is the one replaced, with the
// temporary beside that file. A character device or a FIFO at `path` (/dev/null, a named pipe)
// is opened and written in place, as a shell redirection would: renaming over it would put a
// regular file where it was, so a failed run leaves there what was written up to the failure.
//
// write() never throws: a failed write (a full disk, a file-size limit) is remembered and the
// rest ignored, and commit() reports it. That makes it safe behind writer callbacks that must not
// throw, such as LibTorch's archive writer, which finalises in its destructor.
class AtomicFile {
 public:
  // Creates the temporary file (opens a device or FIFO: for a FIFO, waits for its reader); throws
  // IoError naming `path` (not the temporary) when it cannot. The first AtomicFile of a process
  // in a folder removes the temporaries that killed processes left there (see
  // remove_stale_temporary_files).
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
  void open_in_place();
  void open_temporary();
  void write_bytes(const void* data, size_t size) noexcept;
  [[noreturn]] void fail(const std::string& what, int error_number);
  [[noreturn]] void fail_writing(int error_number);

  std::string path_;       // as asked for, in every message
  std::string target_;     // what the temporary replaces: `path_` with its symbolic links followed
  std::string temporary_;  // empty when writing a device or FIFO in place
  int fd_ = -1;
  int write_error_ = 0;  // errno of the first failed write
  bool committed_ = false;
  std::unique_ptr<StreamBuffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

// Where a program writes its output: stdout, or an AtomicFile that replaces the path only when
// everything succeeded (commit).
class OutputDestination {
 public:
  // "" is stdout; a path's file is opened at once, so a bad path fails before any work. `what`
  // names the output in messages ("the translations").
  OutputDestination(const std::string& path, std::string what);
  OutputDestination(const OutputDestination&) = delete;
  OutputDestination& operator=(const OutputDestination&) = delete;
  ~OutputDestination();
  std::ostream& stream();
  // Throws IoError when stdout failed (a full disk behind a redirection, a closed pipe): check
  // after every chunk, so a run stops instead of losing lines silently.
  void check_stdout() const;
  void commit();  // the file's; nothing for stdout

 private:
  std::unique_ptr<AtomicFile> file_;
  std::string what_;
};

// Where this process writes what will replace `path`: ".<name>.tmp.<pid>" beside it, the name
// remove_stale_temporary_files() recognises; a name too long for that keeps a prefix and a hash
// of itself, within the file system's 255-byte limit.
std::string temporary_path_beside(const std::string& path);

// Replaces `path` atomically with what `write` puts into the stream (see AtomicFile).
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Removes the temporary files AtomicFile leaves behind when its process is killed whose process
// no longer runs (kill(pid, 0) fails with ESRCH): the regular files of `dir`, not recursively,
// named ".<name>.tmp.<pid>", or ".<name>.tmp.<pid>.model" / ".vocab" (the tokenizer trainer's
// scratch files, see torch_free/data/tokenizers.cpp). Returns how many.
size_t remove_stale_temporary_files(const std::string& dir);

// Removes the temporary files of this process's AtomicFiles not yet committed, for a process
// ending on a signal (libtorch/runtime/runtime.h, end_on_stop_signal_removing_temporaries).
void remove_temporary_files_of_this_process() noexcept;

// A path and the option (or argument) that gave it, for messages.
struct NamedPath {
  std::string option;
  std::string path;
};

// Refuses an output that is one of the inputs (the same device and inode, so hard and symbolic
// links count too; or, for an output not there yet, the same resolved path), which writing it
// would replace, with an IoError naming both: "-o 'M.pt' is the same file as -c 'M.pt': ...".
// Empty paths and outputs that are not regular files (/dev/null, a FIFO) are never refused.
void check_output_is_not_an_input(const NamedPath& output, const std::vector<NamedPath>& inputs);

}  // namespace nmtzoo
