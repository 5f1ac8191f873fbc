// Process-wide settings every app applies first: thread count and device.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/config/config.h"
#include "core/data/tokenizers.h"

namespace nmtzoo {

class EncoderDecoder;

// LibTorch's intra-op threads: `threads`, or every core when 0 (LibTorch's own default can be 1).
// Also calls keep_freed_memory_for_reuse().
void configure_threads(int64_t threads);

// Makes glibc malloc keep freed memory, however large, for reuse instead of returning it to the
// system (process-wide; idempotent).
void keep_freed_memory_for_reuse();

// cpu, cuda (an error naming the key when no CUDA device is usable) or auto.
c10::Device resolve_device(DeviceChoice choice, const std::string& where = "training.device");
DeviceChoice parse_device_choice(const std::string& text);  // "cpu" | "cuda" | "auto"

// bfloat16 autocast on CPU for the scope, when `enabled`: matrix products in bf16, reductions and
// normalisations in float32 (LibTorch's CPU autocast policy).
class CpuAutocast {
 public:
  explicit CpuAutocast(bool enabled);
  ~CpuAutocast();
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;

 private:
  bool enabled_;
};

struct TrainedModel {
  RunConfig config;
  Tokenizers tokenizers;
  std::shared_ptr<EncoderDecoder> model;  // in eval mode, on the requested device
};

// Builds the model a checkpoint describes and loads its weights. The tokenizer files named in the
// stored config must exist and be the ones the model was trained with (fingerprint check).
TrainedModel load_trained_model(const std::string& checkpoint_path, const c10::Device& device);

}  // namespace nmtzoo
