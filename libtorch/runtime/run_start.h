// SPDX-License-Identifier: MIT
// The start of a run, the same in nmtzoo-prepare and nmtzoo-train: first every check that needs
// no work (the checkpoint a run resumes or is fine-tuned from, against the config), then the
// tokenizers and the binary dataset made ready as one critical section. So a start that is going
// to fail touches nothing of the run, and two processes never train one tokenizer or write one
// dataset at once.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "libtorch/runtime/checkpoint.h"
#include "torch_free/config/config.h"
#include "torch_free/data/dataset_prepare.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {

// What a run's files are named by, resolved as nmtzoo-train stores them in the run's config and
// its checkpoints: training.output_dir is the run folder, tokenizer.prefix <run dir>/spm when
// unset. The stored config must not depend on the file name it was loaded from.
void resolve_run_paths(RunConfig& config);

// Keys of `sections` ("data", "tokenizer", "model") whose values differ between the config `now`
// and a checkpoint's, each as "<key>: <checkpoint's> in the checkpoint, <now's> now".
std::vector<std::string> differing_keys(const RunConfig& now, const RunConfig& checkpoint,
                                        const std::vector<std::string>& sections);

// The checkpoint a run starts from, read (and checksummed) once, and checked against its config.
struct StartCheckpoints {
  std::string resume_path;                  // a resumed run's checkpoint_last.pt, else ""
  std::optional<CheckpointInfo> resumed;    // read from resume_path
  std::optional<CheckpointInfo> init_from;  // training.init_from of a run that is not resumed
};

// Every check of a start that needs neither tokenizer nor dataset, made before anything is written.
// With `resume_path`: that checkpoint was trained with the config's data, tokenizer and model keys
// ("cannot resume: the config's data, tokenizer or model keys differ from the checkpoint's: ..."
// listing each key). Otherwise, when training.init_from is set: it exists, is a readable
// checkpoint, holds the model the config describes, dropout aside ("training.init_from: '<path>'
// holds another model than this config describes: ..." listing each key), and has the config's
// tokenizer.joint. Errors name the file and the keys.
StartCheckpoints check_start(const RunConfig& config, const std::string& resume_path = "");

struct RunPreparation {
  std::string what = "nmtzoo-prepare";  // the program, as a lock's holder
  std::string held_dir;  // a folder the caller has locked already (a trainer's run folder)
  bool force = false;    // prepare the dataset even when it is up to date (nmtzoo-prepare --force)
  PrepareOptions dataset;
};

struct PreparedRun {
  Tokenizers tokenizers;
  std::string tokenizer_fingerprint;
  std::string stale;                    // why the dataset was prepared; "" when it was up to date
  std::optional<DatasetManifest> made;  // the dataset this call prepared
};

// Makes the run's tokenizers and binary dataset ready, after check_start. When both are ready
// already it only loads and checks them, taking no lock (a tokenizer or dataset in a read-only
// place serves). Otherwise it works as one critical section: it holds the lock of the dataset
// folder and, when a tokenizer model is missing, that of a folder beside the models
// (".<prefix name>.lock", e.g. runs/x/.spm.lock for runs/x/spm.model), taken in one order by every
// process; while another process holds one it waits (saying so on `log`), and then finds that
// process's work done. Inside: a tokenizer file that is missing is adopted from the checkpoint the
// run starts from (a resumed run's own, or training.init_from's), else trained (never for a
// resumed run); the tokenizers must be the ones that checkpoint was trained with ("cannot resume:
// the tokenizer model changed ...", "training.init_from: '<path>' was trained with another
// tokenizer ..."); only then is the dataset prepared, when it is missing or stale, or always with
// `force`.
PreparedRun prepare_run(const RunConfig& config, const StartCheckpoints& start, std::ostream& log,
                        const RunPreparation& options = {});

}  // namespace nmtzoo
