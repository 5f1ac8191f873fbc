// SPDX-License-Identifier: MIT
#include "libtorch/train/metrics_log.h"

#include <nlohmann/json.hpp>

#include <fstream>

#include "torch_free/io/atomic_file.h"
#include "torch_free/io/text_file.h"
#include "torch_free/plot/svg.h"

namespace nmtzoo {

MetricsLog::MetricsLog(std::string path) : path_(std::move(path)) {}

void MetricsLog::append(const nlohmann::json& record) {
  std::ofstream out(path_, std::ios::app);
  out << record.dump() << '\n';
  out.flush();
  if (!out) throw IoError("cannot append to '" + path_ + "'");
}

void MetricsLog::truncate_after(int64_t step) {
  std::ifstream in(path_);
  if (!in) return;
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) continue;  // a line cut short by a crash
    if (record.value("step", int64_t{0}) <= step) kept += line + "\n";
  }
  write_file_atomically(path_, [&](std::ostream& out) { out << kept; });
}

void render_learning_curves(const std::string& metrics_path, const std::string& dir,
                            const std::string& run_name) {
  PlotSeries train_loss{run_name + " train", {}, {}};
  PlotSeries valid_loss{run_name + " valid", {}, {}};
  PlotSeries valid_bleu{run_name, {}, {}};
  std::ifstream in(metrics_path);
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded()) continue;
    const auto step = static_cast<double>(record.value("step", int64_t{0}));
    if (record.value("type", "") == "train") {
      train_loss.x.push_back(step);
      train_loss.y.push_back(record.value("loss", 0.0));
    } else if (record.value("type", "") == "valid") {
      valid_loss.x.push_back(step);
      valid_loss.y.push_back(record.value("loss", 0.0));
      if (record.contains("bleu")) {
        valid_bleu.x.push_back(record.value("wall_seconds", 0.0) / 60.0);
        valid_bleu.y.push_back(record.value("bleu", 0.0));
      }
    }
  }
  auto save = [&](const std::string& name, const std::string& svg) {
    write_file_atomically(dir + "/" + name, [&](std::ostream& out) { out << svg; });
  };
  save("curve_train_loss.svg", line_chart_svg({train_loss, valid_loss}, "Loss (label-smoothed)",
                                              "update step", "loss per target token"));
  save("curve_valid_bleu.svg",
       line_chart_svg({valid_bleu}, "Validation BLEU", "wall time (min)", "BLEU"));
}

}  // namespace nmtzoo
