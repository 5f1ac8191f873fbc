// SPDX-License-Identifier: MIT
#include "torch_free/config/experiment_plan.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

#include "torch_free/common/edit_distance.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kPlanKeys = {
    "title", "name",  "tokenizer_prefix", "baseline", "correction", "resamples",   "budget",
    "seeds", "tests", "models",           "ensemble", "directions", "multilingual"};
// Bounds on counts of work: a seed is a training run, a resample a pass over a test set's scores.
constexpr int64_t kMaxSeeds = 100;
constexpr int64_t kMaxResamples = 1000000;  // as torch_free/metrics/significance.h's

const std::vector<std::string> kDirectionKeys = {"budget", "seeds", "tests", "set"};
const std::vector<std::string> kMultilingualKeys = {"model", "directions", "budget", "set"};

std::string unknown_key(const std::string& key, const std::vector<std::string>& known) {
  std::string nearest;
  size_t best = 3;
  for (const auto& candidate : known) {
    const size_t cost = edit_distance(key, candidate);
    if (cost < best) best = cost, nearest = candidate;
  }
  std::string message = "unknown key '" + key + "'";
  if (!nearest.empty()) return message + "; did you mean '" + nearest + "'?";
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  return message + " (keys: " + all + ")";
}

// Collects problems as "<path>:<line>: <key>: <what>" and reads typed values, each checked.
class PlanReader {
 public:
  explicit PlanReader(std::string path) : path_(std::move(path)) {}

  std::string where(const YAML::Node& node) const {
    return fmt::format("{}:{}", path_, node.Mark().line + 1);
  }
  void problem(const YAML::Node& node, const std::string& key, const std::string& what) {
    problems_.push_back(fmt::format("{}: {}: {}", where(node), key, what));
  }
  std::vector<std::string>& problems() { return problems_; }

  // A plan is someone else's input: its texts reach a runner whose fields are TAB-separated
  // (nmtzoo-plan runs), so a control character could smuggle an argument in; refused.
  bool text(const YAML::Node& node, const std::string& key, std::string& out) {
    if (!node.IsScalar() || node.Scalar().empty()) {
      problem(node, key, "expects a non-empty text");
      return false;
    }
    const std::string& value = node.Scalar();
    const auto control = std::find_if(value.begin(), value.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (control != value.end()) {
      problem(
          node, key,
          fmt::format(
              "'{}' holds a control character (byte {}, code {}): a plan's texts are one line "
              "without TABs",
              value.substr(0, static_cast<size_t>(control - value.begin())),
              control - value.begin() + 1, static_cast<int>(static_cast<unsigned char>(*control))));
      return false;
    }
    out = value;
    return true;
  }
  // A name that becomes part of a path (a plan, a model, a test set): letters, digits, '.', '_'
  // and '-', not starting with '.', so that every path written stays under its folder.
  bool name(const YAML::Node& node, const std::string& key, std::string& out) {
    if (!text(node, key, out)) return false;
    const bool safe =
        out.front() != '.' && out.size() <= 100 && std::all_of(out.begin(), out.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
        });
    if (!safe) {
      problem(
          node, key,
          "'" + out +
              "' is not a name: use letters, digits, '.', '_' and '-' (not first), at most 100");
      return false;
    }
    return true;
  }
  void names(const YAML::Node& node, const std::string& key, std::vector<std::string>& out) {
    texts(node, key, out);
    for (const auto& item : node) {
      std::string checked;
      if (item.IsScalar()) name(item, key, checked);
    }
  }
  void texts(const YAML::Node& node, const std::string& key, std::vector<std::string>& out) {
    if (!node.IsSequence() || node.size() == 0) {
      problem(node, key, "expects a non-empty list, e.g. [a, b]");
      return;
    }
    out.clear();
    for (const auto& item : node) {
      std::string value;
      if (text(item, key, value)) out.push_back(value);
    }
  }
  // A count in [1, max]: each unit is work (a seed is a training run).
  void positive(const YAML::Node& node, const std::string& key, int64_t& out, int64_t max) {
    int64_t value = 0;
    if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value) || value < 1) {
      problem(node, key, "expects a positive integer");
      return;
    }
    if (value > max) {
      problem(node, key, fmt::format("{} is over the limit of {}", value, max));
      return;
    }
    out = value;
  }
  // A training.max_time value, checked by the config schema's own parser.
  void budget(const YAML::Node& node, const std::string& key, std::string& out) {
    if (!text(node, key, out)) return;
    try {
      apply_overrides(*scratch_, {"training.max_time=" + out});
    } catch (const ConfigError& e) {
      problem(node, key, "is not a duration like 30m or 1h (" + e.problems.front() + ")");
    }
  }
  // Keys of a mapping, each once; a key that is not a name is a problem.
  template <class Visit>
  void mapping(const YAML::Node& node, const std::string& what, Visit&& visit) {
    if (!node.IsMap()) {
      problem(node, what, "expects a mapping");
      return;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        problem(entry.first, what, "a key must be a name");
        continue;
      }
      const std::string key = entry.first.Scalar();
      if (!seen.insert(key).second) {
        problem(entry.first, what, "'" + key + "' appears twice");
        continue;
      }
      visit(key, entry.first, entry.second);
    }
  }

 private:
  std::string path_;
  std::vector<std::string> problems_;
  std::unique_ptr<RunConfig> scratch_ = std::make_unique<RunConfig>(default_config());
};

