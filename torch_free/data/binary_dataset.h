// SPDX-License-Identifier: MIT
// The binary form of a tokenized parallel split, written once by nmtzoo-prepare and memory-mapped
// by training (the idea of fairseq's MMapIndexedDataset: tokens in one flat file, an index of
// offsets and lengths beside it). Three files per split, each with a 32-byte header (magic, format
// version, byte order, count, the CRC-32 of the bytes that follow it; the index's header also
// holds a CRC-32 of the other two files' checksums, so the three files of one preparation belong
// together):
//
//   <split>.tok  int32 token ids: each pair's source ids, then its target ids (no BOS/EOS)
//   <split>.idx  one 40-byte IndexEntry per pair
//   <split>.raw  each pair's source text, then its target text (UTF-8, no newline), so subword
//                sampling can re-segment a sentence without a second data path
//
// Opening a split does not trust the files: in one forward pass over the three of them it checks
// the headers against the file sizes, that the index's entries tile the token and text files in
// order (each entry before anything is read through it), every id against its vocabulary, every
// side's text as UTF-8 without NUL bytes, and each file's checksum. After that only the lengths are
// kept in memory; tokens and text stay on disk, and the pages a batch touched are handed back to
// the page cache (MADV_DONTNEED) when the next batch is read, so the resident set stays flat
// however large the corpus. Little-endian, as every host LibTorch runs on.
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
  int32_t src_bytes;  // text
  int32_t tgt_bytes;
};
static_assert(sizeof(IndexEntry) == 40, "the index format is 40 bytes a pair");

// 2 added the checksums. A dataset of another version is stale (dataset_staleness), so
// nmtzoo-prepare and nmtzoo-train prepare it again by themselves; opened directly, it is refused.
inline constexpr uint32_t kDatasetFormatVersion = 2;

// The three file names of `split` in `dir`.
std::string dataset_file(const std::string& dir, const std::string& split, const char* extension);

// Appends pairs to <dir>/<split>.{tok,idx,raw}.partial; finish() writes the headers' counts and
// checksums and renames them into place. A writer destroyed before finish() removes its partial
// files. The text must be valid UTF-8 without NUL bytes (nmtzoo-prepare checks it before adding a
// pair): a reader refuses anything else.
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
  // The same for the pages holding bytes [offset, offset + length).
  void release(size_t offset, size_t length) const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// One prepared split, opened for reading. Opening checks everything the files allow to check (see
// the top of this file), at the cost of one pass over them; a truncated, corrupt or mismatched
// file is a DataError naming it (and the pair, input line or byte where there is one) and saying
// how to rebuild the dataset.
class BinaryDataset {
 public:
  // Ids of the source sides must lie in [0, src_vocab), those of the target sides in [0,
  // tgt_vocab).
  BinaryDataset(const std::string& dir, const std::string& split, int64_t src_vocab,
                int64_t tgt_vocab);
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

  // Throws a DataError unless pairs [begin, end) exist in this split: for ranges read from
  // elsewhere (a corpus's range in dataset.json), to be checked before anything is sized or
  // indexed by them. `source` says where the range comes from, for the message.
  void check_pair_range(int64_t begin, int64_t end, const std::string& source) const;

 private:
  // Pair `index`'s entry, after checking that it still lies within the files (they are mapped
  // shared: a file changed in place after opening must not make a read leave the mapping).
  IndexEntry entry(int64_t index) const;
  void check_ids(const TokenSpan& span, int64_t vocab, int64_t index) const;
  void verify(uint32_t idx_checksum, uint32_t tok_checksum, uint32_t raw_checksum);

  std::unique_ptr<MappedFile> tok_;
  std::unique_ptr<MappedFile> idx_;
  std::unique_ptr<MappedFile> raw_;
  std::vector<int32_t> src_lengths_;
  std::vector<int32_t> tgt_lengths_;
  int64_t token_count_ = 0;
  int64_t raw_bytes_ = 0;
  int64_t src_vocab_ = 0;
  int64_t tgt_vocab_ = 0;
  mutable std::atomic<bool> touched_{false};  // text may be read from several threads
};

// Rewrites the checksums in the headers of <dir>/<split>.{tok,idx,raw} to match their contents, as
// a writer would have. For tests and the fuzz target only, which damage a dataset on purpose and
// need the checks behind the checksums to see the damage; files shorter than a header are left
// as they are.
void reseal_dataset_for_testing(const std::string& dir, const std::string& split);

}  // namespace nmtzoo
