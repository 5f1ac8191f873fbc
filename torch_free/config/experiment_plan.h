// SPDX-License-Identifier: MIT
// An experiment plan: the grid of runs a comparison trains, decodes and reports (models by their
// configs, translation directions, seeds, the budget of a run, test sets, an ensemble), as one
// YAML file that experiments/run_plan.sh runs. docs/experiments.md documents the keys.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nmtzoo {

struct PlanModel {
  std::string name;    // its results folder in each direction's report
  std::string config;  // the recipe, a run config file
};

struct PlanDirection {
  std::string src;
  std::string tgt;
  int64_t seeds = 1;
  std::string budget;  // training.max_time of its runs ("30m"); empty: each config's own
  std::vector<std::string> tests;
  std::map<std::string, std::vector<std::string>> overrides;  // model -> "key=value" (YAML value)
  std::string where;                                          // file:line of its entry
  std::string pair() const { return src + "_" + tgt; }        // "de_en", as runs are named
  std::string arrow() const { return src + "→" + tgt; }
};

// One model trained once for several directions (data.directions), then decoded and reported in
// each of them beside the bilingual models, and tested against its own `model`'s bilingual runs.
struct PlanMultilingual {
  std::string
      name;  // its results folder in each direction's report, and its run: runs/multi30k_<name>
  std::string model;                      // the plan's model whose config it trains
  std::vector<PlanDirection> directions;  // each with the plan's (or its own) test sets
  std::string budget;                     // training.max_time; empty: the config's
  std::vector<std::string> overrides;     // "key=value", after the plan's
  std::string where;
  std::string run() const { return "runs/multi30k_" + name; }
};

struct ExperimentPlan {
  std::string path;
  std::string title;
  std::string name;                 // the grid report's folder: reports/plans/<name>
  std::string tokenizer_prefix;     // every run's tokenizer.prefix; {languages}: the pair, sorted
  std::string baseline;             // the model every other system is tested against
  std::string correction = "holm";  // of the p-values across the grid: holm, bonferroni, none
  // Of each paired bootstrap test (sacreBLEU's default). No p-value is below 1/(resamples + 1), so
  // a grid of m comparisons needs resamples >= m / alpha for the correction to let any through.
  int64_t resamples = 1000;
  std::vector<PlanModel> models;
  std::vector<std::string> ensemble;  // models whose seed-1 runs are ensembled in each direction
  std::vector<PlanDirection> directions;
  std::vector<PlanMultilingual> multilingual;
  const PlanModel& model(const std::string& name) const;  // one of `models`
};

// Reads and checks the plan at `path`: unknown or misspelt keys, wrong types, directions named
// twice, models, baseline or ensemble members that are not the plan's, configs that do not load
// with a direction's overrides, and data files a direction lacks. Throws ConfigError listing every
// problem as "<path>:<line>: <key>: <what is wrong>".
ExperimentPlan load_plan(const std::string& path);

// The --set overrides a run of `model` in `direction` is trained with on top of its config: the
// languages, the tokenizer, the test sets, the budget, then the direction's own for the model.
std::vector<std::string> run_overrides(const ExperimentPlan& plan, const PlanDirection& direction,
                                       const std::string& model);

// The overrides of a multilingual system's run: its directions, the tokenizer of all its
// languages, its budget, then its own.
std::vector<std::string> multilingual_overrides(const ExperimentPlan& plan,
                                                const PlanMultilingual& system);

// The results folder of a model's seed: <model> for seed 1, else <model>_seed<seed>.
std::string seed_folder(const std::string& model, int64_t seed);

// The report folder of one direction (its per-model folders): reports/multi30k_<pair>.
std::string direction_report(const PlanDirection& direction);

// A run's progress as the plan's status reads it from the run's files.
// The last "a second here counts S s of training.max_time" of a run's log: its budget scale; 1
// when the log has none (an unscaled budget, or a run stopped before it measured), where a second
// counts a second.
double last_budget_scale(const std::string& log);
// The last training record of a run's metrics.jsonl: its update and wall-clock seconds (0, 0:
// none), and the run's recent seconds per update: the median over the log's last intervals (up
// to 9) between training records, else over the whole run, since an interval with a pause in it
// (a stopped process, validation, other jobs beside it) would mislead an ETA.
struct RunProgress {
  int64_t step = 0;
  double wall_seconds = 0;
  double seconds_per_update = 0;
};
RunProgress last_progress(const std::string& metrics);

}  // namespace nmtzoo
