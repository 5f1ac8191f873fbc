// SPDX-License-Identifier: MIT
#include "torch_free/metrics/corpus_metric.h"

#include <fmt/format.h>

#include <algorithm>

namespace nmtzoo {

std::vector<std::vector<std::string>> references_by_segment(
    const std::vector<std::vector<std::string>>& references, size_t num_segments, int* num_refs) {
  if (references.empty()) throw MetricError("no references given");
  for (size_t r = 0; r < references.size(); ++r) {
    if (references[r].size() != num_segments) {
      throw MetricError(fmt::format("reference stream {} has {} segments, the hypotheses {}", r + 1,
                                    references[r].size(), num_segments));
    }
  }
  // An empty reference is a reference of no tokens, as in sacreBLEU since 2.2.0 (its issue #161):
  // Metric._cache_references drops only None, which its command line never produces.
  std::vector<std::vector<std::string>> segments(num_segments);
  for (size_t i = 0; i < num_segments; ++i) {
    segments[i].reserve(references.size());
    for (const auto& stream : references) segments[i].push_back(stream[i]);
  }
  if (num_refs != nullptr) *num_refs = static_cast<int>(references.size());
  return segments;
}

std::vector<std::vector<std::string>> single_segment_streams(
    const std::vector<std::string>& references) {
  std::vector<std::vector<std::string>> streams;
  streams.reserve(references.size());
  for (const auto& reference : references) streams.push_back({reference});
  return streams;
}

std::string format_score_line(const std::string& name, double score, int width,
                              const std::string& signature, const std::string& verbose) {
  std::string line = signature.empty() ? name : name + "|" + signature;
  line += fmt::format(" = {:.{}f}", score, std::max(width, 0));
  if (!verbose.empty()) line += " " + verbose;
  return line;
}

}  // namespace nmtzoo
