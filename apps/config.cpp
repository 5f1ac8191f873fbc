// SPDX-License-Identifier: MIT
// nmtzoo-config: check a run config and print it fully resolved, or print the key reference.
#include <CLI/CLI.hpp>

#include <iostream>

#include "apps/common.h"
#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"

int main(int argc, char** argv) {
  CLI::App app{"Check an nmtzoo run config and print it with every key resolved."};
  std::string path;
  std::vector<std::string> overrides;
  bool reference = false;
  app.add_option("config", path, "YAML run config")->check(CLI::ExistingFile);
  app.add_option("--set", overrides, "override a key, e.g. --set training.lr=0.0005")
      ->type_name("KEY=VALUE");
  app.add_flag("--reference", reference, "print the Markdown reference of every key");
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] {
    nmtzoo::register_builtin_models();  // the architectures' own model keys
    if (reference) {
      std::cout << nmtzoo::config_reference_markdown();
      return 0;
    }
    if (path.empty()) {
      std::cerr << app.help();
      return 2;
    }
    auto config = nmtzoo::load_config(path, overrides);
    // The checks nmtzoo-train runs before any work, so a config this accepts trains.
    nmtzoo::check_run_config(config);
    std::cout << nmtzoo::to_yaml(config, nmtzoo::resolve_arch(config.model.arch));
    return 0;
  });
}
