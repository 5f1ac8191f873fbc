// SPDX-License-Identifier: MIT
// Preparing the binary dataset of a run (fairseq-preprocess's job): the training corpora and the
// validation set tokenized once, in parallel, streaming, into config.dataset_dir(), with a
// manifest (dataset.json) that says what it was made from, so a later start knows whether it is
// still valid without reading the corpora.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/data/corpus.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {

struct InputFile {
  std::string path;
  int64_t size = 0;
  int64_t mtime_ns = 0;
};

// One training corpus's share of the prepared "train" split: pairs [begin, end).
struct PreparedCorpus {
  std::string split;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t lines = 0;
  int64_t invalid_utf8_skipped = 0;
  FilterStats filtered;
};

struct DatasetManifest {
  uint32_t format = 0;
  std::string config_hash;
  std::string tokenizer_fingerprint;
  std::vector<InputFile> inputs;
  std::vector<PreparedCorpus> corpora;
  int64_t train_pairs = 0;
  int64_t train_tokens = 0;
  int64_t valid_pairs = 0;
  std::vector<std::pair<std::string, int64_t>> files;  // name -> size in bytes
  double seconds = 0;
  int64_t threads = 0;
};

inline constexpr const char* kManifestName = "dataset.json";

// A hash of the keys preparation depends on (data folder, languages, split names, filters,
// invalid_utf8); corpus weights are applied per epoch and are not part of it.
std::string dataset_config_hash(const RunConfig& config);

// Size and modification time of every input file (training corpora, then validation).
std::vector<InputFile> dataset_inputs(const RunConfig& config);

// Why the dataset in config.dataset_dir() cannot be used as it is ("" when it can): missing,
// another format, config or tokenizer changed, an input file changed size or time.
std::string dataset_staleness(const RunConfig& config, const std::string& tokenizer_fingerprint);

struct PrepareOptions {
  int64_t threads = 0;    // 0 = every core
  bool terminal = false;  // progress as a bar (else a log line every 30 s)
  bool progress = true;
};

// Writes the dataset: the manifest is removed first and written last, so an interrupted
// preparation never leaves a dataset that loads. Bad data (invalid UTF-8 under
// data.invalid_utf8: error, unequal line counts) is a DataError naming file and line. Takes no
// lock: a run's start calls it inside the critical section of prepare_run
// (libtorch/runtime/run_start.h), which also covers training the tokenizer it is given.
DatasetManifest prepare_dataset(const RunConfig& config, const Tokenizers& tokenizers,
                                std::ostream& log, const PrepareOptions& options = {});

// The manifest of a prepared dataset, after checking that every data file has the size it
// records; DataError naming the file otherwise.
DatasetManifest read_manifest(const std::string& dir);

}  // namespace nmtzoo
