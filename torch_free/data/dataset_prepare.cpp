// SPDX-License-Identifier: MIT
#include "torch_free/data/dataset_prepare.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <ostream>

#include "torch_free/common/cpu_cores.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/progress.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kChunkPairs = 2048;
const char* const kSplitExtensions[] = {"tok", "idx", "raw"};

// A run of consecutive input lines, tokenized and judged by a worker thread.
struct Chunk {
  int64_t first_line = 0;
  std::vector<std::string> src;
  std::vector<std::string> tgt;
  std::vector<std::vector<int32_t>> src_ids;
  std::vector<std::vector<int32_t>> tgt_ids;
  std::vector<FilterVerdict> verdicts;
  std::vector<bool>
      unusable;  // invalid UTF-8 or a NUL byte (skipped under data.invalid_utf8: skip)
};

struct SplitSource {
  std::string src_path;
  std::string tgt_path;
  InvalidUtf8Policy policy;
  std::optional<FilterOptions> filter;  // none for the validation set: every pair is kept
  std::vector<int32_t> src_prefix;      // before every source: a multilingual run's target tag
};

void process(Chunk& chunk, const SplitSource& source, const Tokenizers& tokenizers) {
  const size_t n = chunk.src.size();
  chunk.src_ids.resize(n);
  chunk.tgt_ids.resize(n);
  chunk.verdicts.assign(n, FilterVerdict::kKept);
  chunk.unusable.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    std::string problem =
        pair_text_problem(chunk.src[i], chunk.tgt[i], source.src_path, source.tgt_path,
                          chunk.first_line + static_cast<int64_t>(i));
    if (!problem.empty()) {
      if (source.policy == InvalidUtf8Policy::kError) throw DataError(problem);
      chunk.unusable[i] = true;
      continue;
    }
    chunk.src_ids[i] = source.src_prefix;
    const std::vector<int32_t> ids = tokenizers.src->encode(chunk.src[i]);
    chunk.src_ids[i].insert(chunk.src_ids[i].end(), ids.begin(), ids.end());
    chunk.tgt_ids[i] = tokenizers.tgt->encode(chunk.tgt[i]);
    if (source.filter) {
      chunk.verdicts[i] =
          classify_pair(static_cast<int64_t>(chunk.src_ids[i].size()),
                        static_cast<int64_t>(chunk.tgt_ids[i].size()), *source.filter);
    }
  }
}

// Streams one pair of files through `threads` tokenizing workers into `writer`, in input order.
// At most threads + 1 chunks are in memory at a time, whatever the corpus size.
PreparedCorpus prepare_split(const SplitSource& source, const Tokenizers& tokenizers,
                             DatasetWriter& writer, int64_t threads, ProgressMeter& meter,
                             int64_t& pairs_done, int64_t bytes_before, int64_t bytes_total) {
  PreparedCorpus summary;
  summary.begin = writer.pairs();
  ParallelLineReader reader(source.src_path, source.tgt_path);
  std::deque<std::pair<std::shared_ptr<Chunk>, std::future<void>>> in_flight;
  auto write_front = [&] {
    auto [chunk, done] = std::move(in_flight.front());
    in_flight.pop_front();
    done.get();  // rethrows a worker's DataError: the first bad line in input order wins
    for (size_t i = 0; i < chunk->src.size(); ++i) {
      ++summary.lines;
      if (chunk->unusable[i]) {
        ++summary.invalid_utf8_skipped;
        continue;
      }
      summary.filtered.count(chunk->verdicts[i]);
      if (chunk->verdicts[i] != FilterVerdict::kKept) continue;
      writer.add(chunk->src[i], chunk->tgt[i], chunk->src_ids[i], chunk->tgt_ids[i],
                 chunk->first_line + static_cast<int64_t>(i));
    }
    pairs_done += static_cast<int64_t>(chunk->src.size());
    const int64_t bytes = bytes_before + reader.src().file_offset() + reader.tgt().file_offset();
    if (bytes > 0) {
      meter.estimate_total(
          static_cast<int64_t>(static_cast<double>(pairs_done) * static_cast<double>(bytes_total) /
                               static_cast<double>(bytes)));
    }
    meter.update(pairs_done);
  };
  // One chunk more than workers, so a worker is busy while the oldest chunk is written.
  const auto max_in_flight = static_cast<size_t>(threads + 1);
  bool more = true;
  while (true) {
    while (more && in_flight.size() < max_in_flight) {
      auto chunk = std::make_shared<Chunk>();
      chunk->first_line = reader.line_number() + 1;
      std::string src, tgt;
      while (chunk->src.size() < kChunkPairs && (more = reader.next(src, tgt))) {
        chunk->src.push_back(std::move(src));
        chunk->tgt.push_back(std::move(tgt));
      }
      if (chunk->src.empty()) break;
      auto done = std::async(std::launch::async, [chunk, &source, &tokenizers] {
        process(*chunk, source, tokenizers);
      });
      in_flight.emplace_back(std::move(chunk), std::move(done));
    }
    if (in_flight.empty()) break;
    write_front();
  }
  summary.end = writer.pairs();
  return summary;
}