bool has_model(const ExperimentPlan& plan, const std::string& name) {
  return std::any_of(plan.models.begin(), plan.models.end(),
                     [&](const PlanModel& m) { return m.name == name; });
}

// The plan's tokenizer_prefix with {languages} replaced by `languages`.
std::string tokenizer_prefix(const ExperimentPlan& plan, const std::string& languages) {
  std::string prefix = plan.tokenizer_prefix;
  const std::string placeholder = "{languages}";
  if (const size_t at = prefix.find(placeholder); at != std::string::npos)
    prefix.replace(at, placeholder.size(), languages);
  return prefix;
}

bool is_language(const std::string& code) {
  return !code.empty() && code.size() <= 8 && std::all_of(code.begin(), code.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || c == '_';
  });
}

// "de-en" as a direction; false when it is not two different language codes.
bool parse_pair(const std::string& name, PlanDirection& direction) {
  const size_t dash = name.find('-');
  direction.src = name.substr(0, dash);
  direction.tgt = dash == std::string::npos ? "" : name.substr(dash + 1);
  return is_language(direction.src) && is_language(direction.tgt) && direction.src != direction.tgt;
}

void read_direction_settings(PlanReader& reader, const YAML::Node& node, const std::string& name,
                             PlanDirection& direction) {
  reader.mapping(
      node, name, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
        const std::string dotted = name + "." + key;
        if (key == "budget") {
          reader.budget(value, dotted, direction.budget);
        } else if (key == "seeds") {
          reader.positive(value, dotted, direction.seeds, kMaxSeeds);
        } else if (key == "tests") {
          reader.names(value, dotted, direction.tests);
        } else if (key == "set") {
          reader.mapping(value, dotted,
                         [&](const std::string& model, const YAML::Node&, const YAML::Node& sets) {
                           std::vector<std::string> overrides;
                           reader.texts(sets, dotted + "." + model, overrides);
                           direction.overrides[model] = overrides;
                         });
        } else {
          reader.problem(key_node, dotted, unknown_key(key, kDirectionKeys));
        }
      });
}

void read_directions(PlanReader& reader, const YAML::Node& node, const ExperimentPlan& plan,
                     std::vector<PlanDirection>& directions, const std::string& budget,
                     int64_t seeds, const std::vector<std::string>& tests) {
  if (!node.IsSequence() || node.size() == 0) {
    reader.problem(node, "directions", "expects a non-empty list of pairs: [de-en, en-de]");
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string key = fmt::format("directions[{}]", i + 1);
    PlanDirection direction;
    direction.budget = budget;
    direction.seeds = seeds;
    direction.tests = tests;
    direction.where = reader.where(item);
    std::string name;
    YAML::Node settings;
    if (item.IsScalar()) {
      name = item.Scalar();
    } else if (item.IsMap() && item.size() == 1 && item.begin()->first.IsScalar()) {
      name = item.begin()->first.Scalar();
      settings = item.begin()->second;
    } else {
      reader.problem(item, key,
                     "expects a pair (de-en) or one pair with its settings ({de-en: {seeds: 3}})");
      continue;
    }
    if (!parse_pair(name, direction)) {
      reader.problem(item, key, "'" + name + "' is not a pair of two language codes like de-en");
      continue;
    }
    if (!seen.insert(name).second) {
      reader.problem(item, key, "'" + name + "' is listed twice");
      continue;
    }
    if (settings && !settings.IsNull())
      read_direction_settings(reader, settings, key + " " + name, direction);
    for (const auto& [model, overrides] : direction.overrides) {
      if (!has_model(plan, model))
        reader.problem(item, key + " " + name + ".set",
                       "'" + model + "' is not one of the plan's models");
    }
    directions.push_back(std::move(direction));
  }
}

