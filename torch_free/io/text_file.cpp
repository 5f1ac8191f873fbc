// SPDX-License-Identifier: MIT
#include "torch_free/io/text_file.h"

#include <utf8proc.h>
#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace nmtzoo {

namespace fs = std::filesystem;

// The file is read with read(2) and gzip is decoded with inflate() rather than zlib's gz* API,
// which ends a truncated stream as if it were complete (gzread returns 0 and only gzerror tells)
// and drops whatever follows the last member. Here a file is gzip when its first two bytes are
// the gzip magic (1f 8b), as zlib decides too; it may hold several members one after the other
// (concatenated .gz files, bgzip's blocks), each read in turn. A stream that ends inside a member
// and bytes after a member that do not start another are errors, like a bad checksum.
struct LineReader::Handle {
  int fd = -1;
  bool started = false;  // the first bytes have been read and the format decided
  bool gzip = false;
  bool inflating = false;  // `stream` holds inflate's state (inflateInit2 succeeded)
  bool in_member = false;  // gzip: bytes of a member have gone to inflate, but not its end
  int64_t members = 0;     // gzip: members read to their end
  z_stream stream{};
  std::vector<unsigned char> input = std::vector<unsigned char>(size_t{1} << 16);
  size_t pending = 0;      // plain: bytes at the start of `input` read but not yet handed on
  int64_t file_bytes = 0;  // bytes read from the file so far
  std::vector<char> buffer = std::vector<char>(size_t{1} << 17);
  size_t begin = 0;  // unread decoded bytes are buffer[begin, end)
  size_t end = 0;
  bool at_end = false;

  Handle() = default;
  Handle(const Handle&) = delete;  // inflate's state points back at `stream`
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (inflating) inflateEnd(&stream);
    if (fd >= 0) ::close(fd);
  }

  // Decoded bytes into `out`; 0 only at the end of the file (after a complete gzip stream).
  // `path` and `line` (the line being read) are for errors.
  size_t read_decoded(char* out, size_t size, const std::string& path, int64_t line);

 private:
  size_t read_some(void* into, size_t size, const std::string& path, int64_t line);
  void start(const std::string& path, int64_t line);
};

// Up to `size` bytes of the file; 0 at its end.
size_t LineReader::Handle::read_some(void* into, size_t size, const std::string& path,
                                     int64_t line) {
  while (true) {
    const ssize_t n = ::read(fd, into, size);
    if (n >= 0) {
      file_bytes += n;
      return static_cast<size_t>(n);
    }
    if (errno != EINTR) {
      throw IoError(path + ":" + std::to_string(line) + ": read error: " + std::strerror(errno));
    }
  }
}

// Reads the first two bytes (or all there are) to tell gzip from plain text.
void LineReader::Handle::start(const std::string& path, int64_t line) {
  started = true;
  size_t have = 0;
  while (have < 2) {
    const size_t n = read_some(input.data() + have, input.size() - have, path, line);
    if (n == 0) break;
    have += n;
  }
  gzip = have >= 2 && input[0] == 0x1f && input[1] == 0x8b;
  if (!gzip) {
    pending = have;
    return;
  }
  // 16 + MAX_WBITS: deflate data inside a gzip header and trailer (CRC-32 and length).
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    throw IoError("cannot decompress '" + path +
                  "': " + (stream.msg != nullptr ? stream.msg : "out of memory"));
  }
  inflating = true;
  stream.next_in = input.data();
  stream.avail_in = static_cast<unsigned>(have);
}

