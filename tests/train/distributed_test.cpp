// SPDX-License-Identifier: MIT
// Multi-process training on loopback, through the real nmtzoo-train binary.
#include "libtorch/train/distributed.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/train/trainer.h"
#include "libtorch/train/training_data.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A loopback port nobody listens on, chosen by the kernel (bound to port 0, then closed). A port
// derived from the test's pid, as before, collided under ctest --parallel: tests started one after
// the other have nearby pids, and a rank of one test joined another test's store and process group.
// A port for rank 0's store, below the kernel's ephemeral range (32768-60999 here): a port from
// bind(0) was closed before rank 0 bound it, and in between another test's connection could take
// it as its ephemeral port (rank 0 then waited out the 300 s join timeout). The kernel gives none
// of these ports to bind(0) or connect().
// A TCP socket bound to 127.0.0.1:`port`, or -1 when the port cannot be bound.
int loopback_socket(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
  ::close(fd);
  return -1;
}

int free_port() {
  static std::mt19937 random(
      static_cast<unsigned>(::getpid()) ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = std::uniform_int_distribution<int>(20000, 32000)(random);
    if (const int fd = loopback_socket(port); fd >= 0) {
      ::close(fd);
      return port;
    }
  }
  ADD_FAILURE() << "no free port in 20000-32000";
  return 0;
}

