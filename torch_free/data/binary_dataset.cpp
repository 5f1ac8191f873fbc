// SPDX-License-Identifier: MIT
#include "torch_free/data/binary_dataset.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include "torch_free/data/corpus.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kByteOrderMark = 0x01020304;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint64_t count;       // ids, pairs or bytes that follow
  uint32_t checksum;    // CRC-32 of the bytes that follow
  uint32_t companions;  // <split>.idx: companions_of() its .tok's and .raw's checksums; else 0
};
static_assert(sizeof(FileHeader) == 32, "the header format is 32 bytes");

// Opening checksums and checks the files in blocks of this many bytes, each still in the cache
// when it is checksummed just after being checked, and then handed back.
constexpr uint64_t kScanBlock = uint64_t{256} << 10;

const char* magic_of(const char* extension) {
  if (std::strcmp(extension, "tok") == 0) return "NMTZTOK";
  if (std::strcmp(extension, "idx") == 0) return "NMTZIDX";
  return "NMTZRAW";
}

FileHeader make_header(const char* extension, uint64_t count) {
  FileHeader header{};
  std::memcpy(header.magic, magic_of(extension), 8);
  header.version = kDatasetFormatVersion;
  header.byte_order = kByteOrderMark;
  header.count = count;
  return header;
}

// zlib's CRC-32 of `size` bytes, continuing `crc` (0 to start).
uint32_t checksum(uint32_t crc, const void* data, size_t size) {
  return static_cast<uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), size));
}

// What the index's header records of the token and text files written with it.
uint32_t companions_of(uint32_t tok_checksum, uint32_t raw_checksum) {
  const uint32_t both[2] = {tok_checksum, raw_checksum};
  return checksum(0, both, sizeof both);
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw DataError(
      fmt::format("binary dataset file '{}' is corrupt or truncated: {}; delete the "
                  "dataset folder or run nmtzoo-prepare --force to rebuild it",
                  path, what));
}

// The file's header, after checking it and that the file's size is exactly the header's plus
// `count` elements of `element_size`: nothing is sized by a count before this.
FileHeader checked_header(const MappedFile& file, const char* extension, size_t element_size) {
  if (file.size() < sizeof(FileHeader)) corrupt(file.path(), "shorter than its header");
  FileHeader header;
  std::memcpy(&header, file.data(), sizeof header);
  const FileHeader expected = make_header(extension, 0);
  if (std::memcmp(header.magic, expected.magic, 8) != 0) corrupt(file.path(), "wrong magic bytes");
  if (header.byte_order != kByteOrderMark) corrupt(file.path(), "written on a big-endian host");
  if (header.version != kDatasetFormatVersion) {
    corrupt(file.path(), fmt::format("format version {}, this nmtzoo reads {}", header.version,
                                     kDatasetFormatVersion));
  }
  const uint64_t payload = file.size() - sizeof(FileHeader);
  if (payload % element_size != 0 || payload / element_size != header.count) {
    corrupt(file.path(), fmt::format("its header announces {} elements but it holds {} bytes",
                                     header.count, payload));
  }
  if (std::strcmp(extension, "idx") != 0 && header.companions != 0) {
    corrupt(file.path(),
            fmt::format("its header's last field is {:08x}, not 0", header.companions));
  }
  return header;
}

// The bound below which an id read as unsigned lies in [0, vocab): a negative id becomes 2^31 or
// more, past any vocabulary.
uint32_t id_limit(int64_t vocab) {
  return static_cast<uint32_t>(std::clamp<int64_t>(vocab, 0, int64_t{1} << 31));
}

// Whether every id of ids[0, n) is below `limit`: a branch-free maximum, which the compiler can
// vectorise.
bool ids_below(const int32_t* ids, int64_t n, uint32_t limit) {
  uint32_t high = 0;
  for (int64_t i = 0; i < n; ++i) high = std::max(high, static_cast<uint32_t>(ids[i]));
  return n == 0 || high < limit;
}