void read_multilingual(PlanReader& reader, const YAML::Node& node, ExperimentPlan& plan,
                       const std::string& budget) {
  reader.mapping(
      node, "multilingual",
      [&](const std::string& name, const YAML::Node& name_node, const YAML::Node& settings) {
        PlanMultilingual system;
        std::string checked;
        if (!reader.name(name_node, "multilingual", checked)) return;
        system.name = name;
        system.budget = budget;
        system.where = reader.where(name_node);
        const std::string key = "multilingual." + name;
        if (has_model(plan, name)) {
          reader.problem(name_node, key, "is also the name of a model");
        }
        YAML::Node directions;
        reader.mapping(settings, key,
                       [&](const std::string& setting, const YAML::Node& setting_node,
                           const YAML::Node& value) {
                         if (setting == "model") {
                           if (reader.text(value, key + ".model", system.model) &&
                               !has_model(plan, system.model)) {
                             reader.problem(
                                 value, key + ".model",
                                 "'" + system.model + "' is not one of the plan's models");
                           }
                         } else if (setting == "directions") {
                           directions = value;
                         } else if (setting == "budget") {
                           reader.budget(value, key + ".budget", system.budget);
                         } else if (setting == "set") {
                           reader.texts(value, key + ".set", system.overrides);
                         } else {
                           reader.problem(setting_node, key + "." + setting,
                                          unknown_key(setting, kMultilingualKeys));
                         }
                       });
        if (system.model.empty())
          reader.problem(name_node, key + ".model",
                         "is required: the plan's model whose config it trains");
        std::vector<std::string> pairs;
        if (directions.IsNull()) {
          reader.problem(name_node, key + ".directions",
                         "is required: two directions or more of the plan, e.g. [de-en, fr-en]");
        } else {
          reader.texts(directions, key + ".directions", pairs);
        }
        for (const auto& pair : pairs) {
          const auto found =
              std::find_if(plan.directions.begin(), plan.directions.end(),
                           [&](const PlanDirection& d) { return d.src + "-" + d.tgt == pair; });
          if (found == plan.directions.end()) {
            reader.problem(directions, key + ".directions",
                           "'" + pair +
                               "' is not one of the plan's directions (its bilingual models are "
                               "the comparison)");
          } else {
            system.directions.push_back(*found);
          }
        }
        if (!pairs.empty() && pairs.size() < 2)
          reader.problem(directions, key + ".directions", "needs two directions or more");
        plan.multilingual.push_back(std::move(system));
      });
}

// Every file a run of `config` in `direction` reads: training corpora, validation, test sets.
void check_data(PlanReader& reader, const YAML::Node& item, const RunConfig& config,
                const PlanDirection& direction) {
  std::vector<std::pair<std::string, std::string>> splits;
  for (const auto& corpus : config.data.train) splits.emplace_back(corpus.split, "training corpus");
  splits.emplace_back(config.data.valid, "validation set");
  for (const auto& test : direction.tests) splits.emplace_back(test, "test set");
  for (const auto& [split, what] : splits) {
    for (const auto& lang : {direction.src, direction.tgt}) {
      const std::string path = config.corpus_path(split, lang);
      if (!fs::exists(path)) {
        reader.problem(
            item, "directions " + direction.src + "-" + direction.tgt,
            fmt::format("the {} '{}' has no {} file: {}{}", what, split, lang, path,
                        what == "test set" ? " (list the test sets it has with tests:)" : ""));
      }
    }
  }
}

}  // namespace

std::string seed_folder(const std::string& model, int64_t seed) {
  return seed == 1 ? model : fmt::format("{}_seed{}", model, seed);
}

std::string direction_report(const PlanDirection& direction) {
  return "reports/multi30k_" + direction.pair();
}

