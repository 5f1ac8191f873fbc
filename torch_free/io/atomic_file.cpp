// SPDX-License-Identifier: MIT
#include "torch_free/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>
#include <ostream>
#include <regex>
#include <set>
#include <streambuf>
#include <vector>

#include "torch_free/io/text_file.h"

namespace nmtzoo {

namespace fs = std::filesystem;

namespace {

std::string describe_error(int error_number) {
  std::string text = std::strerror(error_number);
  if (error_number == ENOSPC || error_number == EFBIG || error_number == EDQUOT) {
    text += " (disk full?)";
  }
  return text;
}

// `path` with the symbolic links of its last component followed (as open() would), so that the
// file a link leads to is replaced and the link stays. A dangling link gives its target.
std::string final_target(const std::string& path) {
  fs::path current(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code not_a_link;
    const fs::path next = fs::read_symlink(current, not_a_link);
    if (not_a_link) return current.string();
    current = next.is_absolute() ? next : current.parent_path() / next;
  }
  throw IoError("cannot write '" + path + "': " + std::strerror(ELOOP));
}

// The temporaries of the AtomicFiles of this process not yet committed, for
// remove_temporary_files_of_this_process; the mutex also orders a commit's rename against it.
// Never destroyed: a stop signal may come while the process runs its static destructors.
struct Temporaries {
  std::mutex mutex;
  std::set<std::string> paths;
};
Temporaries& temporaries() {
  static auto* const live = new Temporaries;
  return *live;
}

// Once per process and folder, the first atomic write there removes what killed processes left.
void remove_stale_temporaries_once(const fs::path& directory) {
  static std::mutex mutex;
  static std::set<std::string> done;
  std::error_code ec;
  const std::string key = fs::absolute(directory, ec).lexically_normal().string();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!done.insert(key).second) return;
  }
  remove_stale_temporary_files(directory.string());
}

}  // namespace