// Offset of the first byte of text[0, n) that is NUL or not part of valid UTF-8 (RFC 3629: no
// overlong forms, surrogates or code points past U+10FFFF, as find_invalid_utf8 judges), or n.
// Eight ASCII bytes at a time, so Latin-script text costs little more than reading it.
size_t first_bad_text_byte(const char* text, size_t n) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s + i, sizeof word);
      if ((word & kHighs) == 0 && ((word - kOnes) & ~word & kHighs) == 0) {  // ASCII, no NUL
        i += 8;
        continue;
      }
    }
    const unsigned char c = s[i];
    if (c == 0) return i;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80;  // the range of the second byte (Unicode's table 3-7)
    unsigned char high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (n - i < length || s[i + 1] < low || s[i + 1] > high) return i;
    for (size_t k = 2; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return n;
}

// The checksum of a mapped file's payload, computed just behind a forward scan of it: a block is
// checksummed once the scan has passed it, while it is still in the cache, then its pages are
// handed back, so the scan and the checksum read the file once and the resident set stays flat.
class TrailingChecksum {
 public:
  explicit TrailingChecksum(const MappedFile& file) : file_(file) { advise(MADV_SEQUENTIAL); }
  ~TrailingChecksum() { advise(MADV_NORMAL); }
  TrailingChecksum(const TrailingChecksum&) = delete;
  TrailingChecksum& operator=(const TrailingChecksum&) = delete;

  // The scan has checked the payload's bytes before `scanned`.
  void advance(uint64_t scanned) {
    if (scanned - done_ >= kScanBlock) catch_up(scanned);
  }
  // The checksum of the payload, `size` bytes, once the scan has checked all of it.
  uint32_t finish(uint64_t size) {
    catch_up(size);
    return crc_;
  }

 private:
  void catch_up(uint64_t scanned) {
    crc_ = checksum(crc_, file_.data() + sizeof(FileHeader) + done_, scanned - done_);
    file_.release(sizeof(FileHeader) + done_, scanned - done_);
    done_ = scanned;
  }
  void advise(int advice) const {
    if (file_.data() != nullptr) ::madvise(const_cast<char*>(file_.data()), file_.size(), advice);
  }

  const MappedFile& file_;
  uint64_t done_ = 0;
  uint32_t crc_ = 0;
};

void check_checksum(const MappedFile& file, uint32_t actual, uint32_t recorded) {
  if (actual != recorded) {
    corrupt(file.path(),
            fmt::format("its {} bytes after the header have checksum {:08x}, its header "
                        "records {:08x}: they changed since they were written",
                        file.size() - sizeof(FileHeader), actual, recorded));
  }
}

}  // namespace

std::string dataset_file(const std::string& dir, const std::string& split, const char* extension) {
  return (fs::path(dir) / (split + "." + extension)).string();
}

// A buffered output file with a header whose count and checksums are filled in by close().
struct DatasetWriter::Output {
  std::string path;
  std::string partial;
  const char* extension;
  std::FILE* file = nullptr;
  uint32_t crc = 0;  // of what write() wrote

  Output(std::string final_path, const char* ext)
      : path(std::move(final_path)), partial(path + ".partial"), extension(ext) {
    file = std::fopen(partial.c_str(), "wb");
    if (file == nullptr)
      throw IoError(fmt::format("cannot create '{}': {}", partial, std::strerror(errno)));
    std::setvbuf(file, nullptr, _IOFBF, size_t{1} << 20);
    write_header(make_header(extension, 0));
  }
  ~Output() {
    if (file != nullptr) std::fclose(file);
    std::error_code ignored;
    fs::remove(partial, ignored);
  }
  void write(const void* data, size_t size) {
    if (size == 0) return;
    if (std::fwrite(data, 1, size, file) != size) fail();
    crc = checksum(crc, data, size);
  }
  void write_header(const FileHeader& header) {
    if (std::fwrite(&header, 1, sizeof header, file) != sizeof header) fail();
  }
  [[noreturn]] void fail() {
    throw IoError(fmt::format("writing '{}' failed: {}{}", path, std::strerror(errno),
                              errno == ENOSPC ? " (disk full?)" : ""));
  }
  void close(uint64_t count, uint32_t companions) {
    FileHeader header = make_header(extension, count);
    header.checksum = crc;
    header.companions = companions;
    if (std::fseek(file, 0, SEEK_SET) != 0) fail();
    write_header(header);
    if (std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0) fail();
    const int closed = std::fclose(file);
    file = nullptr;
    if (closed != 0) fail();
    std::error_code ec;
    fs::rename(partial, path, ec);
    if (ec)
      throw IoError(fmt::format("cannot rename '{}' to '{}': {}", partial, path, ec.message()));
  }
};

