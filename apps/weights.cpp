// SPDX-License-Identifier: MIT
// nmtzoo-weights: moves model weights between nmtzoo checkpoints and Python's torch.load.
#include <torch/torch.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "apps/common.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/runtime/weights.h"
#include "torch_free/archs/registry.h"
#include "torch_free/io/atomic_file.h"

int main(int argc, char** argv) {
  using namespace nmtzoo;
  CLI::App app{
      "Export a checkpoint's weights as a dict name -> tensor that Python reads with "
      "torch.load, or import such a file into a checkpoint of the same model."};
  app.require_subcommand(1);
  std::string checkpoint, weights, output;
  auto* export_command = app.add_subcommand("export", "checkpoint -> weights file for torch.load");
  export_command->add_option("checkpoint", checkpoint, "nmtzoo checkpoint")->required();
  export_command->add_option("weights", weights, "output .pt file")->required();
  auto* import_command = app.add_subcommand(
      "import", "weights file (e.g. from Python's torch.save of a state dict) -> checkpoint");
  import_command->add_option("checkpoint", checkpoint, "checkpoint of the same model")->required();
  import_command->add_option("weights", weights, "weights .pt file")->required();
  import_command->add_option("output", output, "new checkpoint")->required();
  CLI11_PARSE(app, argc, argv);
  nmtzoo::register_builtin_models();
  return run_app([&] {
    // Replacing an input would lose it (the checkpoint, or the weights being imported).
    if (export_command->parsed()) {
      check_output_is_not_an_input({"weights", weights}, {{"checkpoint", checkpoint}});
    }
    check_output_is_not_an_input({"output", output},
                                 {{"checkpoint", checkpoint}, {"weights", weights}});
    TrainedModel trained = load_trained_model(checkpoint, torch::kCPU);
    if (export_command->parsed()) {
      export_weights(*trained.model, weights);
      std::cerr << "wrote " << trained.model->named_parameters().size() << " parameters to "
                << weights << "\n";
      return 0;
    }
    import_weights(*trained.model, weights);
    CheckpointInfo info = read_checkpoint_info(checkpoint);
    save_checkpoint(output, trained.config, *trained.model, nullptr, info.progress,
                    trained.tokenizers);
    std::cerr << "wrote " << output << "\n";
    return 0;
  });
}