std::vector<std::string> run_overrides(const ExperimentPlan& plan, const PlanDirection& direction,
                                       const std::string& model) {
  std::string tests;
  for (const auto& test : direction.tests) tests += (tests.empty() ? "" : ", ") + test;
  const auto [first, second] = std::minmax(direction.src, direction.tgt);
  const std::string prefix = tokenizer_prefix(plan, first + "_" + second);
  std::vector<std::string> overrides = {"data.src_lang=" + direction.src,
                                        "data.tgt_lang=" + direction.tgt,
                                        "data.test=[" + tests + "]", "tokenizer.prefix=" + prefix};
  if (!direction.budget.empty()) overrides.push_back("training.max_time=" + direction.budget);
  if (auto own = direction.overrides.find(model); own != direction.overrides.end()) {
    overrides.insert(overrides.end(), own->second.begin(), own->second.end());
  }
  return overrides;
}

const PlanModel& ExperimentPlan::model(const std::string& wanted) const {
  for (const auto& m : models) {
    if (m.name == wanted) return m;
  }
  throw std::invalid_argument("no model '" + wanted + "' in the plan " + path);
}

std::vector<std::string> multilingual_overrides(const ExperimentPlan& plan,
                                                const PlanMultilingual& system) {
  std::set<std::string> languages;
  std::string directions;
  for (const auto& direction : system.directions) {
    languages.insert({direction.src, direction.tgt});
    directions += (directions.empty() ? "" : ", ") + direction.src + "-" + direction.tgt;
  }
  std::string joined;
  for (const auto& lang : languages) joined += (joined.empty() ? "" : "_") + lang;
  const std::string prefix = tokenizer_prefix(plan, joined);
  std::string
      tests;  // the test sets every direction has (training reads none; nmtzoo-prepare prints them)
  for (const auto& test : system.directions.front().tests) {
    const bool everywhere = std::all_of(
        system.directions.begin(), system.directions.end(), [&](const PlanDirection& d) {
          return std::find(d.tests.begin(), d.tests.end(), test) != d.tests.end();
        });
    if (everywhere) tests += (tests.empty() ? "" : ", ") + test;
  }
  std::vector<std::string> overrides = {"data.directions=[" + directions + "]",
                                        "data.test=[" + tests + "]", "tokenizer.prefix=" + prefix};
  if (!system.budget.empty()) overrides.push_back("training.max_time=" + system.budget);
  overrides.insert(overrides.end(), system.overrides.begin(), system.overrides.end());
  return overrides;
}

