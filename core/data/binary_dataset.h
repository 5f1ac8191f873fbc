// The binary form of a tokenized parallel split, written once by nmtzoo-prepare and memory-mapped
// by training (the idea of fairseq's MMapIndexedDataset: tokens in one flat file, an index of
// offsets and lengths beside it). Three files per split, each with a 32-byte header:
//
//   <split>.tok  int32 token ids: each pair's source ids, then its target ids (no BOS/EOS)
//   <split>.idx  one 40-byte IndexEntry per pair
//   <split>.raw  each pair's source text, then its target text (UTF-8, no newline), so subword
//                sampling can re-segment a sentence without a second data path
//
// Only the lengths are read into memory; tokens and text stay on disk, and the pages a batch
// touched are handed back to the page cache (MADV_DONTNEED) when the next batch is read, so the
// resident set stays flat however large the corpus. Little-endian, as every host LibTorch runs on.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nmtzoo {

// A view of token ids stored elsewhere.
struct TokenSpan {
  const int32_t* data = nullptr;
  size_t size = 0;
  const int32_t* begin() const { return data; }
  const int32_t* end() const { return data + size; }
};

struct PairTokens {
  TokenSpan src;
  TokenSpan tgt;
};

struct IndexEntry {
  int64_t token_offset;  // into <split>.tok's ids
  int64_t raw_offset;    // into <split>.raw's bytes
  int64_t line;          // 1-based line in the input files
  int32_t src_len;       // tokens
  int32_t tgt_len;
  int32_t src_bytes;     // text
  int32_t tgt_bytes;
};
static_assert(sizeof(IndexEntry) == 40, "the index format is 40 bytes a pair");

inline constexpr uint32_t kDatasetFormatVersion = 1;

// The three file names of `split` in `dir`.
std::string dataset_file(const std::string& dir, const std::string& split, const char* extension);

// Appends pairs to <dir>/<split>.{tok,idx,raw}.partial; finish() writes the headers' counts and
// renames them into place. A writer destroyed before finish() removes its partial files.
class DatasetWriter {
 public:
  DatasetWriter(std::string dir, std::string split);
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  void add(std::string_view src_text, std::string_view tgt_text, const std::vector<int32_t>& src,
           const std::vector<int32_t>& tgt, int64_t line);
  void finish();  // throws IoError naming the file on a failed write (a full disk)

  int64_t pairs() const { return pairs_; }
  int64_t tokens() const { return tokens_; }
  int64_t raw_bytes() const { return raw_bytes_; }

 private:
  struct Output;
  std::string dir_;
  std::string split_;
  std::unique_ptr<Output> tok_;
  std::unique_ptr<Output> idx_;
  std::unique_ptr<Output> raw_;
  int64_t pairs_ = 0;
  int64_t tokens_ = 0;
  int64_t raw_bytes_ = 0;
};

// A read-only memory map of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws IoError naming the file
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Drops the mapped pages from this process's resident set (they stay in the page cache).
  void release() const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// One prepared split, opened for reading. Opening checks the headers, the file sizes against the
// counts, and that the index's offsets tile the token and text files exactly: a truncated or
// corrupt file is a DataError naming it.
class BinaryDataset {
 public:
  // `vocab_sizes` {source, target}: ids are checked against them as pairs are read.
  BinaryDataset(const std::string& dir, const std::string& split, int64_t src_vocab, int64_t tgt_vocab);
  ~BinaryDataset();

  int64_t size() const { return static_cast<int64_t>(src_lengths_.size()); }
  int64_t token_count() const { return token_count_; }
  const std::vector<int32_t>& src_lengths() const { return src_lengths_; }
  const std::vector<int32_t>& tgt_lengths() const { return tgt_lengths_; }

  // Views of pairs `indices`, valid until the next call (which may hand the pages back).
  std::vector<PairTokens> pairs(const std::vector<int64_t>& indices) const;
  std::string src_text(int64_t index) const;
  std::string tgt_text(int64_t index) const;
  int64_t line(int64_t index) const;

 private:
  const IndexEntry& entry(int64_t index) const;
  void check_ids(const TokenSpan& span, int64_t vocab, int64_t index) const;

  std::unique_ptr<MappedFile> tok_;
  std::unique_ptr<MappedFile> idx_;
  std::unique_ptr<MappedFile> raw_;
  std::vector<int32_t> src_lengths_;
  std::vector<int32_t> tgt_lengths_;
  int64_t token_count_ = 0;
  int64_t src_vocab_ = 0;
  int64_t tgt_vocab_ = 0;
  mutable std::atomic<bool> touched_{false};  // text may be read from several threads
};

}  // namespace nmtzoo
