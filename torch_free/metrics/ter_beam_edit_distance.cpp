// SPDX-License-Identifier: MIT
#include "torch_free/metrics/ter_beam_edit_distance.h"

#include <algorithm>
#include <cmath>

#include "torch_free/metrics/corpus_metric.h"

namespace nmtzoo::lib_ter {
namespace {

constexpr int64_t kBeamWidth = 25;         // columns each side of the pseudo-diagonal
constexpr size_t kMaxCachedRows = 10000;   // the row cache's limit (speed only)
constexpr int32_t kUnreachable = 1 << 30;  // _INT_INFINITY: a cell outside the beam

}  // namespace

BeamEditDistance::BeamEditDistance(const WordIds& ref, size_t hyp_length)
    : ref_(ref), hyp_length_(hyp_length) {
  const auto ref_length = static_cast<int64_t>(ref.size());
  const double length_ratio =
      hyp_length > 0 ? static_cast<double>(ref_length) / static_cast<double>(hyp_length) : 1.0;
  // With very different lengths a beam of 25 would not overlap the previous row's.
  int64_t beam_width = kBeamWidth;
  if (static_cast<double>(kBeamWidth) < length_ratio / 2) {
    beam_width = static_cast<int64_t>(std::ceil(length_ratio / 2 + kBeamWidth));
  }
  row_begin_.push_back(0);
  row_end_.push_back(ref_length + 1);
  for (size_t i = 1; i <= hyp_length; ++i) {
    auto diagonal = static_cast<int64_t>(std::floor(static_cast<double>(i) * length_ratio));
    row_begin_.push_back(std::max<int64_t>(0, diagonal - beam_width));
    row_end_.push_back(i == hyp_length ? ref_length + 1
                                       : std::min(ref_length + 1, diagonal + beam_width));
  }
  cells_before_row_.push_back(0);
  for (size_t i = 0; i <= hyp_length; ++i) {
    cells_before_row_.push_back(cells_before_row_.back() +
                                static_cast<size_t>(row_end_[i] - row_begin_[i]));
  }
  for (int64_t j = 0; j <= ref_length; ++j) {  // row 0: j insertions
    cached_cells_.push_back({static_cast<int32_t>(j), EditOp::kInsert});
  }
  node_row_offset_.push_back(0);  // the trie's root holds row 0
  rows_.resize(hyp_length + 1);
  path_nodes_.resize(hyp_length + 1);
}

int32_t BeamEditDistance::operator()(const WordIds& hyp, std::vector<EditOp>* trace) {
  size_t cached = 0;  // rows 1..cached are in the trie
  uint32_t node = 0;
  path_nodes_[0] = 0;
  while (cached < hyp_length_) {
    auto it = children_.find(child_key(node, hyp[cached]));
    if (it == children_.end()) break;
    node = it->second;
    path_nodes_[++cached] = node;
  }

  // New rows go straight into the trie's storage while it has room (lib_ter.py checks the
  // room once per hypothesis, then adds all its rows).
  const bool cache_new_rows = node_row_offset_.size() - 1 < kMaxCachedRows;
  const size_t new_cells = cells_before_row_[hyp_length_ + 1] - cells_before_row_[cached + 1];
  Cell* new_rows = nullptr;
  if (cache_new_rows) {
    size_t old_size = cached_cells_.size();
    if (cached_cells_.capacity() < old_size + new_cells) {
      cached_cells_.reserve(std::max(2 * cached_cells_.capacity(), old_size + new_cells));
    }
    cached_cells_.resize(old_size + new_cells);
    new_rows = cached_cells_.data() + old_size;
  } else {
    scratch_.resize(std::max(scratch_.size(), new_cells));
    new_rows = scratch_.data();
  }
  for (size_t i = 0; i <= cached; ++i) {
    rows_[i] = cached_cells_.data() + node_row_offset_[path_nodes_[i]];
  }
  for (size_t i = cached + 1; i <= hyp_length_; ++i) {
    Cell* row = new_rows + (cells_before_row_[i] - cells_before_row_[cached + 1]);
    compute_row(i, hyp[i - 1], row);
    rows_[i] = row;
  }

  if (trace != nullptr) trace_back(trace);

  if (cache_new_rows) {
    for (size_t i = cached + 1; i <= hyp_length_; ++i) {
      auto child = static_cast<uint32_t>(node_row_offset_.size());
      node_row_offset_.push_back(static_cast<size_t>(rows_[i] - cached_cells_.data()));
      children_.emplace(child_key(node, hyp[i - 1]), child);
      node = child;
    }
  }
  return cost(hyp_length_, static_cast<int64_t>(ref_.size()));
}

int32_t BeamEditDistance::cost(size_t i, int64_t j) const {
  if (j < row_begin_[i] || j >= row_end_[i]) return kUnreachable;
  return rows_[i][j - row_begin_[i]].cost;
}

// Row i of the matrix after hypothesis word `word`, from row i - 1. On equal costs the first
// of no-op/substitution, deletion, insertion wins (Tercom's preference with the trace flipped).
void BeamEditDistance::compute_row(size_t i, int32_t word, Cell* row) const {
  const int64_t begin = row_begin_[i];
  for (int64_t j = begin; j < row_end_[i]; ++j) {
    Cell cell{kUnreachable, EditOp::kUndefined};
    if (j == 0) {
      cell = {cost(i - 1, 0) + 1, EditOp::kDelete};
    } else {
      const bool same = word == ref_[static_cast<size_t>(j - 1)];
      const int32_t substitution = cost(i - 1, j - 1) + (same ? 0 : 1);
      if (substitution < cell.cost) {
        cell = {substitution, same ? EditOp::kNop : EditOp::kSubstitute};
      }
      const int32_t deletion = cost(i - 1, j) + 1;
      if (deletion < cell.cost) cell = {deletion, EditOp::kDelete};
      const int32_t insertion = (j > begin ? row[j - 1 - begin].cost : kUnreachable) + 1;
      if (insertion < cell.cost) cell = {insertion, EditOp::kInsert};
    }
    row[j - begin] = cell;
  }
}

void BeamEditDistance::trace_back(std::vector<EditOp>* trace) const {
  trace->clear();
  size_t i = hyp_length_;
  auto j = static_cast<int64_t>(ref_.size());
  while (i > 0 || j > 0) {
    EditOp op =
        j >= row_begin_[i] && j < row_end_[i] ? rows_[i][j - row_begin_[i]].op : EditOp::kUndefined;
    trace->push_back(op);
    switch (op) {
      case EditOp::kNop:
      case EditOp::kSubstitute:
        --i;
        --j;
        break;
      case EditOp::kInsert:
        --j;
        break;
      case EditOp::kDelete:
        --i;
        break;
      case EditOp::kUndefined:
        throw MetricError("TER: the edit path left the beam");  // lib_ter.py raises too
    }
  }
  std::reverse(trace->begin(), trace->end());
}

}  // namespace nmtzoo::lib_ter