// Nanoseconds since the Unix epoch (std::filesystem's file clock has another epoch in C++17).
int64_t mtime_ns(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw IoError("cannot stat '" + path + "': " + std::strerror(errno));
  return static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
}

std::vector<std::string> file_names() {
  std::vector<std::string> names;
  for (const char* split : {"train", "valid"}) {
    for (const char* extension : kSplitExtensions)
      names.push_back(std::string(split) + "." + extension);
  }
  return names;
}

json to_json(const FilterStats& s) {
  return {{"input", s.input},
          {"empty", s.empty},
          {"too_long", s.too_long},
          {"bad_ratio", s.bad_ratio},
          {"kept", s.kept}};
}

FilterStats filter_stats_from(const json& j) {
  FilterStats s;
  s.input = j.at("input");
  s.empty = j.at("empty");
  s.too_long = j.at("too_long");
  s.bad_ratio = j.at("bad_ratio");
  s.kept = j.at("kept");
  return s;
}

json to_json(const DatasetManifest& m) {
  json inputs = json::array();
  for (const auto& f : m.inputs)
    inputs.push_back({{"path", f.path}, {"size", f.size}, {"mtime_ns", f.mtime_ns}});
  json corpora = json::array();
  for (const auto& c : m.corpora) {
    corpora.push_back({{"split", c.split},
                       {"begin", c.begin},
                       {"end", c.end},
                       {"lines", c.lines},
                       {"invalid_utf8_skipped", c.invalid_utf8_skipped},
                       {"filtered", to_json(c.filtered)}});
  }
  json files = json::object();
  for (const auto& [name, size] : m.files) files[name] = size;
  return {{"format", m.format},
          {"config_hash", m.config_hash},
          {"tokenizer_fingerprint", m.tokenizer_fingerprint},
          {"inputs", inputs},
          {"corpora", corpora},
          {"train_pairs", m.train_pairs},
          {"train_tokens", m.train_tokens},
          {"valid_pairs", m.valid_pairs},
          {"files", files},
          {"seconds", m.seconds},
          {"threads", m.threads}};
}

DatasetManifest manifest_from(const json& j) {
  DatasetManifest m;
  m.format = j.at("format");
  m.config_hash = j.at("config_hash");
  m.tokenizer_fingerprint = j.at("tokenizer_fingerprint");
  for (const auto& f : j.at("inputs"))
    m.inputs.push_back({f.at("path"), f.at("size"), f.at("mtime_ns")});
  for (const auto& c : j.at("corpora")) {
    m.corpora.push_back({c.at("split"), c.at("begin"), c.at("end"), c.at("lines"),
                         c.at("invalid_utf8_skipped"), filter_stats_from(c.at("filtered"))});
  }
  m.train_pairs = j.at("train_pairs");
  m.train_tokens = j.at("train_tokens");
  m.valid_pairs = j.at("valid_pairs");
  for (const auto& [name, size] : j.at("files").items())
    m.files.emplace_back(name, size.get<int64_t>());
  m.seconds = j.at("seconds");
  m.threads = j.at("threads");
  return m;
}

}  // namespace

std::string dataset_config_hash(const RunConfig& config) {
  const DataConfig& d = config.data;
  std::string key = fmt::format("format {}|{}|{}|{}|{}|{}|{}|{}", kDatasetFormatVersion,
                                fs::absolute(d.dir).lexically_normal().string(), d.src_lang,
                                d.tgt_lang, d.valid, d.max_len, d.max_len_ratio,
                                d.invalid_utf8 == InvalidUtf8Policy::kError ? "error" : "skip");
  for (const auto& corpus : d.train) key += "|" + corpus.split;
  for (const auto& direction : d.directions) key += "|direction " + direction;
  uint64_t hash = 1469598103934665603ULL;
  for (char byte : key) hash = (hash ^ static_cast<unsigned char>(byte)) * 1099511628211ULL;
  return fmt::format("{:016x}", hash);
}

std::vector<InputFile> dataset_inputs(const RunConfig& config) {
  std::vector<std::string> splits;
  for (const auto& corpus : config.data.train) splits.push_back(corpus.split);
  splits.push_back(config.data.valid);
  std::vector<InputFile> inputs;
  std::vector<std::string> langs;  // every language of the run's directions, each once
  for (const auto& pair : config.language_pairs()) {
    for (const auto& lang : {pair.src, pair.tgt}) {
      if (std::find(langs.begin(), langs.end(), lang) == langs.end()) langs.push_back(lang);
    }
  }
  for (const auto& split : splits) {
    for (const auto& lang : langs) {
      const std::string path = config.corpus_path(split, lang);
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) throw IoError("cannot open '" + path + "': no such file");
      inputs.push_back({fs::absolute(path).lexically_normal().string(),
                        static_cast<int64_t>(fs::file_size(path)), mtime_ns(path)});
    }
  }
  return inputs;
}

