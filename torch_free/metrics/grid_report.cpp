// SPDX-License-Identifier: MIT
#include "torch_free/metrics/grid_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "torch_free/io/text_file.h"
#include "torch_free/metrics/significance.h"

namespace nmtzoo {
namespace {

std::string references_path(const GridDirection& direction, const std::string& test) {
  std::string path = direction.references;
  const std::string placeholder = "{test}";
  if (const size_t at = path.find(placeholder); at != std::string::npos)
    path.replace(at, placeholder.size(), test);
  return path;
}

std::string hypotheses_path(const GridDirection& direction, const GridSystem& system,
                            const std::string& test) {
  return fmt::format("{}/{}/{}.hyp", direction.folder, system.folder, test);
}

const char* correction_name(MultipleComparisons method) {
  switch (method) {
    case MultipleComparisons::kHolm:
      return "Holm's";
    case MultipleComparisons::kBonferroni:
      return "Bonferroni's";
    case MultipleComparisons::kNone:
      return "no";
  }
  return "";
}

constexpr double kAlpha = 0.05;

bool significant(const GridCell& cell) { return cell.p_adjusted && *cell.p_adjusted < kAlpha; }

// 10000 as "10,000", as the reports write counts (fmt's {:L} would depend on the machine's locale).
std::string thousands(int64_t value) {
  std::string digits = std::to_string(value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<size_t>(at), ",");
  return digits;
}

std::string signed_difference(double value) {
  return fmt::format("{}{:.2f}", value >= 0 ? "+" : "−", std::abs(value));
}

}  // namespace

bool GridSystem::translates(const GridDirection& direction) const {
  return directions.empty() ||
         std::find(directions.begin(), directions.end(), direction.label) != directions.end();
}

MultipleComparisons parse_multiple_comparisons(const std::string& name) {
  if (name == "holm") return MultipleComparisons::kHolm;
  if (name == "bonferroni") return MultipleComparisons::kBonferroni;
  if (name == "none") return MultipleComparisons::kNone;
  throw std::invalid_argument("unknown multiple-comparison correction '" + name +
                              "' (holm, bonferroni, none)");
}

std::vector<double> adjust_p_values(const std::vector<double>& p_values,
                                    MultipleComparisons method) {
  const double m = static_cast<double>(p_values.size());
  std::vector<double> adjusted(p_values.size());
  if (method == MultipleComparisons::kNone) return p_values;
  if (method == MultipleComparisons::kBonferroni) {
    for (size_t i = 0; i < p_values.size(); ++i) adjusted[i] = std::min(1.0, p_values[i] * m);
    return adjusted;
  }
  // Holm: the k-th smallest p (k from 0) times (m - k), made non-decreasing in that order.
  std::vector<size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  double running = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    running = std::max(running, std::min(1.0, p_values[order[k]] * (m - static_cast<double>(k))));
    adjusted[order[k]] = running;
  }
  return adjusted;
}

