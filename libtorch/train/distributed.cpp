// SPDX-License-Identifier: MIT
#include "libtorch/train/distributed.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace nmtzoo {
namespace {

constexpr int64_t kBucketElements = 4 * 1024 * 1024;  // 16 MB of float32 per all-reduce

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw std::runtime_error(std::string("distributed training needs the environment variable ") +
                             name + " (see scripts/launch.sh)");
  }
  return value;
}

int env_int(const char* name) {
  std::string text = required_env(name);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw std::runtime_error(std::string(name) + " must be an integer, but is '" + text + "'");
  }
}

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(int rank, int world_size, const std::string& address, int port,
                   std::chrono::milliseconds timeout)
      : rank_(rank), world_size_(world_size) {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(port);
    store_options.isServer = rank == 0;
    store_options.numWorkers = world_size;
    store_options.timeout = timeout;
    store_options.waitWorkers = true;
    const auto start = std::chrono::steady_clock::now();
    try {
      store_ = c10::make_intrusive<c10d::TCPStore>(address, store_options);
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(address));
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, rank, world_size, options);
    } catch (const std::exception& e) {
      // After how long: a port already in use fails at once, a missing peer after the timeout.
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      throw std::runtime_error(fmt::format(
          "rank {} of {} could not join the process group at {}:{} (after {:.1f} s; timeout {} "
          "s): {}",
          rank, world_size, address, port, seconds, timeout.count() / 1000.0, e.what()));
    }
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

  void barrier() override { wait(group_->barrier(), "barrier"); }

  void run_on_main(const std::function<void()>& work, const std::string& what) override {
    const std::string key = fmt::format("nmtzoo/run_on_main/{}", rounds_++);
    if (rank_ == 0) {
      std::string outcome = "ok";
      try {
        work();
      } catch (const std::exception& e) {
        outcome = std::string("error: ") + e.what();
        store_->set(key, std::vector<uint8_t>(outcome.begin(), outcome.end()));
        // The store lives in this process: let the others read the error before it exits.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (store_->add(key + "/read", 0) < world_size_ - 1 &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        throw;
      }
      store_->set(key, std::vector<uint8_t>(outcome.begin(), outcome.end()));
      return;
    }
    try {
      while (!store_->check({key})) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } catch (const std::exception& e) {
      throw std::runtime_error(
          fmt::format("rank {}: rank 0 died while it {}: {}", rank_, what, e.what()));
    }
    const std::vector<uint8_t> value = store_->get(key);
    const std::string outcome(value.begin(), value.end());
    store_->add(key + "/read", 1);
    if (outcome != "ok") {
      throw std::runtime_error(fmt::format("rank {}: rank 0 failed while it {}: {}", rank_, what,
                                           outcome.substr(std::string("error: ").size())));
    }
  }

  void broadcast_parameters(torch::nn::Module& model) override {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> tensors;
    for (auto& p : model.parameters()) tensors.push_back(p.data());
    for (auto& b : model.buffers()) tensors.push_back(b.data());
    for (auto& tensor : tensors) {
      std::vector<at::Tensor> one{tensor};
      wait(group_->broadcast(one), "broadcast of the parameters");
    }
  }

  int64_t all_reduce_gradients(torch::nn::Module& model, at::Tensor& loss_sum, at::Tensor& nll_sum,
                               int64_t tokens) override {
    auto start = std::chrono::steady_clock::now();
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> grads;
    for (auto& p : model.parameters()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad());
    }
    // Buckets of consecutive gradients, flattened, all-reduced, copied back.
    size_t begin = 0;
    while (begin < grads.size()) {
      size_t end = begin;
      int64_t elements = 0;
      while (end < grads.size() &&
             (end == begin || elements + grads[end].numel() <= kBucketElements)) {
        elements += grads[end].numel();
        ++end;
      }
      std::vector<at::Tensor> pieces;
      for (size_t i = begin; i < end; ++i) pieces.push_back(grads[i].reshape({-1}));
      std::vector<at::Tensor> bucket{torch::cat(pieces)};
      wait(group_->allreduce(bucket), "gradient all-reduce");
      int64_t offset = 0;
      for (size_t i = begin; i < end; ++i) {
        grads[i].copy_(bucket[0].narrow(0, offset, grads[i].numel()).view_as(grads[i]));
        offset += grads[i].numel();
      }
      begin = end;
    }
    std::vector<at::Tensor> totals{
        torch::stack({loss_sum.to(torch::kDouble).cpu(), nll_sum.to(torch::kDouble).cpu(),
                      torch::tensor(static_cast<double>(tokens), torch::kDouble)})};
    wait(group_->allreduce(totals), "loss all-reduce");
    loss_sum = totals[0][0].to(loss_sum.device(), loss_sum.scalar_type());
    nll_sum = totals[0][1].to(nll_sum.device(), nll_sum.scalar_type());
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<int64_t>(std::llround(totals[0][2].item<double>()));
  }

  bool any(bool flag) override {
    std::vector<at::Tensor> value{torch::tensor({flag ? 1.0f : 0.0f})};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::MAX;
    wait(group_->allreduce(value, options), "stop agreement");
    return value[0].item<float>() > 0;
  }

  double sum(double value) override {
    std::vector<at::Tensor> values{torch::tensor({value}, torch::kDouble)};
    wait(group_->allreduce(values), "sum");
    return values[0].item<double>();
  }

  bool replicas_identical(torch::nn::Module& model) override {
    torch::NoGradGuard no_grad;
    std::vector<at::Tensor> sums;
    for (const auto& p : model.parameters()) {
      at::Tensor flat = p.detach().to(torch::kDouble).reshape({-1});
      sums.push_back(torch::stack({flat.sum(), flat.pow(2).sum(),
                                   (flat * torch::arange(flat.numel(), flat.options())).sum()}));
    }
    at::Tensor local = torch::cat(sums);
    std::vector<at::Tensor> high{local.clone()};
    std::vector<at::Tensor> low{local.clone()};
    c10d::AllreduceOptions max_options;
    max_options.reduceOp = c10d::ReduceOp::MAX;
    c10d::AllreduceOptions min_options;
    min_options.reduceOp = c10d::ReduceOp::MIN;
    wait(group_->allreduce(high, max_options), "replica check");
    wait(group_->allreduce(low, min_options), "replica check");
    return high[0].equal(low[0]);
  }

  double all_reduce_seconds() const override { return seconds_; }

 private:
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      throw std::runtime_error(
          fmt::format("rank {}: {} failed (did another rank die or time "
                      "out?): {}",
                      rank_, what, e.what()));
    }
  }

  int rank_;
  int world_size_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  double seconds_ = 0;
  int64_t rounds_ = 0;
};

}  // namespace

