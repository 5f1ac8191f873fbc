// SPDX-License-Identifier: MIT
// The config loader on arbitrary text, read twice: as a YAML config (parse_config, then
// check_config) and line by line as `--set key=value` overrides (apply_overrides). A ConfigError
// is the expected answer to bad input; every config that loads must also survive the documented
// round trip: to_yaml() writes YAML that parse_config reads back to the same config.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/fuzz_support.h"
#include "torch_free/config/loader.h"

namespace {

using nmtzoo::ConfigError;
using nmtzoo::RunConfig;

void check_round_trip(const RunConfig& config) {
  const std::string written = nmtzoo::to_yaml(config, "");
  std::optional<RunConfig> reread;
  try {
    reread = nmtzoo::parse_config(written, "written.yaml");
  } catch (const ConfigError& e) {
    NMTZOO_FUZZ_CHECK(false, std::string("to_yaml wrote a config that does not load: ") + e.what() +
                                 "\n" + written);
  }
  const std::string rewritten = nmtzoo::to_yaml(*reread, "");
  NMTZOO_FUZZ_CHECK(rewritten == written,
                    "to_yaml's config reads back differently:\n" + written + "---\n" + rewritten);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    RunConfig config = nmtzoo::parse_config(text, "fuzz.yaml");
    check_round_trip(config);
    nmtzoo::check_config(config);
  } catch (const ConfigError&) {
  }

  static const RunConfig defaults = nmtzoo::default_config();
  RunConfig overridden = defaults;
  try {
    nmtzoo::apply_overrides(overridden, nmtzoo::fuzz::split_lines(text));
    check_round_trip(overridden);
  } catch (const ConfigError&) {
  }
  return 0;
}