std::vector<std::string> rank_environment(int rank, int world, int port) {
  return {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
          "WORLD_SIZE=" + std::to_string(world), "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + std::to_string(port)};
}

std::vector<std::string> train_args(const testing::TinyRun& run, std::vector<std::string> sets) {
  std::vector<std::string> args{testing::bin("nmtzoo-train"), "--config", run.config_path()};
  for (const auto& set : sets) args.insert(args.end(), {"--set", set});
  return args;
}

TEST(Distributed, TwoRanksStayIdenticalAndMatchOneProcessOnTheUnionOfTheirBatches) {
  const std::vector<std::string> common{
      "training.max_steps=4",    "training.valid_bleu=false", "training.best_metric=loss",
      "training.valid_every=0",  "training.threads=1",        "model.dropout=0",
      "training.max_tokens=200", "training.max_time=10h",     "training.reference_gflops=500"};
  testing::TinyRun distributed("transformer", common);
  const int port = free_port();
  auto args = train_args(distributed, {"training.check_replicas=true", "training.log_every=2"});
  testing::Subprocess rank0(args, "", distributed.path("r0.out"), distributed.path("r0.err"),
                            rank_environment(0, 2, port));
  testing::Subprocess rank1(args, "", distributed.path("r1.out"), distributed.path("r1.err"),
                            rank_environment(1, 2, port));
  ASSERT_EQ(rank0.wait(), 0) << testing::read_text(distributed.path("r0.err"));
  ASSERT_EQ(rank1.wait(), 0) << testing::read_text(distributed.path("r1.err"));
  // Rank 0 alone writes the metrics, which carry the all-reduce time per update.
  EXPECT_NE(testing::read_text(distributed.config().run_dir() + "/metrics.jsonl")
                .find("all_reduce_ms_per_update"),
            std::string::npos);
  EXPECT_NE((testing::read_text(distributed.path("r0.err")) +
             testing::read_text(distributed.path("r0.out")))
                .find("ms/update"),
            std::string::npos);

  // The time budget's ceiling is the job's: both ranks measured, and their sum was recorded, at
  // the start and again at the end-of-training validation (both ranks measure at every one).
  EXPECT_NE(testing::read_text(distributed.path("r0.err")).find("summed over 2 processes"),
            std::string::npos);
  EXPECT_EQ(read_checkpoint_info(distributed.config().training.output_dir +
                                 "/checkpoints/checkpoint_last.pt")
                .progress.budget_sessions.size(),
            2u);

  // One process, two batches per update: the union of what the two ranks saw.
  testing::TinyRun single("transformer", common);
  RunConfig config = single.config();
  apply_overrides(config, {"training.update_freq=2"});
  std::ostringstream log;
  Trainer(config, false, log).train();

  auto a = load_trained_model(
      distributed.config().training.output_dir + "/checkpoints/checkpoint_last.pt", torch::kCPU);
  auto b = load_trained_model(config.training.output_dir + "/checkpoints/checkpoint_last.pt",
                              torch::kCPU);
  EXPECT_EQ(read_checkpoint_info(config.training.output_dir + "/checkpoints/checkpoint_last.pt")
                .progress.step,
            4);
  auto pa = a.model->named_parameters();
  auto pb = b.model->named_parameters();
  double largest = 0;
  for (const auto& item : pa)
    largest = std::max(largest, (item.value() - pb[item.key()]).abs().max().item<double>());
  EXPECT_LT(largest, 1e-5);
  EXPECT_GT(a.model->parameters()[0].abs().sum().item<double>(), 0.0);
}

TEST(Distributed, KillingOneRankMakesTheOtherFailWithinTheTimeout) {
  testing::TinyRun run("rnn_bahdanau", {"training.threads=1"});
  const int port = free_port();
  auto args = train_args(run, {"training.max_steps=1000000", "training.valid_every=0",
                               "training.valid_bleu=false", "training.best_metric=loss"});
  args.insert(args.end(), {"--dist-timeout", "15"});
  testing::Subprocess rank0(args, "", run.path("r0.out"), run.path("r0.err"),
                            rank_environment(0, 2, port));
  testing::Subprocess rank1(args, "", run.path("r1.out"), run.path("r1.err"),
                            rank_environment(1, 2, port));
  // Let them train a little, then kill rank 1.
  for (int i = 0;
       i < 300 && testing::read_text(run.path("r0.err")).find("model ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto killed_at = Clock::now();
  rank1.signal(SIGKILL);
  int status = rank0.wait();
  double seconds = std::chrono::duration<double>(Clock::now() - killed_at).count();
  EXPECT_NE(status, 0);
  EXPECT_LT(seconds, 15 + 10);
  EXPECT_NE(testing::read_text(run.path("r0.err")).find("error:"), std::string::npos)
      << testing::read_text(run.path("r0.err"));
}

TEST(Distributed, OtherRanksWaitForRankZerosPreparationAndShareItsError) {
  testing::TinyRun run("transformer", {"training.threads=1"});
  // Bad data far into the corpus: found while rank 0 prepares the dataset, before any update.
  std::string src, tgt;
  for (int i = 1; i <= 3000; ++i) {
    src += "a b c\n";
    tgt += (i == 2500 ? std::string("c b \xff") : std::string("c b a")) + "\n";
  }
  testing::write_text(run.path("data/train.src"), src);
  testing::write_text(run.path("data/train.tgt"), tgt);
  const int port = free_port();
  auto args = train_args(run, {"training.max_steps=5"});
  testing::Subprocess rank0(args, "", run.path("r0.out"), run.path("r0.err"),
                            rank_environment(0, 2, port));
  testing::Subprocess rank1(args, "", run.path("r1.out"), run.path("r1.err"),
                            rank_environment(1, 2, port));
  EXPECT_EQ(rank0.wait(), 1);
  EXPECT_EQ(rank1.wait(), 1);
  const std::string where = run.path("data/train.tgt") + ":2500: invalid UTF-8";
  EXPECT_NE(testing::read_text(run.path("r0.err")).find(where), std::string::npos)
      << testing::read_text(run.path("r0.err"));
  const std::string err1 = testing::read_text(run.path("r1.err"));
  EXPECT_NE(err1.find("rank 1: rank 0 failed while it prepares the tokenizers and the dataset"),
            std::string::npos)
      << err1;
  EXPECT_NE(err1.find(where), std::string::npos) << err1;
}

TEST(Distributed, AMissingPeerIsAClearErrorWithinTheTimeout) {
  testing::TinyRun run("transformer", {"training.threads=1"});
  auto args = train_args(run, {"training.max_steps=5"});
  args.insert(args.end(), {"--dist-timeout", "3"});
  auto start = Clock::now();
  // Rank 1 of 2 with nobody serving the store: nothing to connect to.
  testing::Subprocess lonely(args, "", run.path("out"), run.path("err"),
                             rank_environment(1, 2, free_port()));
  EXPECT_EQ(lonely.wait(), 1);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3 + 15);
  std::string err = testing::read_text(run.path("err"));
  EXPECT_NE(err.find("could not join the process group"), std::string::npos) << err;
}

// Its message said "within 300000 ms" while it had failed at once; it says now how long it took.
TEST(Distributed, Rank0OnAPortInUseFailsAtOnceSayingSo) {
  testing::TinyRun run("transformer", {"training.threads=1"});
  const int port = free_port();
  const int listener = loopback_socket(port);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  testing::Subprocess rank0(train_args(run, {"training.max_steps=5"}), "", run.path("out"),
                            run.path("err"), rank_environment(0, 2, port));
  EXPECT_EQ(rank0.wait(), 1);
  ::close(listener);
  const std::string err = testing::read_text(run.path("err"));
  EXPECT_NE(err.find(fmt::format("rank 0 of 2 could not join the process group at 127.0.0.1:{} "
                                 "(after 0.",
                                 port)),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Address already in use"), std::string::npos) << err;
}

struct FakeComm : Communicator {
  int r, w;
  FakeComm(int rank, int world) : r(rank), w(world) {}
  int rank() const override { return r; }
  int world_size() const override { return w; }
  void barrier() override {}
  void run_on_main(const std::function<void()>&, const std::string&) override {}
  void broadcast_parameters(torch::nn::Module&) override {}
  int64_t all_reduce_gradients(torch::nn::Module&, at::Tensor&, at::Tensor&, int64_t t) override {
    return t;
  }
  bool any(bool flag) override { return flag; }
  double sum(double value) override { return value; }
  bool replicas_identical(torch::nn::Module&) override { return true; }
  double all_reduce_seconds() const override { return 0; }
};

TEST(Distributed, ShardsCoverEveryBatchOnceWithEqualCounts) {
  std::vector<std::vector<int64_t>> batches{{0}, {1, 2}, {3}, {4}, {5, 6}};
  auto first = FakeComm(0, 2).shard(batches);
  auto second = FakeComm(1, 2).shard(batches);
  EXPECT_EQ(first, (std::vector<std::vector<int64_t>>{{0}, {3}, {5, 6}}));
  EXPECT_EQ(second, (std::vector<std::vector<int64_t>>{{1, 2}, {4}, {}}));
}

TEST(Distributed, ThreeRanksTogetherTrainEveryDatasetPairOncePerEpoch) {
  testing::TinyRun run("transformer", {}, 1000);
  std::ostringstream log;
  TrainingData data = prepare_training_data(run.config(), log);
  for (uint64_t epoch : {0, 1}) {
    const auto batches = epoch_batches(data, 300, 1, epoch);
    std::vector<int> seen(static_cast<size_t>(data.train->size()), 0);
    size_t updates = 0;
    for (int rank = 0; rank < 3; ++rank) {
      auto mine = FakeComm(rank, 3).shard(batches);
      if (rank > 0) {
        EXPECT_EQ(mine.size(), updates) << "every rank makes as many updates";
      }
      updates = mine.size();
      for (const auto& batch : mine) {
        for (int64_t pair : batch) ++seen[static_cast<size_t>(pair)];
      }
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), data.train->size()) << "epoch " << epoch;
  }
}

}  // namespace
}  // namespace nmtzoo