GridResults grid_results(const std::vector<GridDirection>& directions,
                         const std::vector<GridSystem>& systems, MultipleComparisons correction,
                         int64_t samples) {
  const std::unique_ptr<ResampledMetric> bleu = make_resampled_metric(BleuOptions{});
  const std::unique_ptr<ResampledMetric> chrf = make_resampled_metric(ChrfOptions{});
  const std::unique_ptr<ResampledMetric> ter = make_resampled_metric(TerOptions{});
  const std::vector<const ResampledMetric*> metrics = {bleu.get(), chrf.get(), ter.get()};
  PairedTestOptions options;
  options.samples = samples;
  GridResults results;
  std::vector<GridCell*> tested;
  for (const auto& direction : directions) {
    auto& by_test = results.cells.emplace_back();
    for (const auto& test : direction.tests) {
      auto& cells = by_test.emplace_back(systems.size());
      std::vector<bool> present(systems.size());
      for (size_t s = 0; s < systems.size(); ++s) {
        present[s] = systems[s].translates(direction) &&
                     std::filesystem::exists(hypotheses_path(direction, systems[s], test));
      }
      if (!present[0]) continue;  // no baseline: nothing to test against
      const std::string reference_file = references_path(direction, test);
      const ReferenceStreams references{read_lines(reference_file)};
      // One paired test for each system tested against, with the systems tested against it.
      for (size_t against = 0; against < systems.size(); ++against) {
        std::vector<size_t> group;
        if (present[against]) group.push_back(against);
        for (size_t s = 0; s < systems.size() && !group.empty(); ++s) {
          if (s != against && systems[s].against == against && present[s]) group.push_back(s);
        }
        if (group.size() < 2 && !(against == 0 && group.size() == 1)) continue;
        std::vector<std::vector<std::string>> hypotheses;
        for (size_t s : group) {
          const std::string path = hypotheses_path(direction, systems[s], test);
          hypotheses.push_back(read_lines(path));
          if (hypotheses.back().size() != references[0].size()) {
            throw std::runtime_error(fmt::format("{} has {} lines, {} has {}", path,
                                                 hypotheses.back().size(), reference_file,
                                                 references[0].size()));
          }
        }
        // The baseline alone (its systems not decoded yet) still gets its score and interval:
        // paired_test needs two systems, and the baseline's numbers do not depend on the others.
        if (hypotheses.size() == 1) hypotheses.push_back(hypotheses.front());
        const PairedTestReport report = paired_test(hypotheses, references, metrics, options);
        for (size_t i = 0; i < group.size(); ++i) {
          if (i == 0 && against != 0)
            continue;  // a reference system's own numbers come from its test
          GridCell& cell = cells[group[i]];
          cell.present = true;
          cell.bleu = report.results[i][0].score;
          cell.bleu_ci = report.results[i][0].ci.value_or(0);
          cell.chrf = report.results[i][1].score;
          cell.ter = report.results[i][2].score;
          cell.p_value = report.results[i][0].p_value;
          if (cell.p_value) tested.push_back(&cell);
        }
      }
    }
  }
  std::vector<double> p_values;
  for (const GridCell* cell : tested) p_values.push_back(*cell->p_value);
  const std::vector<double> adjusted = adjust_p_values(p_values, correction);
  for (size_t i = 0; i < tested.size(); ++i) tested[i]->p_adjusted = adjusted[i];
  results.comparisons = static_cast<int64_t>(tested.size());
  results.samples = samples;
  return results;
}

