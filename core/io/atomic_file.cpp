#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ostream>
#include <regex>
#include <streambuf>
#include <vector>

#include "core/io/text_file.h"

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
  fs::path target(path_);
  std::error_code ec;
  if (fs::is_directory(target, ec)) fail("cannot write", EISDIR);
  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(directory, ec);
  if (ec) throw IoError("cannot write '" + path_ + "': " + ec.message());
  temporary_ = temporary_path_beside(path_);
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) fail("cannot write", errno);
  buffer_ = std::make_unique<StreamBuffer>(*this);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
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
  if (::fsync(fd_) != 0) fail_writing(errno);
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail_writing(errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) fail("cannot replace", errno);
  committed_ = true;
  fs::path directory = fs::path(path_).parent_path();
  int dir_fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  if (1 + name.size() + suffix.size() <= kNameMax) return (target.parent_path() / ("." + name + suffix)).string();
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
  // ".<name>.tmp.<pid>", and ".<name>.tmp.<pid>.<ext>" for tools that add an extension.
  static const std::regex kTemporaryName(R"(\..+\.tmp\.([0-9]+)(\.[a-z]+)?)");
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, kTemporaryName)) continue;
    const auto pid = static_cast<pid_t>(std::stoll(match[1].str()));
    const bool alive = pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM;
    if (!alive && fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace nmtzoo