size_t LineReader::Handle::read_decoded(char* out, size_t size, const std::string& path,
                                        int64_t line) {
  if (!started) start(path, line);
  if (!gzip) {
    if (pending > 0) {
      const size_t n = std::min(pending, size);
      std::memcpy(out, input.data(), n);
      std::memmove(input.data(), input.data() + n, pending - n);
      pending -= n;
      return n;
    }
    return read_some(out, size, path, line);
  }
  z_stream& z = stream;
  z.next_out = reinterpret_cast<unsigned char*>(out);
  z.avail_out = static_cast<unsigned>(size);
  while (z.avail_out == size) {
    if (z.avail_in == 0) {
      const size_t n = read_some(input.data(), input.size(), path, line);
      if (n == 0) {
        if (!in_member) return 0;
        // The lines before `line` were whole; the stream stops inside it or right after it.
        throw IoError(path + ":" + std::to_string(line) +
                      ": unexpected end of the gzip stream at byte " + std::to_string(file_bytes) +
                      ": the file is truncated (an interrupted download or copy?)");
      }
      z.next_in = input.data();
      z.avail_in = static_cast<unsigned>(n);
    }
    in_member = true;
    const int status = inflate(&z, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      // The member's CRC-32 and length matched; what follows, if anything, is the next member.
      in_member = false;
      ++members;
      inflateReset(&z);
      continue;
    }
    if (status == Z_OK || (status == Z_BUF_ERROR && z.avail_in == 0)) continue;
    const std::string reason = z.msg != nullptr        ? z.msg
                               : status == Z_MEM_ERROR ? "out of memory"
                                                       : "zlib error " + std::to_string(status);
    // No line is named: a bad checksum says only that some decoded byte is wrong.
    const int64_t unread = static_cast<int64_t>(z.avail_in);
    if (members > 0 && z.total_out == 0 && z.total_in < 10) {  // within what would be a header
      const int64_t member_start = file_bytes - unread - static_cast<int64_t>(z.total_in);
      throw IoError("'" + path + "' is corrupt: what follows the end of its gzip stream (from " +
                    "byte " + std::to_string(member_start + 1) + ") is not gzip (" + reason + ")");
    }
    throw IoError("'" + path + "' is corrupt: bad gzip data near byte " +
                  std::to_string(file_bytes - unread) + " (" + reason + ")");
  }
  return size - z.avail_out;
}

LineReader::LineReader(std::string path) : path_(std::move(path)), handle_(new Handle) {
  std::error_code ec;
  if (fs::is_directory(path_, ec)) throw IoError("cannot read '" + path_ + "': it is a directory");
  if (!fs::exists(path_, ec)) throw IoError("cannot open '" + path_ + "': no such file");
  handle_->fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (handle_->fd < 0) {
    throw IoError("cannot open '" + path_ + "': " + std::strerror(errno));
  }
}

LineReader::LineReader(LineReader&&) noexcept = default;
LineReader::~LineReader() = default;

// Lines end at '\n' only, whatever bytes they hold (NUL bytes included).
bool LineReader::next(std::string& line) {
  line.clear();
  Handle& h = *handle_;
  bool any = false;
  while (true) {
    if (h.begin == h.end) {
      if (h.at_end) break;
      const size_t n = h.read_decoded(h.buffer.data(), h.buffer.size(), path_, line_number_ + 1);
      h.begin = 0;
      h.end = n;
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

int64_t LineReader::file_offset() const {
  const Handle& h = *handle_;
  return h.file_bytes - static_cast<int64_t>(h.gzip ? h.stream.avail_in : h.pending);
}

std::vector<std::string> split_fields(std::string_view text, char separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t end = text.find(separator); end != std::string_view::npos;
       end = text.find(separator, start)) {
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
    utf8proc_ssize_t n = utf8proc_iterate(
        bytes + offset, static_cast<utf8proc_ssize_t>(text.size() - offset), &codepoint);
    if (n <= 0) return offset;
    offset += static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::optional<TextProblem> find_text_problem(std::string_view text) {
  if (auto bad = find_invalid_utf8(text)) return TextProblem{*bad, "invalid UTF-8"};
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    return TextProblem{nul, "a NUL byte"};
  return std::nullopt;
}

std::string TextProblem::describe() const {
  return std::string(what) + " at byte " + std::to_string(byte + 1);
}

}  // namespace nmtzoo
