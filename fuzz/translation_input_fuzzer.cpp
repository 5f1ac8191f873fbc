// SPDX-License-Identifier: MIT
// nmtzoo-translate's input formats on arbitrary lines: each line parsed as text, tsv and jsonl.
// std::invalid_argument naming the line is the expected answer to bad input; anything else
// thrown is a bug. Every jsonl request that loads must survive the round trip through JSON, and
// a tsv request must hold the line's fields.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_support.h"
#include "torch_free/data/translation_input.h"

namespace {

using nmtzoo::InputFormat;
using nmtzoo::TranslationRequest;

void check_jsonl_round_trip(const TranslationRequest& request) {
  nlohmann::json object{
      {"src", request.source}, {"prefix", request.prefix}, {"constraints", request.constraints}};
  std::string line;
  try {
    line = object.dump();
  } catch (const nlohmann::json::type_error&) {
    return;  // invalid UTF-8 that nlohmann's parser let through cannot be dumped strictly
  }
  const TranslationRequest again = nmtzoo::parse_request(line, InputFormat::kJsonl, "again:1");
  NMTZOO_FUZZ_CHECK(again.source == request.source && again.prefix == request.prefix &&
                        again.constraints == request.constraints,
                    "a jsonl request reads back differently: " + line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string& line : nmtzoo::fuzz::split_lines(text)) {
    const TranslationRequest plain = nmtzoo::parse_request(line, InputFormat::kText, "in:1");
    NMTZOO_FUZZ_CHECK(plain.source == line && plain.prefix.empty() && plain.constraints.empty(),
                      "text input must be the line itself: " + line);
    const TranslationRequest tsv = nmtzoo::parse_request(line, InputFormat::kTsv, "in:1");
    NMTZOO_FUZZ_CHECK(tsv.source == line.substr(0, line.find('\t')), "tsv source: " + line);
    const auto tabs = static_cast<size_t>(std::count(line.begin(), line.end(), '\t'));
    NMTZOO_FUZZ_CHECK(tsv.constraints.size() + (tabs >= 1 ? 1 : 0) <= tabs, "tsv fields: " + line);
    for (const auto& constraint : tsv.constraints) {
      NMTZOO_FUZZ_CHECK(!constraint.empty() && constraint.find('\t') == std::string::npos,
                        "tsv constraint: " + line);
    }
    try {
      check_jsonl_round_trip(nmtzoo::parse_request(line, InputFormat::kJsonl, "in.jsonl:7"));
    } catch (const std::invalid_argument& e) {
      NMTZOO_FUZZ_CHECK(std::string(e.what()).rfind("in.jsonl:7: ", 0) == 0,
                        std::string("the error must name the line: ") + e.what());
    }
  }
  return 0;
}