DatasetWriter::DatasetWriter(std::string dir, std::string split)
    : dir_(std::move(dir)), split_(std::move(split)) {
  fs::create_directories(dir_);
  tok_ = std::make_unique<Output>(dataset_file(dir_, split_, "tok"), "tok");
  idx_ = std::make_unique<Output>(dataset_file(dir_, split_, "idx"), "idx");
  raw_ = std::make_unique<Output>(dataset_file(dir_, split_, "raw"), "raw");
}

DatasetWriter::~DatasetWriter() = default;

void DatasetWriter::add(std::string_view src_text, std::string_view tgt_text,
                        const std::vector<int32_t>& src, const std::vector<int32_t>& tgt,
                        int64_t line) {
  IndexEntry entry{tokens_,
                   raw_bytes_,
                   line,
                   static_cast<int32_t>(src.size()),
                   static_cast<int32_t>(tgt.size()),
                   static_cast<int32_t>(src_text.size()),
                   static_cast<int32_t>(tgt_text.size())};
  tok_->write(src.data(), src.size() * sizeof(int32_t));
  tok_->write(tgt.data(), tgt.size() * sizeof(int32_t));
  raw_->write(src_text.data(), src_text.size());
  raw_->write(tgt_text.data(), tgt_text.size());
  idx_->write(&entry, sizeof entry);
  ++pairs_;
  tokens_ += static_cast<int64_t>(src.size() + tgt.size());
  raw_bytes_ += static_cast<int64_t>(src_text.size() + tgt_text.size());
}