std::shared_ptr<Communicator> Communicator::from_environment(std::chrono::milliseconds timeout) {
  const char* world = std::getenv("WORLD_SIZE");
  if (world == nullptr || std::string(world).empty() || std::string(world) == "1") return nullptr;
  const int world_size = env_int("WORLD_SIZE");
  const int rank = env_int("RANK");
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw std::runtime_error(
        fmt::format("RANK ({}) must be in [0, WORLD_SIZE = {})", rank, world_size));
  }
  const int port = env_int("MASTER_PORT");
  // A peer that dies mid-transfer must surface as Gloo's exception (and our error message), not
  // as a SIGPIPE that kills this rank silently when it writes to the closed socket.
  std::signal(SIGPIPE, SIG_IGN);
  return std::make_shared<GlooCommunicator>(rank, world_size, required_env("MASTER_ADDR"), port,
                                            timeout);
}

std::vector<std::vector<int64_t>> Communicator::shard(
    const std::vector<std::vector<int64_t>>& batches) const {
  std::vector<std::vector<int64_t>> mine;
  const auto world = static_cast<size_t>(world_size());
  for (size_t i = static_cast<size_t>(rank()); i < batches.size(); i += world)
    mine.push_back(batches[i]);
  const size_t per_rank = (batches.size() + world - 1) / world;
  while (mine.size() < per_rank) mine.emplace_back();
  return mine;
}

}  // namespace nmtzoo
