// SPDX-License-Identifier: MIT
// nmtzoo-plan: an experiment plan (torch_free/config/experiment_plan.h) for
// experiments/run_plan.sh:
//   runs PLAN     checks the plan, then prints one line per direction: experiments/compare.sh's
//                 arguments for it, tab-separated
//   status PLAN   the state of every run of the grid and the training time left
//   report PLAN   the grid's report in reports/plans/<name>/ (torch_free/metrics/grid_report.h)
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "apps/common.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/experiment_plan.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/progress.h"
#include "torch_free/metrics/grid_report.h"
#include "torch_free/plot/svg.h"

namespace {

using namespace nmtzoo;
namespace fs = std::filesystem;

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

int print_runs(const ExperimentPlan& plan) {
  std::vector<std::string> models;
  for (const auto& model : plan.models) models.push_back(model.name);
  for (const auto& direction : plan.directions) {
    std::vector<std::string> args = {"--pair",     direction.pair(),
                                     "--models",   joined(models, " "),
                                     "--seeds",    std::to_string(direction.seeds),
                                     "--tests",    joined(direction.tests, " "),
                                     "--baseline", plan.baseline};
    if (!plan.ensemble.empty()) args.insert(args.end(), {"--ensemble", joined(plan.ensemble, " ")});
    for (const auto& model : plan.models) {
      args.insert(args.end(), {"--config", model.name + "=" + model.config});
      for (const auto& value : run_overrides(plan, direction, model.name)) {
        args.insert(args.end(), {"--set", model.name + ":" + value});
      }
    }
    std::cout << joined(args, "\t") << "\n";
  }
  // A multilingual system: trained once (in its first direction), decoded in each direction.
  for (const auto& system : plan.multilingual) {
    for (const auto& direction : system.directions) {
      std::vector<std::string> args = {"--pair",
                                       direction.pair(),
                                       "--models",
                                       system.name,
                                       "--seeds",
                                       "1",
                                       "--tests",
                                       joined(direction.tests, " "),
                                       "--no-report",
                                       "--config",
                                       system.name + "=" + plan.model(system.model).config,
                                       "--run",
                                       system.name + "=" + system.run()};
      for (const auto& value : multilingual_overrides(plan, system)) {
        args.insert(args.end(), {"--set", system.name + ":" + value});
      }
      std::cout << joined(args, "\t") << "\n";
    }
  }
  return 0;
}

// True while another process holds the lock experiments/lib/model_run.sh takes to train `run`.
bool locked(const std::string& run) {
  const int fd = ::open((run + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

int print_status(const ExperimentPlan& plan) {
  int done = 0, running = 0, started = 0, left = 0, runs = 0;
  double budget_left = 0;  // seconds of the reference machine
  double scale = std::numeric_limits<double>::quiet_NaN();
  auto newest_log = fs::file_time_type::min();
  // Runs budgeted by updates (training.max_steps, no max_time): the updates left per plan model,
  // and each model's seconds per update over the last interval of its most recently written log.
  std::map<std::string, int64_t> updates_left;
  std::map<std::string, std::pair<fs::file_time_type, double>> seconds_per_update;
  // The state of the run `run` of plan model `model` whose results are kept in `results`, counted.
  auto run_state = [&](const std::string& results, const std::string& run, const std::string& model,
                       const RunConfig& config) {
    ++runs;
    const double budget = config.training.max_time;
    const int64_t max_steps = budget > 0 ? 0 : config.training.max_steps;
    std::error_code ignored;
    const auto log_time = fs::exists(run + ".log", ignored)
                              ? fs::last_write_time(run + ".log", ignored)
                              : fs::file_time_type::min();
    if (budget > 0 && log_time > newest_log) {  // the newest wall-clock run's scale
      newest_log = log_time;
      scale = last_budget_scale(run + ".log");
    }
    if (fs::exists(results + "/training_summary.json")) return ++done, std::string("done");
    if (fs::exists(run + "/training_summary.json")) {
      if (locked(run)) return ++running, std::string("decoding");  // by a plan runner
      return ++started, std::string("trained, to decode");
    }
    const RunProgress progress = last_progress(run + "/metrics.jsonl");
    std::string share;
    if (max_steps > 0) {
      updates_left[model] += std::max<int64_t>(0, max_steps - progress.step);
      auto& rate = seconds_per_update[model];
      if (progress.step > 0 && (rate.second == 0 || log_time > rate.first)) {
        rate = {log_time, progress.seconds_per_update};
      }
      share = fmt::format(" ({:.0f}% of {} updates)",
                          100 * std::min(1.0, static_cast<double>(progress.step) / max_steps),
                          max_steps);
    } else {
      const double used = progress.wall_seconds * last_budget_scale(run + ".log");
      budget_left += std::max(0.0, budget - used);
      if (budget > 0) {
        share = fmt::format(" ({:.0f}% of {})", 100 * std::min(1.0, used / budget),
                            format_duration(budget));
      }
    }
    if (locked(run)) return ++running, "running" + share;
    if (fs::exists(run + "/checkpoints/checkpoint_last.pt")) return ++started, "started" + share;
    return ++left, std::string("left");
  };
  fmt::print("{:<8} {:<26} {:>4}  {}\n", "pair", "model", "seed", "state");
  for (const auto& direction : plan.directions) {
    for (int64_t seed = 1; seed <= direction.seeds; ++seed) {
      for (const auto& model : plan.models) {
        const std::string folder = seed_folder(model.name, seed);
        const std::string state =
            run_state(direction_report(direction) + "/" + folder,
                      "runs/multi30k_" + direction.pair() + "_" + folder, model.name,
                      load_config(model.config, run_overrides(plan, direction, model.name)));
        fmt::print("{:<8} {:<26} {:>4}  {}\n", direction.pair(), model.name, seed, state);
      }
    }
    if (!plan.ensemble.empty()) {
      const std::string folder = "ensemble_" + joined(plan.ensemble, "+");
      const bool complete =
          fs::exists(direction_report(direction) + "/" + folder + "/ensemble.txt");
      fmt::print("{:<8} {:<26} {:>4}  {}\n", direction.pair(), folder, "",
                 complete ? "done" : "left");
    }
  }
  // A multilingual system is one training, done once decoded in its last direction.
  for (const auto& system : plan.multilingual) {
    const std::string state = run_state(
        direction_report(system.directions.back()) + "/" + system.name, system.run(), system.model,
        load_config(plan.model(system.model).config, multilingual_overrides(plan, system)));
    std::string pairs;
    for (const auto& direction : system.directions)
      pairs += (pairs.empty() ? "" : ",") + direction.pair();
    fmt::print("{:<8} {:<26} {:>4}  {} ({})\n", "multi", system.name, 1, state, pairs);
  }
  fmt::print("{} runs: {} done, {} running, {} started or trained, {} left", runs, done, running,
             started, left);
  std::vector<std::string> parts;
  if (budget_left > 0 && std::isfinite(scale) && scale > 0) {
    parts.push_back(fmt::format("{} of the reference machine, ~{} here at the last measured speed",
                                format_duration(budget_left),
                                format_duration(budget_left / scale)));
  } else if (budget_left > 0) {
    parts.push_back(format_duration(budget_left) + " of the reference machine");
  }
  for (const auto& [model, updates] : updates_left) {
    if (updates == 0) continue;
    const double rate = seconds_per_update[model].second;
    parts.push_back(fmt::format(
        "{} updates of {}{}", updates, model,
        rate > 0 ? ", ~" + format_duration(updates * rate) + " here at its last measured speed"
                 : ""));
  }
  if (!parts.empty()) fmt::print("; training left: {} (decoding not counted)", joined(parts, "; "));
  fmt::print("\n");
  return 0;
}

int write_report(const ExperimentPlan& plan, int64_t samples) {
  std::vector<GridDirection> directions;
  for (const auto& direction : plan.directions) {
    const RunConfig config = load_config(plan.models.front().config,
                                         run_overrides(plan, direction, plan.models.front().name));
    directions.push_back({direction.arrow(), direction_report(direction),
                          config.data.dir + "/{test}." + direction.tgt + ".gz", direction.tests});
  }
  std::vector<GridSystem> systems{{plan.baseline, plan.baseline, 0, {}}};
  for (const auto& model : plan.models) {
    if (model.name != plan.baseline) systems.push_back({model.name, model.name, 0, {}});
  }
  if (!plan.ensemble.empty()) {
    systems.push_back({"ensemble (" + joined(plan.ensemble, " + ") + ")",
                       "ensemble_" + joined(plan.ensemble, "+"),
                       0,
                       {}});
  }
  // A multilingual system is tested against its own architecture's bilingual model.
  for (const auto& system : plan.multilingual) {
    const auto against = std::find_if(systems.begin(), systems.end(), [&](const GridSystem& s) {
      return s.folder == system.model;
    });
    std::vector<std::string> labels;
    for (const auto& direction : system.directions) labels.push_back(direction.arrow());
    systems.push_back(
        {system.name, system.name, static_cast<size_t>(against - systems.begin()), labels});
  }
  const MultipleComparisons correction = parse_multiple_comparisons(plan.correction);
  const GridResults results = grid_results(directions, systems, correction, samples);
  const std::string primary = plan.directions.front().tests.front();
  const GridTables tables = grid_tables(directions, systems, results, primary, correction);
  std::vector<std::string> labels;
  for (const auto& direction : directions) labels.push_back(direction.label);
  std::vector<BarSeries> bars;
  for (size_t s = 0; s < systems.size(); ++s) {
    BarSeries series{systems[s].name, {}, {}};
    for (size_t d = 0; d < directions.size(); ++d) {
      const auto& tests = directions[d].tests;
      const auto at = std::find(tests.begin(), tests.end(), primary) - tests.begin();
      const bool present = at < static_cast<long>(tests.size()) && results.cells[d][at][s].present;
      series.values.push_back(present ? results.cells[d][at][s].bleu : std::nan(""));
      series.errors.push_back(present ? results.cells[d][at][s].bleu_ci : std::nan(""));
    }
    bars.push_back(std::move(series));
  }
  const std::string out = "reports/plans/" + plan.name;
  fs::create_directories(out);
  auto save = [&](const std::string& name, const std::string& text) {
    write_file_atomically(out + "/" + name, [&](std::ostream& stream) { stream << text; });
  };
  save("bleu_by_direction.svg",
       bar_chart_svg(labels, bars, "BLEU on " + primary + " by direction (95% CI)", "BLEU"));
  save("results.csv", tables.csv);
  std::string links;
  for (const auto& direction : plan.directions) {
    links +=
        fmt::format("[{}](../../multi30k_{}/results.md) ", direction.arrow(), direction.pair());
  }
  save("results.md",
       fmt::format("# {}\n\nMade by `experiments/run_plan.sh {}` from the outputs kept in each "
                   "direction's folder (each direction's full report: {}).\n\n"
                   "![BLEU by direction](bleu_by_direction.svg)\n\n{}",
                   plan.title.empty() ? plan.name : plan.title, plan.path, links, tables.markdown));
  std::cout << tables.markdown.substr(0, tables.markdown.find("\n## ", 1)) << "report: " << out
            << "/results.md\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Check, follow and report an experiment plan (a YAML grid of models, directions and "
      "seeds) that experiments/run_plan.sh runs."};
  app.require_subcommand(1);
  std::string path;
  int64_t samples = 0;  // 0: the plan's `resamples:`
  for (auto* command :
       {app.add_subcommand("runs", "check the plan; print each direction's compare.sh arguments"),
        app.add_subcommand("status", "show every run's state and the training time left"),
        app.add_subcommand("report", "write reports/plans/<name>/ from the kept outputs")}) {
    command->add_option("plan", path, "the plan file")->required()->check(CLI::ExistingFile);
  }
  app.get_subcommand("report")
      ->add_option("--samples", samples,
                   "bootstrap resamples of each test (default: the plan's resamples:, else 1000)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  return run_app([&] {
    register_builtin_archs();  // the architectures' own model keys, which the configs use
    const ExperimentPlan plan = load_plan(path);
    if (app.got_subcommand("runs")) return print_runs(plan);
    if (app.got_subcommand("status")) return print_status(plan);
    return write_report(plan, samples > 0 ? samples : plan.resamples);
  });
}
