// SPDX-License-Identifier: MIT
// Data-parallel training on PyTorch's c10d: ProcessGroupGloo on CPU (ProcessGroupNCCL is the
// CUDA counterpart in official LibTorch builds), rendezvous through a TCPStore, launched with
// torchrun's environment variables.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace nmtzoo {

class Communicator {
 public:
  // From RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (LOCAL_RANK is accepted and ignored on CPU).
  // Returns null when WORLD_SIZE is unset or 1. Throws a clear error when variables are missing
  // or peers cannot be reached within `timeout`.
  static std::shared_ptr<Communicator> from_environment(std::chrono::milliseconds timeout);
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual void barrier() = 0;
  // Rank 0 runs `work` (e.g. preparing a dataset, which may take longer than any collective's
  // timeout) while the others wait for it without a deadline; they fail when rank 0's work fails
  // (with its message) or rank 0 dies. `what` completes "rank 0 failed while it ...".
  virtual void run_on_main(const std::function<void()>& work, const std::string& what) = 0;
  // Makes every rank start from rank 0's parameters.
  virtual void broadcast_parameters(torch::nn::Module& model) = 0;
  // Sums every gradient (flattened into buckets), the loss and nll sums and the token count over
  // the ranks; returns the total token count, by which the trainer then divides the gradients.
  virtual int64_t all_reduce_gradients(torch::nn::Module& model, at::Tensor& loss_sum,
                                       at::Tensor& nll_sum, int64_t tokens) = 0;
  // True on every rank when `flag` is true on any (so all ranks stop at the same update).
  virtual bool any(bool flag) = 0;
  // The sum of every rank's `value`, on every rank.
  virtual double sum(double value) = 0;
  // Whether every rank holds bit-identical parameters (compares per-rank checksums).
  virtual bool replicas_identical(torch::nn::Module& model) = 0;
  // Seconds spent in all_reduce_gradients so far.
  virtual double all_reduce_seconds() const = 0;

  // This rank's batches: every world_size-th batch from the rank's own offset. Ranks left with
  // one batch fewer get an empty batch, so all ranks make the same number of updates and every
  // sentence is still trained once per epoch.
  std::vector<std::vector<int64_t>> shard(const std::vector<std::vector<int64_t>>& batches) const;
};

}  // namespace nmtzoo
