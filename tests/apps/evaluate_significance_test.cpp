// SPDX-License-Identifier: MIT
// nmtzoo-evaluate's confidence intervals, paired tests and multi-system tables against sacreBLEU
// 2.6.0's own output (tests/data/sacrebleu/significance/, made by
// scripts/make_significance_goldens.py with Debian 12's numpy 1.24.2): text byte for byte, JSON
// numbers within 1e-9 and every other JSON value equal. Only the version differs: 2.6.0+nmtzoo.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

const std::string kGoldens = std::string(NMTZOO_SOURCE_DIR) + "/tests/data/sacrebleu/significance";

std::string marked_version(std::string text) {
  for (const std::string from : {"version:2.6.0\n", "version:2.6.0 =", "version:2.6.0\""}) {
    std::string to = from;
    to.insert(13, "+nmtzoo");
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void expect_json_close(const nlohmann::json& expected, const nlohmann::json& actual,
                       const std::string& path) {
  if (expected.is_number_float() && actual.is_number()) {
    EXPECT_NEAR(expected.get<double>(), actual.get<double>(), 1e-9) << path;
  } else if (expected.is_object() || expected.is_array()) {
    ASSERT_EQ(expected.type(), actual.type()) << path;
    ASSERT_EQ(expected.size(), actual.size()) << path;
    if (expected.is_array()) {
      for (size_t i = 0; i < expected.size(); ++i) {
        expect_json_close(expected[i], actual[i], path + "[" + std::to_string(i) + "]");
      }
    } else {
      auto a = actual.begin();
      for (auto e = expected.begin(); e != expected.end(); ++e, ++a) {
        ASSERT_EQ(e.key(), a.key()) << path;  // same keys in the same order
        expect_json_close(e.value(), a.value(), path + "/" + e.key());
      }
    }
  } else if (expected.is_string()) {
    const std::string text = expected.get<std::string>();
    EXPECT_EQ(text == "2.6.0" ? "2.6.0+nmtzoo" : marked_version(text + "\n"),
              text == "2.6.0" ? actual.get<std::string>() : actual.get<std::string>() + "\n")
        << path;
  } else {
    EXPECT_EQ(expected, actual) << path;
  }
}

class SacrebleuSignificanceGolden : public ::testing::TestWithParam<nlohmann::json> {};

TEST_P(SacrebleuSignificanceGolden, OutputMatchesSacrebleu) {
  const nlohmann::json& golden = GetParam();
  const std::string name = golden.at("name");
  std::string command =
      "cd " + shell_quoted(kGoldens) + " && env -u SACREBLEU_FORMAT -u SACREBLEU_SEED";
  for (const auto& [key, value] : golden.at("env").items()) {
    command += " " + key + "=" + shell_quoted(value.get<std::string>());
  }
  command += " " + shell_quoted(testing::bin("nmtzoo-evaluate"));
  if (golden.at("references") == "multi30k") {
    command += " " + shell_quoted(testing::multi30k("test_2016_flickr.en.gz"));
  } else {
    command += " ../ref1.txt ../ref2.txt";
  }
  for (const auto& arg : golden.at("args")) command += " " + shell_quoted(arg.get<std::string>());
  const testing::CommandResult result = testing::run_command(command);
  ASSERT_EQ(result.status, 0) << command;
  const std::string expected = testing::read_text(kGoldens + "/" + name + ".out");
  if (name.size() > 5 && name.substr(name.size() - 5) == "_json") {
    expect_json_close(nlohmann::json::parse(expected), nlohmann::json::parse(result.output), name);
  } else {
    EXPECT_EQ(marked_version(expected), result.output) << command;
  }
}

std::vector<nlohmann::json> golden_cases() {
  return nlohmann::json::parse(testing::read_text(kGoldens + "/cases.json"))
      .get<std::vector<nlohmann::json>>();
}

INSTANTIATE_TEST_SUITE_P(Sacrebleu260, SacrebleuSignificanceGolden,
                         ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<nlohmann::json>& info) {
                           return info.param.at("name").get<std::string>();
                         });

}  // namespace
}  // namespace nmtzoo
