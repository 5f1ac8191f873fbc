// What a training run reads before its first update: the tokenizers (trained first when missing)
// and the tokenized, filtered training pairs and validation set.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/data/corpus.h"
#include "core/data/tokenizers.h"

namespace nmtzoo {

class Communicator;

struct TrainingData {
  Tokenizers tokenizers;
  std::string tokenizer_fingerprint;
  TokenizedCorpus train;
  std::vector<int64_t> train_lengths;  // per pair: the longer side, plus EOS (for batching)
  FilterStats filtered;
  TokenizedCorpus valid;               // cut to the model's length limit
  std::vector<std::string> valid_sources;
  std::vector<std::string> valid_references;
};

// Rank 0 (or the only process) trains missing tokenizers, the others wait for it and load them.
// Errors name the file and line of bad data; no training pair left after filtering is an error.
TrainingData prepare_training_data(const RunConfig& config, std::ostream& log,
                                   Communicator* communicator = nullptr);

}  // namespace nmtzoo
