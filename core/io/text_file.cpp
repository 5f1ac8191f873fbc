#include "core/io/text_file.h"

#include <utf8proc.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace nmtzoo {

namespace fs = std::filesystem;

// zlib reads plain files too (gzopen passes them through), so one path serves both.
struct LineReader::Handle {
  gzFile file = nullptr;
  std::vector<char> buffer = std::vector<char>(size_t{1} << 17);
  size_t begin = 0;  // unread bytes are buffer[begin, end)
  size_t end = 0;
  bool at_end = false;
  ~Handle() {
    if (file != nullptr) gzclose(file);
  }
};

LineReader::LineReader(std::string path) : path_(std::move(path)), handle_(new Handle) {
  std::error_code ec;
  if (fs::is_directory(path_, ec)) throw IoError("cannot read '" + path_ + "': it is a directory");
  if (!fs::exists(path_, ec)) throw IoError("cannot open '" + path_ + "': no such file");
  handle_->file = gzopen(path_.c_str(), "rb");
  if (handle_->file == nullptr) {
    throw IoError("cannot open '" + path_ + "': " + std::strerror(errno));
  }
}

LineReader::LineReader(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

// Lines end at '\n' only, whatever bytes they hold (gzgets' C strings would end them at a NUL).
bool LineReader::next(std::string& line) {
  line.clear();
  Handle& h = *handle_;
  bool any = false;
  while (true) {
    if (h.begin == h.end) {
      if (h.at_end) break;
      int n = gzread(h.file, h.buffer.data(), static_cast<unsigned>(h.buffer.size()));
      if (n < 0) {
        int code = 0;
        const char* message = gzerror(h.file, &code);
        throw IoError(path_ + ":" + std::to_string(line_number_ + 1) + ": read error: " + message);
      }
      h.begin = 0;
      h.end = static_cast<size_t>(n);
      h.at_end = n == 0;
      continue;
    }
    any = true;
    const char* start = h.buffer.data() + h.begin;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', h.end - h.begin));
    if (newline == nullptr) {
      line.append(start, h.end - h.begin);
      h.begin = h.end;
      continue;
    }
    line.append(start, static_cast<size_t>(newline - start));
    h.begin += static_cast<size_t>(newline - start) + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_number_;
    return true;
  }
  if (any) ++line_number_;  // a last line without a terminator
  return any;
}

int64_t LineReader::file_offset() const { return static_cast<int64_t>(gzoffset(handle_->file)); }

std::vector<std::string> split_fields(std::string_view text, char separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t end = text.find(separator); end != std::string_view::npos; end = text.find(separator, start)) {
    fields.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  fields.emplace_back(text.substr(start));
  return fields;
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

std::optional<TextProblem> find_text_problem(std::string_view text) {
  if (auto bad = find_invalid_utf8(text)) return TextProblem{*bad, "invalid UTF-8"};
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) return TextProblem{nul, "a NUL byte"};
  return std::nullopt;
}

std::string TextProblem::describe() const {
  return std::string(what) + " at byte " + std::to_string(byte + 1);
}

}  // namespace nmtzoo
