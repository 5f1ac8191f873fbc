// SPDX-License-Identifier: MIT
// The report of an experiment grid (experiments/run_plan.sh): every system of every translation
// direction against the grid's baseline, by paired bootstrap resampling (sacreBLEU 2.6.0's
// --paired-bs, torch_free/metrics/significance.h), with the BLEU p-values of the whole grid
// corrected for multiple comparisons. Reads only the folders the runs keep: <direction
// dir>/<system>/<test>.hyp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nmtzoo {

enum class MultipleComparisons { kHolm, kBonferroni, kNone };

// "holm" | "bonferroni" | "none"; anything else is a std::invalid_argument.
MultipleComparisons parse_multiple_comparisons(const std::string& name);

// p-values adjusted for testing them all: Holm's step-down (1979) or Bonferroni's, each capped at
// 1, in the order given. Rejecting where the adjusted p < alpha keeps the family-wise error <=
// alpha.
std::vector<double> adjust_p_values(const std::vector<double>& p_values,
                                    MultipleComparisons method);

struct GridDirection {
  std::string label;       // "de→en"
  std::string folder;      // its systems' folders' parent: reports/multi30k_de_en
  std::string references;  // a path with {test} for the test set's name: data/multi30k/{test}.en.gz
  std::vector<std::string> tests;
};

struct GridSystem {
  std::string name;    // as the report shows it
  std::string folder;  // its folder in each direction's folder
  size_t against = 0;  // the system it is tested against (0: the grid's baseline, itself untested)
  // The labels of the directions it translates (a multilingual model's); empty: every direction.
  std::vector<std::string> directions;
  bool translates(const GridDirection& direction) const;
};

// One system on one test set of one direction; `present` is false while its outputs are missing
// (and always in a direction the system does not translate).
struct GridCell {
  bool present = false;
  double bleu = 0, bleu_ci = 0, chrf = 0, ter = 0;
  std::optional<double> p_value;  // BLEU against its system's `against` (absent for the baseline)
  std::optional<double> p_adjusted;  // across the grid
};

struct GridResults {
  // cells[direction][test][system], tests as each direction lists them; system 0 is the baseline.
  std::vector<std::vector<std::vector<GridCell>>> cells;
  int64_t comparisons = 0;  // BLEU tests in the correction's family
  int64_t samples = 0;      // resamples of each test
};

// Tests every present system against the system it is tested against (the baseline, or another
// such as a multilingual model's bilingual one) in each direction and test set; one whose
// reference system's outputs are missing is not tested; a hypothesis file with the wrong number of
// lines is a std::runtime_error naming it.
GridResults grid_results(const std::vector<GridDirection>& directions,
                         const std::vector<GridSystem>& systems, MultipleComparisons correction,
                         int64_t samples);

struct GridTables {
  std::string markdown;  // the summary table, then one table per direction
  std::string csv;       // one row per direction, test set and system
};
// `primary`: the test set of the summary table (every direction has it). A system has no row in
// the table of a direction it does not translate, and an empty cell in the summary.
GridTables grid_tables(const std::vector<GridDirection>& directions,
                       const std::vector<GridSystem>& systems, const GridResults& results,
                       const std::string& primary, MultipleComparisons correction);

}  // namespace nmtzoo
