// SPDX-License-Identifier: MIT
// nmtzoo-bench's decoding figures: a checkpoint translating a test split in each decoding mode
// (greedy and beam 5, cached or not, per number format, with a shortlist), and sentences one at a
// time for latency. A benchmark, never a test.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>

namespace nmtzoo {

struct DecodingBenchmarkOptions {
  std::string checkpoint;
  std::string test_split = "test_2016_flickr";
  int64_t sentences = 0;       // only the first N test sentences; 0 = all
  bool no_uncached = false;    // skip the slow no-cache modes
  bool bf16_decoding = false;  // also greedy and beam 5 with bf16 autocast
  bool int8_decoding = false;  // also greedy, beam 5 and batch size 1 with int8 linear layers
  bool latency = false;        // also one sentence per call (greedy; median and p90)
  std::string shortlist;       // also beam 5 (and int8 modes) over this lexical shortlist
  std::string export_dir;      // weights, test ids and greedy outputs for the Python peer
  std::string trace_dir;       // a Chrome trace of each mode, when not empty
};

// Prints a line per mode to `out` and returns the figures as JSON (a list of modes).
nlohmann::json benchmark_decoding(const DecodingBenchmarkOptions& options, std::ostream& out);

}  // namespace nmtzoo