GridTables grid_tables(const std::vector<GridDirection>& directions,
                       const std::vector<GridSystem>& systems, const GridResults& results,
                       const std::string& primary, MultipleComparisons correction) {
  GridTables tables;
  std::string& md = tables.markdown;
  md += fmt::format("## Summary: BLEU on {}\n\n| direction |", primary);
  for (size_t s = 0; s < systems.size(); ++s)
    md += " " + systems[s].name + (s == 0 ? " (baseline)" : "") + " |";
  md += "\n|---|";
  for (size_t s = 0; s < systems.size(); ++s) md += "---:|";
  md += "\n";
  std::vector<int> better(systems.size()), worse(systems.size()), tied(systems.size());
  for (size_t d = 0; d < directions.size(); ++d) {
    const auto& tests = directions[d].tests;
    const auto at = std::find(tests.begin(), tests.end(), primary);
    md += "| " + directions[d].label + " |";
    for (size_t s = 0; s < systems.size(); ++s) {
      if (!systems[s].translates(directions[d])) {
        md += " |";
        continue;
      }
      if (at == tests.end() || !results.cells[d][at - tests.begin()][s].present) {
        md += " – |";
        continue;
      }
      const GridCell& cell = results.cells[d][at - tests.begin()][s];
      const GridCell& baseline = results.cells[d][at - tests.begin()][systems[s].against];
      md += fmt::format(" {:.2f} ± {:.2f}", cell.bleu, cell.bleu_ci);
      if (cell.p_value) {
        const double difference = cell.bleu - baseline.bleu;
        md += fmt::format(" ({}{})", signed_difference(difference), significant(cell) ? "*" : "");
        (significant(cell) ? (difference > 0 ? better : worse) : tied)[s] += 1;
      }
      md += " |";
    }
    md += "\n";
  }
  md += fmt::format(
      "\n± is the half-width of the 95% bootstrap confidence interval; in parentheses the "
      "difference "
      "to {} in the same direction (a multilingual model's: to its architecture's bilingual "
      "model), * where paired "
      "bootstrap resampling ({} resamples, sacreBLEU 2.6.0's --paired-bs) finds it significant at "
      "0.05 after {} "
      "correction over all {} BLEU comparisons of the grid (directions × test sets × systems); – "
      "not run yet{}.\n\n",
      systems.front().name, thousands(results.samples), correction_name(correction),
      results.comparisons,
      std::any_of(systems.begin(), systems.end(),
                  [](const GridSystem& s) { return !s.directions.empty(); })
          ? "; empty: the system does not translate that direction"
          : "");
  // The smallest p-value a test can give is 1/(samples + 1); the correction multiplies the
  // smallest of the grid by the number of comparisons (Holm's and Bonferroni's alike).
  const double factor =
      correction == MultipleComparisons::kNone ? 1.0 : static_cast<double>(results.comparisons);
  const double smallest = 1.0 / static_cast<double>(results.samples + 1);
  const double floor = factor * smallest;
  if (results.comparisons > 0 && floor >= kAlpha) {
    md += fmt::format(
        "**No difference can be significant here**: with {} resamples no p-value is below "
        "{:.4f}{}; "
        "set the plan's `resamples:` to at least {}.\n\n",
        thousands(results.samples), smallest,
        correction == MultipleComparisons::kNone
            ? std::string()
            : fmt::format(", which {} correction over {} comparisons makes {:.3f}",
                          correction_name(correction), results.comparisons, floor),
        thousands(static_cast<int64_t>(std::ceil(factor / kAlpha))));
  }
  for (size_t s = 1; s < systems.size(); ++s) {
    md += fmt::format(
        "- {} against {} on {}: significantly better in {}, worse in {}, no significant "
        "difference in {} direction(s)\n",
        systems[s].name, systems[systems[s].against].name, primary, better[s], worse[s], tied[s]);
  }
  tables.csv = "direction,test,system,bleu,bleu_ci95,chrf2,ter,p_value,p_adjusted\n";
  for (size_t d = 0; d < directions.size(); ++d) {
    md += fmt::format(
        "\n## {}\n\n| test set | system | BLEU (95% CI) | difference | p | p corrected | chrF2 | "
        "TER |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|\n",
        directions[d].label);
    for (size_t t = 0; t < directions[d].tests.size(); ++t) {
      const std::string& test = directions[d].tests[t];
      for (size_t s = 0; s < systems.size(); ++s) {
        if (!systems[s].translates(directions[d])) continue;
        const GridCell& cell = results.cells[d][t][s];
        if (!cell.present) {
          md += fmt::format("| {} | {} | – | | | | | |\n", test, systems[s].name);
          continue;
        }
        const GridCell& baseline = results.cells[d][t][systems[s].against];
        md += fmt::format("| {} | {} | {:.2f} ± {:.2f} | {} | {} | {} | {:.2f} | {:.2f} |\n", test,
                          systems[s].name, cell.bleu, cell.bleu_ci,
                          cell.p_value ? signed_difference(cell.bleu - baseline.bleu) : "",
                          cell.p_value ? fmt::format("{:.4f}", *cell.p_value) : "",
                          cell.p_adjusted ? fmt::format("{:.4f}{}", *cell.p_adjusted,
                                                        significant(cell) ? "*" : "")
                                          : "",
                          cell.chrf, cell.ter);
        tables.csv +=
            fmt::format("{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{}\n", directions[d].label, test,
                        systems[s].name, cell.bleu, cell.bleu_ci, cell.chrf, cell.ter,
                        cell.p_value ? fmt::format("{:.6f}", *cell.p_value) : "",
                        cell.p_adjusted ? fmt::format("{:.6f}", *cell.p_adjusted) : "");
      }
    }
  }
  return tables;
}

}  // namespace nmtzoo
