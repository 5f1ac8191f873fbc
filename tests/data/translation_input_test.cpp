// SPDX-License-Identifier: MIT
#include "torch_free/data/translation_input.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace nmtzoo {
namespace {

std::string error_of(const std::string& line, InputFormat format) {
  try {
    parse_request(line, format, "in.jsonl:7");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(TranslationInput, TsvFieldsAreSourcePrefixAndConstraintsWithEmptyFieldsAllowed) {
  auto r = parse_request("ein Hund\tA\tdog\t\tbrown fur", InputFormat::kTsv, "x:1");
  EXPECT_EQ(r.source, "ein Hund");
  EXPECT_EQ(r.prefix, "A");
  EXPECT_EQ(r.constraints, (std::vector<std::string>{"dog", "brown fur"}));
  auto only_source = parse_request("ein Hund", InputFormat::kTsv, "x:1");
  EXPECT_EQ(only_source.source, "ein Hund");
  EXPECT_TRUE(only_source.prefix.empty() && only_source.constraints.empty());
  auto no_prefix = parse_request("ein Hund\t\tdog", InputFormat::kTsv, "x:1");
  EXPECT_TRUE(no_prefix.prefix.empty());
  EXPECT_EQ(no_prefix.constraints, std::vector<std::string>{"dog"});
  EXPECT_EQ(parse_request("a\tb", InputFormat::kText, "x:1").source, "a\tb");
}

TEST(TranslationInput, JsonlObjects) {
  auto r = parse_request(R"({"src": "ein Hund", "prefix": "A", "constraints": ["dog"]})",
                         InputFormat::kJsonl, "x:1");
  EXPECT_EQ(r.source, "ein Hund");
  EXPECT_EQ(r.prefix, "A");
  EXPECT_EQ(r.constraints, std::vector<std::string>{"dog"});
  auto minimal = parse_request(R"({"src": "", "prefix": null})", InputFormat::kJsonl, "x:1");
  EXPECT_TRUE(minimal.source.empty() && minimal.prefix.empty());
}

// A JSON escape must not let in what a plain text line may not hold.
TEST(TranslationInput, JsonlTextsFollowTheRuleOfTextLines) {
  EXPECT_EQ(error_of(R"({"src": "a\u0000b"})", InputFormat::kJsonl),
            "in.jsonl:7: src has a NUL byte at byte 2");
  EXPECT_EQ(error_of(R"({"src": "a", "prefix": "\u0000"})", InputFormat::kJsonl),
            "in.jsonl:7: prefix has a NUL byte at byte 1");
  EXPECT_EQ(error_of(R"({"src": "a", "constraints": ["dog", "c\u0000t"]})", InputFormat::kJsonl),
            "in.jsonl:7: constraints[1] has a NUL byte at byte 2");
}

TEST(TranslationInput, BadJsonlNamesTheLineAndTheField) {
  EXPECT_NE(error_of("{\"src\": ", InputFormat::kJsonl).find("in.jsonl:7: not valid JSON"),
            std::string::npos);
  EXPECT_NE(error_of("", InputFormat::kJsonl).find("in.jsonl:7"), std::string::npos);
  EXPECT_NE(error_of("[1]", InputFormat::kJsonl).find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{}", InputFormat::kJsonl).find("missing field \"src\""), std::string::npos);
  EXPECT_NE(error_of(R"({"src": 3})", InputFormat::kJsonl)
                .find("field \"src\" must be a string, got number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"src": "a", "constraints": "dog"})", InputFormat::kJsonl)
                .find("\"constraints\" must be a list"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"src": "a", "constraints": ["dog", 1]})", InputFormat::kJsonl)
                .find("constraints[1]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"source": "a"})", InputFormat::kJsonl).find("unknown field \"source\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"src": "a", "n": 5e2055555555})", InputFormat::kJsonl)
                .find("in.jsonl:7: not valid JSON"),
            std::string::npos)
      << "a number nlohmann cannot hold (found by fuzz/translation_input_fuzzer.cpp)";
  EXPECT_THROW(parse_input_format("csv"), std::invalid_argument);
}

}  // namespace
}  // namespace nmtzoo