DatasetManifest read_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kManifestName).string();
  std::ifstream in(path);
  if (!in) throw DataError("no prepared dataset at '" + dir + "' (missing " + kManifestName + ")");
  DatasetManifest manifest;
  try {
    manifest = manifest_from(json::parse(in));
  } catch (const json::exception& e) {
    throw DataError(fmt::format("binary dataset manifest '{}' is corrupt: {}", path, e.what()));
  }
  for (const auto& [name, size] : manifest.files) {
    const fs::path file = fs::path(dir) / name;
    std::error_code ec;
    const auto actual = fs::file_size(file, ec);
    if (ec || static_cast<int64_t>(actual) != size) {
      throw DataError(
          fmt::format("binary dataset file '{}' is {} (the manifest records {} bytes); "
                      "delete the dataset folder or run nmtzoo-prepare --force",
                      file.string(), ec ? "missing" : fmt::format("{} bytes", actual), size));
    }
  }
  return manifest;
}

std::string dataset_staleness(const RunConfig& config, const std::string& tokenizer_fingerprint) {
  const std::string dir = config.dataset_dir();
  const fs::path manifest_path = fs::path(dir) / kManifestName;
  if (!fs::exists(manifest_path)) return "no prepared dataset in '" + dir + "'";
  DatasetManifest manifest;
  try {
    std::ifstream in(manifest_path);
    manifest = manifest_from(json::parse(in));
  } catch (const json::exception&) {
    return "its manifest '" + manifest_path.string() + "' is unreadable";
  }
  if (manifest.format != kDatasetFormatVersion) {
    return fmt::format("it has format version {}, this nmtzoo writes {}", manifest.format,
                       kDatasetFormatVersion);
  }
  if (manifest.config_hash != dataset_config_hash(config)) return "the data config changed";
  if (manifest.tokenizer_fingerprint != tokenizer_fingerprint) return "the tokenizer changed";
  const auto inputs = dataset_inputs(config);
  if (inputs.size() != manifest.inputs.size()) return "the input files changed";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputFile& now = inputs[i];
    const InputFile& then = manifest.inputs[i];
    if (now.path != then.path || now.size != then.size || now.mtime_ns != then.mtime_ns) {
      return "'" + now.path + "' changed since the dataset was prepared";
    }
  }
  return "";
}

DatasetManifest prepare_dataset(const RunConfig& config, const Tokenizers& tokenizers,
                                std::ostream& log, const PrepareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = config.dataset_dir();
  fs::create_directories(dir);
  fs::remove(fs::path(dir) / kManifestName);

  DatasetManifest manifest;
  manifest.format = kDatasetFormatVersion;
  manifest.config_hash = dataset_config_hash(config);
  manifest.tokenizer_fingerprint = tokenizer_fingerprint(tokenizers);
  manifest.inputs = dataset_inputs(config);
  manifest.threads = options.threads > 0 ? options.threads : available_cores();
  int64_t bytes_total = 0;
  for (const auto& input : manifest.inputs) bytes_total += input.size;

  const DataConfig& d = config.data;
  ProgressMeter meter(log, "pairs", -1, options.terminal, options.progress);
  int64_t pairs_done = 0;
  int64_t bytes_before = 0;
  const FilterOptions filter{d.max_len, d.max_len_ratio, true};
  {
    DatasetWriter writer(dir, "train");
    for (const auto& corpus : d.train) {
      for (const auto& pair :
           config.language_pairs()) {  // a multilingual corpus, direction by direction
        SplitSource source{config.corpus_path(corpus.split, pair.src),
                           config.corpus_path(corpus.split, pair.tgt), d.invalid_utf8, filter,
                           tokenizers.tags.prefix(pair.tgt)};
        PreparedCorpus prepared = prepare_split(source, tokenizers, writer, manifest.threads, meter,
                                                pairs_done, bytes_before, bytes_total);
        prepared.split = config.multilingual() ? corpus.split + " " + pair.name() : corpus.split;
        bytes_before +=
            static_cast<int64_t>(fs::file_size(source.src_path) + fs::file_size(source.tgt_path));
        manifest.corpora.push_back(prepared);
      }
    }
    writer.finish();
    manifest.train_pairs = writer.pairs();
    manifest.train_tokens = writer.tokens();
  }
  {
    DatasetWriter writer(dir, "valid");
    for (const auto& pair : config.language_pairs()) {
      SplitSource source{config.corpus_path(d.valid, pair.src),
                         config.corpus_path(d.valid, pair.tgt), InvalidUtf8Policy::kError,
                         std::nullopt, tokenizers.tags.prefix(pair.tgt)};
      prepare_split(source, tokenizers, writer, manifest.threads, meter, pairs_done, bytes_before,
                    bytes_total);
    }
    writer.finish();
    manifest.valid_pairs = writer.pairs();
  }
  meter.clear();
  for (const auto& name : file_names()) {
    manifest.files.emplace_back(name, static_cast<int64_t>(fs::file_size(fs::path(dir) / name)));
  }
  manifest.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file_atomically((fs::path(dir) / kManifestName).string(),
                        [&](std::ostream& out) { out << to_json(manifest).dump(2) << "\n"; });
  return manifest;
}

}  // namespace nmtzoo
