// SPDX-License-Identifier: MIT
// The edit distance under TER's shifts, as sacreBLEU's lib_ter.BeamEditDistance computes it: a beam
// of the matrix around its diagonal, with the rows of scored hypothesis prefixes cached. Only
// torch_free/metrics/ter_edit_rate.cpp uses it; it has a header of its own because the shift search
// and the matrix are separate concerns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace nmtzoo::lib_ter {

using WordIds = std::vector<int32_t>;  // words as ids shared by hypothesis and reference

// How a cell (hypothesis word i, reference word j) of the matrix was reached, named as in
// lib_ter.py, which turns the hypothesis into the reference here and flips the trace later.
enum class EditOp : uint8_t {
  kUndefined,   // 'x'
  kNop,         // ' ' from (i-1, j-1), the words equal
  kSubstitute,  // 's' from (i-1, j-1)
  kDelete,      // 'd' from (i-1, j): hypothesis word i faces no reference word
  kInsert,      // 'i' from (i, j-1): reference word j faces no hypothesis word
};

// lib_ter.BeamEditDistance for hypotheses of one length (a shift keeps the length). Row i of the
// matrix is computed only in a beam of columns around the pseudo-diagonal i * ref/hyp length
// (the whole last row), and only those cells are stored. Rows are cached in a trie of hypothesis
// prefixes, as lib_ter.py does, so that a shifted hypothesis recomputes only the rows after its
// longest prefix scored before. The cache changes no result: a row depends only on the prefix.
class BeamEditDistance {
 public:
  // `ref` must outlive this object.
  BeamEditDistance(const WordIds& ref, size_t hyp_length);

  // The edit distance of `hyp` (hyp_length words) to the reference; with `trace`, also the
  // operations of lib_ter.py's path through the matrix, first to last. Throws MetricError when
  // that path leaves the beam, as lib_ter.py raises.
  int32_t operator()(const WordIds& hyp, std::vector<EditOp>* trace = nullptr);

 private:
  struct Cell {
    int32_t cost;
    EditOp op;
  };

  static uint64_t child_key(uint32_t node, int32_t word) {
    return (static_cast<uint64_t>(node) << 32) | static_cast<uint32_t>(word);
  }
  int32_t cost(size_t i, int64_t j) const;
  void compute_row(size_t i, int32_t word, Cell* row) const;
  void trace_back(std::vector<EditOp>* trace) const;

  const WordIds& ref_;
  size_t hyp_length_;
  std::vector<int64_t> row_begin_;  // beam columns [begin, end) of each row
  std::vector<int64_t> row_end_;
  std::vector<size_t> cells_before_row_;             // beam cells of the rows above each row
  std::vector<Cell> cached_cells_;                   // the trie's rows, back to back
  std::vector<size_t> node_row_offset_;              // trie node -> its row in cached_cells_
  std::unordered_map<uint64_t, uint32_t> children_;  // (node, next word) -> trie node
  std::vector<Cell> scratch_;                        // new rows once the trie is full
  std::vector<const Cell*> rows_;                    // the current hypothesis's rows
  std::vector<uint32_t> path_nodes_;                 // the trie nodes of its cached prefix
};

}  // namespace nmtzoo::lib_ter
