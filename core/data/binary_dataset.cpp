#include "core/data/binary_dataset.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/data/corpus.h"
#include "core/io/text_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kByteOrderMark = 0x01020304;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint64_t count;  // ids, pairs or bytes that follow
  uint64_t reserved;
};
static_assert(sizeof(FileHeader) == 32, "the header format is 32 bytes");

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

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw DataError(fmt::format("binary dataset file '{}' is corrupt or truncated: {}; delete the "
                              "dataset folder or run nmtzoo-prepare --force to rebuild it",
                              path, what));
}

// The file's element count, after checking its header and that its size is exactly the header's
// plus `count` elements of `element_size`.
uint64_t checked_count(const MappedFile& file, const char* extension, size_t element_size) {
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
  return header.count;
}

}  // namespace

std::string dataset_file(const std::string& dir, const std::string& split, const char* extension) {
  return (fs::path(dir) / (split + "." + extension)).string();
}

// A buffered output file with a header whose count is filled in by close().
struct DatasetWriter::Output {
  std::string path;
  std::string partial;
  const char* extension;
  std::FILE* file = nullptr;

  Output(std::string final_path, const char* ext)
      : path(std::move(final_path)), partial(path + ".partial"), extension(ext) {
    file = std::fopen(partial.c_str(), "wb");
    if (file == nullptr) throw IoError(fmt::format("cannot create '{}': {}", partial, std::strerror(errno)));
    std::setvbuf(file, nullptr, _IOFBF, size_t{1} << 20);
    FileHeader header = make_header(extension, 0);
    write(&header, sizeof header);
  }
  ~Output() {
    if (file != nullptr) std::fclose(file);
    std::error_code ignored;
    fs::remove(partial, ignored);
  }
  void write(const void* data, size_t size) {
    if (size > 0 && std::fwrite(data, 1, size, file) != size) fail();
  }
  [[noreturn]] void fail() {
    throw IoError(fmt::format("writing '{}' failed: {}{}", path, std::strerror(errno),
                              errno == ENOSPC ? " (disk full?)" : ""));
  }
  void close(uint64_t count) {
    FileHeader header = make_header(extension, count);
    if (std::fseek(file, 0, SEEK_SET) != 0) fail();
    write(&header, sizeof header);
    if (std::fflush(file) != 0 || ::fsync(::fileno(file)) != 0) fail();
    const int closed = std::fclose(file);
    file = nullptr;
    if (closed != 0) fail();
    std::error_code ec;
    fs::rename(partial, path, ec);
    if (ec) throw IoError(fmt::format("cannot rename '{}' to '{}': {}", partial, path, ec.message()));
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
  tok_->close(static_cast<uint64_t>(tokens_));
  raw_->close(static_cast<uint64_t>(raw_bytes_));
  idx_->close(static_cast<uint64_t>(pairs_));  // last: an index without its data never appears
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

BinaryDataset::BinaryDataset(const std::string& dir, const std::string& split, int64_t src_vocab,
                             int64_t tgt_vocab)
    : src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {
  tok_ = std::make_unique<MappedFile>(dataset_file(dir, split, "tok"));
  idx_ = std::make_unique<MappedFile>(dataset_file(dir, split, "idx"));
  raw_ = std::make_unique<MappedFile>(dataset_file(dir, split, "raw"));
  const uint64_t tokens = checked_count(*tok_, "tok", sizeof(int32_t));
  const uint64_t pairs = checked_count(*idx_, "idx", sizeof(IndexEntry));
  const uint64_t bytes = checked_count(*raw_, "raw", 1);
  token_count_ = static_cast<int64_t>(tokens);
  src_lengths_.resize(pairs);
  tgt_lengths_.resize(pairs);
  int64_t next_token = 0;
  int64_t next_byte = 0;
  for (uint64_t i = 0; i < pairs; ++i) {
    const IndexEntry& e = entry(static_cast<int64_t>(i));
    if (e.token_offset != next_token || e.raw_offset != next_byte || e.src_len < 0 ||
        e.tgt_len < 0 || e.src_bytes < 0 || e.tgt_bytes < 0) {
      corrupt(idx_->path(), fmt::format("entry {} does not follow entry {}", i + 1, i));
    }
    next_token += int64_t{e.src_len} + e.tgt_len;
    next_byte += int64_t{e.src_bytes} + e.tgt_bytes;
    src_lengths_[i] = e.src_len;
    tgt_lengths_[i] = e.tgt_len;
  }
  if (next_token != static_cast<int64_t>(tokens)) {
    corrupt(tok_->path(), fmt::format("the index covers {} ids, the file holds {}", next_token, tokens));
  }
  if (next_byte != static_cast<int64_t>(bytes)) {
    corrupt(raw_->path(), fmt::format("the index covers {} bytes, the file holds {}", next_byte, bytes));
  }
  idx_->release();
}

BinaryDataset::~BinaryDataset() = default;

const IndexEntry& BinaryDataset::entry(int64_t index) const {
  return reinterpret_cast<const IndexEntry*>(idx_->data() + sizeof(FileHeader))[index];
}

void BinaryDataset::check_ids(const TokenSpan& span, int64_t vocab, int64_t index) const {
  for (int32_t id : span) {
    if (id < 0 || id >= vocab) {
      corrupt(tok_->path(), fmt::format("pair {} holds id {}, outside the vocabulary of {}",
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
    if (index < 0 || index >= size()) {
      throw std::out_of_range(fmt::format("pair {} of a dataset of {}", index, size()));
    }
    const IndexEntry& e = entry(index);
    PairTokens pair{{ids + e.token_offset, static_cast<size_t>(e.src_len)},
                    {ids + e.token_offset + e.src_len, static_cast<size_t>(e.tgt_len)}};
    check_ids(pair.src, src_vocab_, index);
    check_ids(pair.tgt, tgt_vocab_, index);
    result.push_back(pair);
  }
  return result;
}

std::string BinaryDataset::src_text(int64_t index) const {
  touched_ = true;
  const IndexEntry& e = entry(index);
  return std::string(raw_->data() + sizeof(FileHeader) + e.raw_offset, static_cast<size_t>(e.src_bytes));
}

std::string BinaryDataset::tgt_text(int64_t index) const {
  touched_ = true;
  const IndexEntry& e = entry(index);
  return std::string(raw_->data() + sizeof(FileHeader) + e.raw_offset + e.src_bytes,
                     static_cast<size_t>(e.tgt_bytes));
}

int64_t BinaryDataset::line(int64_t index) const { return entry(index).line; }

}  // namespace nmtzoo