void DatasetWriter::finish() {
  tok_->close(static_cast<uint64_t>(tokens_), 0);
  raw_->close(static_cast<uint64_t>(raw_bytes_), 0);
  // Last: an index without its data never appears.
  idx_->close(static_cast<uint64_t>(pairs_), companions_of(tok_->crc, raw_->crc));
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    throw IoError(fmt::format("cannot stat '{}': {}", path, std::strerror(errno)));
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
      ::close(fd);
      throw IoError(fmt::format("cannot map '{}': {}", path, std::strerror(errno)));
    }
    data_ = static_cast<const char*>(mapped);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::release() const {
  if (data_ != nullptr) ::madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

void MappedFile::release(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_ || length == 0) return;
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = offset / page * page;
  const size_t end = offset + std::min(length, size_ - offset);
  if (end > begin) ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

BinaryDataset::BinaryDataset(const std::string& dir, const std::string& split, int64_t src_vocab,
                             int64_t tgt_vocab)
    : src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {
  tok_ = std::make_unique<MappedFile>(dataset_file(dir, split, "tok"));
  idx_ = std::make_unique<MappedFile>(dataset_file(dir, split, "idx"));
  raw_ = std::make_unique<MappedFile>(dataset_file(dir, split, "raw"));
  const FileHeader tok = checked_header(*tok_, "tok", sizeof(int32_t));
  const FileHeader idx = checked_header(*idx_, "idx", sizeof(IndexEntry));
  const FileHeader raw = checked_header(*raw_, "raw", 1);
  if (idx.companions != companions_of(tok.checksum, raw.checksum)) {
    corrupt(idx_->path(), fmt::format("'{}' and '{}' are not the files it was written with (their "
                                      "headers' checksums are not those it records): files of "
                                      "another preparation, or a changed header",
                                      tok_->path(), raw_->path()));
  }
  // The counts are those of the files' sizes now: what they size is no larger than the files.
  token_count_ = static_cast<int64_t>(tok.count);
  raw_bytes_ = static_cast<int64_t>(raw.count);
  src_lengths_.resize(idx.count);
  tgt_lengths_.resize(idx.count);
  verify(idx.checksum, tok.checksum, raw.checksum);
}

// One forward pass over the three files, pair by pair: each index entry is checked before anything
// is read through it, then the pair's ids and text; each file's checksum trails just behind.
void BinaryDataset::verify(uint32_t idx_checksum, uint32_t tok_checksum, uint32_t raw_checksum) {
  const char* index = idx_->data() + sizeof(FileHeader);
  const auto* ids = reinterpret_cast<const int32_t*>(tok_->data() + sizeof(FileHeader));
  const char* text = raw_->data() + sizeof(FileHeader);
  const uint32_t src_limit = id_limit(src_vocab_);
  const uint32_t tgt_limit = id_limit(tgt_vocab_);
  TrailingChecksum idx_crc(*idx_);
  TrailingChecksum tok_crc(*tok_);
  TrailingChecksum raw_crc(*raw_);
  int64_t next_token = 0;
  int64_t next_byte = 0;
  for (int64_t i = 0; i < size(); ++i) {
    IndexEntry e;
    std::memcpy(&e, index + i * static_cast<int64_t>(sizeof e), sizeof e);
    if (e.token_offset != next_token || e.raw_offset != next_byte || e.src_len < 0 ||
        e.tgt_len < 0 || e.src_bytes < 0 || e.tgt_bytes < 0) {
      corrupt(idx_->path(), fmt::format("entry {} does not follow entry {}", i + 1, i));
    }
    if (e.line < 1)
      corrupt(idx_->path(), fmt::format("entry {} gives input line {}", i + 1, e.line));
    const int64_t token_end = next_token + e.src_len + e.tgt_len;
    const int64_t byte_end = next_byte + e.src_bytes + e.tgt_bytes;
    if (token_end > token_count_) {
      corrupt(idx_->path(), fmt::format("entry {} reaches id {}, past the {} ids of '{}'", i + 1,
                                        token_end, token_count_, tok_->path()));
    }
    if (byte_end > raw_bytes_) {
      corrupt(idx_->path(),
              fmt::format("entry {} reaches byte {}, past the {} bytes of text of '{}'", i + 1,
                          byte_end, raw_bytes_, raw_->path()));
    }
    for (const bool target : {false, true}) {
      const int64_t begin = target ? next_token + e.src_len : next_token;
      const int64_t n = target ? e.tgt_len : e.src_len;
      const uint32_t limit = target ? tgt_limit : src_limit;
      if (ids_below(ids + begin, n, limit)) continue;
      int64_t k = begin;
      while (static_cast<uint32_t>(ids[k]) < limit) ++k;
      corrupt(tok_->path(),
              fmt::format("pair {} (input line {}) holds id {} at byte offset {}, outside the "
                          "{} vocabulary of {}",
                          i + 1, e.line, ids[k], sizeof(FileHeader) + 4 * k,
                          target ? "target" : "source", target ? tgt_vocab_ : src_vocab_));
    }
    for (const bool target : {false, true}) {
      const int64_t begin = target ? next_byte + e.src_bytes : next_byte;
      const auto n = static_cast<size_t>(target ? e.tgt_bytes : e.src_bytes);
      const size_t bad = first_bad_text_byte(text + begin, n);
      if (bad == n) continue;
      corrupt(
          raw_->path(),
          fmt::format("the {} text of pair {} (input line {}) has {} at byte offset {}",
                      target ? "target" : "source", i + 1, e.line,
                      text[begin + static_cast<int64_t>(bad)] == 0 ? "a NUL byte" : "invalid UTF-8",
                      sizeof(FileHeader) + begin + bad));
    }
    src_lengths_[static_cast<size_t>(i)] = e.src_len;
    tgt_lengths_[static_cast<size_t>(i)] = e.tgt_len;
    next_token = token_end;
    next_byte = byte_end;
    idx_crc.advance(static_cast<uint64_t>(i + 1) * sizeof e);
    tok_crc.advance(static_cast<uint64_t>(next_token) * sizeof(int32_t));
    raw_crc.advance(static_cast<uint64_t>(next_byte));
  }
  if (next_token != token_count_) {
    corrupt(idx_->path(), fmt::format("its entries cover {} ids, '{}' holds {}", next_token,
                                      tok_->path(), token_count_));
  }
  if (next_byte != raw_bytes_) {
    corrupt(idx_->path(), fmt::format("its entries cover {} bytes of text, '{}' holds {}",
                                      next_byte, raw_->path(), raw_bytes_));
  }
  check_checksum(*idx_, idx_crc.finish(static_cast<uint64_t>(size()) * sizeof(IndexEntry)),
                 idx_checksum);
  check_checksum(*tok_, tok_crc.finish(static_cast<uint64_t>(token_count_) * sizeof(int32_t)),
                 tok_checksum);
  check_checksum(*raw_, raw_crc.finish(static_cast<uint64_t>(raw_bytes_)), raw_checksum);
}

BinaryDataset::~BinaryDataset() = default;

IndexEntry BinaryDataset::entry(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw std::out_of_range(fmt::format("pair {} of a dataset of {}", index, size()));
  }
  IndexEntry e;
  std::memcpy(&e, idx_->data() + sizeof(FileHeader) + index * static_cast<int64_t>(sizeof e),
              sizeof e);
  const auto i = static_cast<size_t>(index);
  if (e.src_len != src_lengths_[i] || e.tgt_len != tgt_lengths_[i] || e.token_offset < 0 ||
      e.token_offset > token_count_ - e.src_len - e.tgt_len || e.src_bytes < 0 || e.tgt_bytes < 0 ||
      e.raw_offset < 0 || e.raw_offset > raw_bytes_ - e.src_bytes - e.tgt_bytes) {
    corrupt(idx_->path(), fmt::format("entry {} changed since the dataset was opened", index + 1));
  }
  return e;
}

