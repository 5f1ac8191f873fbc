#include "core/io/text_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <utf8proc.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace nmtzoo {

namespace fs = std::filesystem;

struct LineReader::Handle {
  gzFile file = nullptr;
  ~Handle() {
    if (file != nullptr) gzclose(file);
  }
};

LineReader::LineReader(std::string path) : path_(std::move(path)), handle_(new Handle) {
  std::error_code ec;
  if (!fs::is_regular_file(path_, ec)) throw IoError("cannot open '" + path_ + "': no such file");
  handle_->file = gzopen(path_.c_str(), "rb");
  if (handle_->file == nullptr) {
    throw IoError("cannot open '" + path_ + "': " + std::strerror(errno));
  }
  gzbuffer(handle_->file, 1 << 17);
}

LineReader::LineReader(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

bool LineReader::next(std::string& line) {
  line.clear();
  char buffer[8192];
  bool any = false;
  while (gzgets(handle_->file, buffer, sizeof buffer) != nullptr) {
    any = true;
    size_t n = std::strlen(buffer);
    if (n > 0 && buffer[n - 1] == '\n') {
      line.append(buffer, n - 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      ++line_number_;
      return true;
    }
    line.append(buffer, n);
  }
  int code = 0;
  const char* message = gzerror(handle_->file, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    throw IoError(path_ + ":" + std::to_string(line_number_ + 1) + ": read error: " + message);
  }
  if (any) ++line_number_;  // a last line without a terminator
  return any;
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  size_t offset = 0;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  while (offset < text.size()) {
    utf8proc_int32_t codepoint = 0;
    utf8proc_ssize_t n = utf8proc_iterate(bytes + offset,
                                          static_cast<utf8proc_ssize_t>(text.size() - offset),
                                          &codepoint);
    if (n <= 0) return offset;
    offset += static_cast<size_t>(n);
  }
  return std::nullopt;
}

namespace {

void fsync_path(const fs::path& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw IoError("cannot open '" + path.string() + "': " + std::strerror(errno));
  int result = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (result != 0) throw IoError("cannot fsync '" + path.string() + "': " + std::strerror(saved));
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  fs::path target(path);
  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::create_directories(directory);
  fs::path temporary = directory / ("." + target.filename().string() + ".tmp." +
                                    std::to_string(::getpid()));
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) throw IoError("cannot create '" + temporary.string() + "'");
      write(out);
      out.flush();
      if (!out) {
        throw IoError("writing '" + temporary.string() + "' failed (disk full?): " +
                      std::strerror(errno));
      }
    }
    fsync_path(temporary, O_RDONLY);
    fs::rename(temporary, target);
    fsync_path(directory, O_RDONLY | O_DIRECTORY);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
}

}  // namespace nmtzoo