// Buffers stream output into large write() calls.
class AtomicFile::StreamBuffer : public std::streambuf {
 public:
  explicit StreamBuffer(AtomicFile& file) : file_(file), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  int sync() override {
    file_.write_bytes(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
  }

 protected:
  int_type overflow(int_type c) override {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    if (size >= static_cast<std::streamsize>(buffer_.size())) {
      sync();
      file_.write_bytes(data, static_cast<size_t>(size));
      return size;
    }
    return std::streambuf::xsputn(data, size);
  }

 private:
  AtomicFile& file_;
  std::vector<char> buffer_;
};

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat status {};
  if (::stat(path_.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) {
    if (S_ISDIR(status.st_mode)) fail("cannot write", EISDIR);
    if (!S_ISCHR(status.st_mode) && !S_ISFIFO(status.st_mode)) {
      throw IoError("cannot write '" + path_ + "': it is neither a regular file nor a character " +
                    "device nor a FIFO");
    }
    open_in_place();
  } else {
    open_temporary();
  }
  buffer_ = std::make_unique<StreamBuffer>(*this);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

void AtomicFile::open_in_place() {
  // No O_CREAT: should the device or FIFO vanish meanwhile, no regular file is made in its place.
  // Opening a FIFO waits for a reader.
  do {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail("cannot write", errno);
}

void AtomicFile::open_temporary() {
  target_ = final_target(path_);
  const fs::path target(target_);
  std::error_code ec;
  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(directory, ec);
  if (ec) throw IoError("cannot write '" + path_ + "': " + ec.message());
  remove_stale_temporaries_once(directory);
  temporary_ = temporary_path_beside(target_);
  std::lock_guard<std::mutex> lock(temporaries().mutex);
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int error_number = errno;
    temporary_.clear();
    fail("cannot write", error_number);
  }
  temporaries().paths.insert(temporary_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) {
    std::lock_guard<std::mutex> lock(temporaries().mutex);
    if (temporaries().paths.erase(temporary_) > 0) ::unlink(temporary_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) noexcept {
  buffer_->pubsync();  // what the stream holds comes first
  write_bytes(data, size);
}

void AtomicFile::write_bytes(const void* data, size_t size) noexcept {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0 && write_error_ == 0) {
    ssize_t written = ::write(fd_, bytes, size);
    if (written < 0) {
      if (errno != EINTR) write_error_ = errno;
      continue;
    }
    if (written == 0) write_error_ = EIO;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

std::ostream& AtomicFile::stream() { return *stream_; }

void AtomicFile::fail(const std::string& what, int error_number) {
  throw IoError(what + " '" + path_ + "': " + describe_error(error_number));
}

void AtomicFile::fail_writing(int error_number) {
  throw IoError("writing '" + path_ + "' failed: " + describe_error(error_number));
}

void AtomicFile::commit() {
  stream_->flush();
  if (write_error_ != 0) fail_writing(write_error_);
  if (!*stream_) fail_writing(EIO);  // a writer that set the stream's error state
  if (temporary_.empty()) {  // a device or FIFO, written in place: nothing to sync or rename
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail_writing(errno);
    committed_ = true;
    return;
  }
  if (::fsync(fd_) != 0) fail_writing(errno);
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail_writing(errno);
  {
    std::lock_guard<std::mutex> lock(temporaries().mutex);
    // Gone from the set: a stop signal removed the file (the process is ending).
    if (temporaries().paths.count(temporary_) == 0) fail("cannot replace", ENOENT);
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) fail("cannot replace", errno);
    temporaries().paths.erase(temporary_);
    committed_ = true;
  }
  fs::path directory = fs::path(target_).parent_path();
  int dir_fd =
      ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    // The new file is in place; a failing folder fsync only weakens durability across a power
    // cut, which is no reason to report the write as failed.
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

std::string temporary_path_beside(const std::string& path) {
  const fs::path target(path);
  const std::string name = target.filename().string();
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  // A legal name near NAME_MAX would overflow it with the dot and suffix: such a name keeps a
  // prefix (cut on a UTF-8 character boundary) and a hash of the whole, so that two long names
  // sharing the prefix still get different temporaries.
  constexpr size_t kNameMax = 255;
  if (1 + name.size() + suffix.size() <= kNameMax)
    return (target.parent_path() / ("." + name + suffix)).string();
  const std::string hash = fmt::format("~{:016x}", std::hash<std::string>{}(name));
  size_t keep = kNameMax - 1 - hash.size() - suffix.size();
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  return (target.parent_path() / ("." + name.substr(0, keep) + hash + suffix)).string();
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  AtomicFile file(path);
  write(file.stream());
  file.commit();
}

size_t remove_stale_temporary_files(const std::string& dir) {
  // Exactly the names temporary_path_beside makes (a PID without leading zeros), and those with
  // the extensions SentencePiece adds to a scratch prefix.
  static const std::regex kTemporaryName(R"(\..+\.tmp\.([1-9][0-9]{0,9})(\.model|\.vocab)?)");
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (name[0] != '.' || name.find(".tmp.") == std::string::npos) continue;  // most, cheaply
    if (!std::regex_match(name, match, kTemporaryName)) continue;
    std::error_code not_regular;
    if (!entry.is_regular_file(not_regular) || entry.is_symlink(not_regular)) continue;
    const long long pid = std::stoll(match[1].str());
    if (pid > INT_MAX) continue;  // no process has it: not a name this code made
    const bool dead = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    if (dead && fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

void remove_temporary_files_of_this_process() noexcept {
  std::lock_guard<std::mutex> lock(temporaries().mutex);
  for (const std::string& temporary : temporaries().paths) ::unlink(temporary.c_str());
  temporaries().paths.clear();
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat first {};
  struct stat second {};
  if (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0) {
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  }
  // One is not there yet (two outputs): the same path once links and ".." are resolved.
  const auto resolved = [](const std::string& path) {
    try {
      return fs::weakly_canonical(final_target(path));
    } catch (const std::exception&) {  // a loop of links, an unreadable folder
      return fs::path();
    }
  };
  const fs::path resolved_a = resolved(a);
  return !resolved_a.empty() && resolved_a == resolved(b);
}

}  // namespace

void check_output_is_not_an_input(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  if (output.path.empty()) return;
  struct stat status {};
  if (::stat(output.path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) return;
  for (const NamedPath& input : inputs) {
    if (input.path.empty() || !same_file(output.path, input.path)) continue;
    throw IoError(output.option + " '" + output.path + "' is the same file as " + input.option +
                  " '" + input.path +
                  "': writing it would replace that input; write to another file");
  }
}

OutputDestination::OutputDestination(const std::string& path, std::string what)
    : what_(std::move(what)) {
  if (!path.empty()) file_ = std::make_unique<AtomicFile>(path);
}

OutputDestination::~OutputDestination() = default;

std::ostream& OutputDestination::stream() { return file_ ? file_->stream() : std::cout; }

void OutputDestination::check_stdout() const {
  if (!file_ && !std::cout) throw IoError("writing " + what_ + " to stdout failed");
}

void OutputDestination::commit() {
  if (file_) file_->commit();
}

}  // namespace nmtzoo