ExperimentPlan load_plan(const std::string& path) {
  const YAML::Node root = load_yaml_file(path);
  ExperimentPlan plan;
  plan.path = path;
  plan.name = fs::path(path).stem().string();
  PlanReader reader(path);
  if (!root.IsMap())
    throw ConfigError({path + ":1: a plan is a mapping of keys (models, directions, ...)"});
  std::string budget;
  int64_t seeds = 1;
  std::vector<std::string> tests = {"test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"};
  // Null until the plan sets them (a default-constructed YAML::Node is a defined null).
  YAML::Node directions, baseline, ensemble, models, multilingual;
  reader.mapping(
      root, "plan",
      [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
        if (key == "title") {
          reader.text(value, key, plan.title);
        } else if (key == "name") {
          reader.name(value, key, plan.name);
        } else if (key == "tokenizer_prefix") {
          reader.text(value, key, plan.tokenizer_prefix);
        } else if (key == "baseline") {
          baseline = value;
        } else if (key == "correction") {
          if (!reader.text(value, key, plan.correction)) return;
          if (plan.correction != "holm" && plan.correction != "bonferroni" &&
              plan.correction != "none") {
            reader.problem(value, key,
                           "'" + plan.correction + "' is not one of holm, bonferroni, none");
          }
        } else if (key == "resamples") {
          reader.positive(value, key, plan.resamples, kMaxResamples);
        } else if (key == "budget") {
          reader.budget(value, key, budget);
        } else if (key == "seeds") {
          reader.positive(value, key, seeds, kMaxSeeds);
        } else if (key == "tests") {
          reader.names(value, key, tests);
        } else if (key == "models") {
          models = value;
          reader.mapping(
              value, key,
              [&](const std::string& name, const YAML::Node& name_node, const YAML::Node& config) {
                PlanModel model{name, ""};
                std::string checked;
                if (reader.name(name_node, "models", checked) &&
                    reader.text(config, "models." + name, model.config)) {
                  plan.models.push_back(model);
                }
              });
        } else if (key == "ensemble") {
          ensemble = value;
        } else if (key == "directions") {
          directions = value;
        } else if (key == "multilingual") {
          multilingual = value;
        } else {
          reader.problem(key_node, key, unknown_key(key, kPlanKeys));
        }
      });
  if (plan.models.empty())
    reader.problem(root, "models", "is required: name: config file, one a model");
  if (plan.tokenizer_prefix.empty()) {
    reader.problem(
        root, "tokenizer_prefix",
        "is required: each direction's tokenizer, e.g. runs/spm_multi30k_{languages}_bpe8k "
        "({languages}: the pair's codes, sorted, so de-en and en-de share one)");
  }
  if (!baseline.IsNull() && reader.text(baseline, "baseline", plan.baseline) &&
      !has_model(plan, plan.baseline)) {
    reader.problem(baseline, "baseline", "'" + plan.baseline + "' is not one of the plan's models");
  }
  if (baseline.IsNull() && !plan.models.empty()) plan.baseline = plan.models.front().name;
  if (!ensemble.IsNull()) {
    reader.texts(ensemble, "ensemble", plan.ensemble);
    for (const auto& member : plan.ensemble) {
      if (!has_model(plan, member))
        reader.problem(ensemble, "ensemble", "'" + member + "' is not one of the plan's models");
    }
    if (plan.ensemble.size() == 1)
      reader.problem(ensemble, "ensemble", "needs two members or more");
  }
  if (directions.IsNull()) {
    reader.problem(root, "directions", "is required: a list of pairs such as [de-en, en-de]");
  } else {
    read_directions(reader, directions, plan, plan.directions, budget, seeds, tests);
  }
  if (!multilingual.IsNull()) read_multilingual(reader, multilingual, plan, budget);
  // Each config alone first, so a broken one is named once, then with each direction's overrides.
  std::set<std::string> loadable;
  if (reader.problems().empty()) {
    for (const auto& model : plan.models) {
      try {
        load_config(model.config);
        loadable.insert(model.name);
      } catch (const ConfigError& e) {
        for (const auto& problem : e.problems)
          reader.problem(models[model.name], "models." + model.name, problem);
      }
    }
  }
  for (size_t i = 0; i < plan.directions.size() && loadable.size() == plan.models.size(); ++i) {
    const PlanDirection& direction = plan.directions[i];
    for (const auto& model : plan.models) {
      try {
        const RunConfig config =
            load_config(model.config, run_overrides(plan, direction, model.name));
        check_config(config);  // what nmtzoo-train would refuse after hours of other runs
        if (model.name == plan.models.front().name)
          check_data(reader, directions[i], config, direction);
      } catch (const ConfigError& e) {
        for (const auto& problem : e.problems) {
          reader.problem(
              directions[i],
              fmt::format("directions {}-{} models.{}", direction.src, direction.tgt, model.name),
              problem);
        }
      }
    }
  }
  for (const auto& system : plan.multilingual) {
    if (loadable.size() != plan.models.size() || system.directions.empty()) break;
    try {
      RunConfig config =
          load_config(plan.model(system.model).config, multilingual_overrides(plan, system));
      check_config(config);
    } catch (const ConfigError& e) {
      for (const auto& problem : e.problems)
        reader.problem(multilingual[system.name], "multilingual." + system.name, problem);
    }
  }
  if (!reader.problems().empty()) throw ConfigError(reader.problems());
  return plan;
}

double last_budget_scale(const std::string& log) {
  std::ifstream in(log);
  static const std::regex counts(R"(a second here counts ([0-9.]+) s of training\.max_time)");
  double scale = 1;
  std::smatch match;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, match, counts)) scale = std::stod(match[1]);
  }
  return scale;
}

RunProgress last_progress(const std::string& metrics) {
  std::ifstream in(metrics);
  RunProgress progress;
  std::deque<double> intervals;
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.contains("wall_seconds") && record.contains("step")) {
      const RunProgress previous = progress;
      progress = {record["step"].get<int64_t>(), record["wall_seconds"].get<double>()};
      if (previous.step > 0 && progress.step > previous.step &&
          progress.wall_seconds > previous.wall_seconds) {
        intervals.push_back((progress.wall_seconds - previous.wall_seconds) /
                            static_cast<double>(progress.step - previous.step));
        if (intervals.size() > 9) intervals.pop_front();
      }
    }
  }
  if (!intervals.empty()) {
    std::vector<double> sorted(intervals.begin(), intervals.end());
    std::sort(sorted.begin(), sorted.end());
    progress.seconds_per_update = sorted[(sorted.size() - 1) / 2];
  } else if (progress.step > 0) {
    progress.seconds_per_update = progress.wall_seconds / static_cast<double>(progress.step);
  }
  return progress;
}

}  // namespace nmtzoo