void BinaryDataset::check_pair_range(int64_t begin, int64_t end, const std::string& source) const {
  if (begin < 0 || begin > end || end > size()) {
    throw DataError(
        fmt::format("{} gives pairs [{}, {}), but binary dataset file '{}' holds {} "
                    "pairs; delete the dataset folder or run nmtzoo-prepare --force to "
                    "rebuild it",
                    source, begin, end, idx_->path(), size()));
  }
}

void BinaryDataset::check_ids(const TokenSpan& span, int64_t vocab, int64_t index) const {
  for (int32_t id : span) {
    if (id < 0 || id >= vocab) {
      corrupt(tok_->path(), fmt::format("pair {} holds id {}, outside the vocabulary of {} (the "
                                        "file changed since the dataset was opened)",
                                        index + 1, id, vocab));
    }
  }
}

std::vector<PairTokens> BinaryDataset::pairs(const std::vector<int64_t>& indices) const {
  // Random pairs of a large file each fault in a page of ids and one of the index, and the kernel
  // maps up to 64 KB around each fault: a batch maps ~20 MB, which would pile up over an epoch.
  if (touched_) {
    tok_->release();
    idx_->release();
    raw_->release();  // read by subword sampling
  }
  touched_ = !indices.empty();
  const auto* ids = reinterpret_cast<const int32_t*>(tok_->data() + sizeof(FileHeader));
  std::vector<PairTokens> result;
  result.reserve(indices.size());
  for (int64_t index : indices) {
    const IndexEntry e = entry(index);
    PairTokens pair{{ids + e.token_offset, static_cast<size_t>(e.src_len)},
                    {ids + e.token_offset + e.src_len, static_cast<size_t>(e.tgt_len)}};
    check_ids(pair.src, src_vocab_, index);
    check_ids(pair.tgt, tgt_vocab_, index);
    result.push_back(pair);
  }
  return result;
}

std::string BinaryDataset::src_text(int64_t index) const {
  const IndexEntry e = entry(index);
  touched_ = true;
  return std::string(raw_->data() + sizeof(FileHeader) + e.raw_offset,
                     static_cast<size_t>(e.src_bytes));
}

std::string BinaryDataset::tgt_text(int64_t index) const {
  const IndexEntry e = entry(index);
  touched_ = true;
  return std::string(raw_->data() + sizeof(FileHeader) + e.raw_offset + e.src_bytes,
                     static_cast<size_t>(e.tgt_bytes));
}

int64_t BinaryDataset::line(int64_t index) const { return entry(index).line; }

void reseal_dataset_for_testing(const std::string& dir, const std::string& split) {
  // Rewrites one file's checksum (and the index's record of the other two); returns the checksum.
  auto reseal = [&](const char* extension, std::optional<uint32_t> companions) -> uint32_t {
    std::fstream file(dataset_file(dir, split, extension),
                      std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (!file.is_open() || bytes.size() < sizeof(FileHeader)) return 0;
    const uint32_t crc =
        checksum(0, bytes.data() + sizeof(FileHeader), bytes.size() - sizeof(FileHeader));
    file.clear();
    file.seekp(offsetof(FileHeader, checksum));
    file.write(reinterpret_cast<const char*>(&crc), sizeof crc);
    if (companions) file.write(reinterpret_cast<const char*>(&*companions), sizeof *companions);
    return crc;
  };
  const uint32_t tok = reseal("tok", std::nullopt);
  const uint32_t raw = reseal("raw", std::nullopt);
  reseal("idx", companions_of(tok, raw));
}

}  // namespace nmtzoo
