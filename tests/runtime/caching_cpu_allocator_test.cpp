// SPDX-License-Identifier: MIT
// The caching CPU allocator: size classes, reuse of freed blocks, its idle cap, and LibTorch's
// tensors going through it once installed.
#include "libtorch/runtime/caching_cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nmtzoo {
namespace {

TEST(CachingCpuAllocator, SizeClassesCoverEachRequestWithinAQuarter) {
  size_t previous_index = 0;
  for (size_t bytes = 1; bytes < (size_t{1} << 22); bytes += 1 + bytes / 7) {
    const SizeClass size_class = CachingCpuAllocator::size_class(bytes);
    EXPECT_GE(size_class.bytes, bytes);
    if (bytes > 64) {
      EXPECT_LE(size_class.bytes * 4, bytes * 5 + 3) << bytes;
    }
    EXPECT_EQ(size_class.bytes % 16, 0u) << bytes;
    EXPECT_GE(size_class.index, previous_index) << bytes;
    previous_index = size_class.index;
  }
  // Classes are disjoint: the largest request of a class is its size, one byte more is the next.
  for (size_t bytes : {64, 80, 96, 128, 160, 4096, 5120, 1 << 20}) {
    const SizeClass at = CachingCpuAllocator::size_class(bytes);
    EXPECT_EQ(at.bytes, bytes);
    EXPECT_EQ(CachingCpuAllocator::size_class(bytes + 1).index, at.index + 1) << bytes;
  }
  EXPECT_EQ(CachingCpuAllocator::size_class(65).index, 1u);
  EXPECT_EQ(CachingCpuAllocator::size_class(65).bytes, 80u);
}

TEST(CachingCpuAllocator, AFreedBlockServesTheNextRequestOfItsClass) {
  CachingCpuAllocator allocator(size_t{1} << 30);
  void* first = nullptr;
  {
    c10::DataPtr block = allocator.allocate(100'000);
    first = block.get();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    std::memset(first, 1, 100'000);
  }
  EXPECT_EQ(allocator.stats().idle_bytes, CachingCpuAllocator::size_class(100'000).bytes);
  c10::DataPtr same_class = allocator.allocate(99'000);
  EXPECT_EQ(same_class.get(), first);
  c10::DataPtr other_class = allocator.allocate(200'000);
  EXPECT_NE(other_class.get(), first);
  const CachingCpuAllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 2);
  EXPECT_EQ(stats.idle_bytes, 0u);
  EXPECT_EQ(stats.in_use_bytes, CachingCpuAllocator::size_class(99'000).bytes +
                                    CachingCpuAllocator::size_class(200'000).bytes);
}

TEST(CachingCpuAllocator, KeepsNoMoreIdleBytesThanItsCap) {
  const size_t block_bytes = CachingCpuAllocator::size_class(1 << 20).bytes;
  CachingCpuAllocator allocator(2 * block_bytes + block_bytes / 2);
  {
    std::vector<c10::DataPtr> blocks;
    for (int i = 0; i < 5; ++i) blocks.push_back(allocator.allocate(1 << 20));
  }
  CachingCpuAllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.idle_bytes, 2 * block_bytes);
  EXPECT_EQ(stats.returned, 3);
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.peak_in_use_bytes, 5 * block_bytes);
  allocator.release_idle();
  EXPECT_EQ(allocator.stats().idle_bytes, 0u);
  c10::DataPtr again = allocator.allocate(1 << 20);
  EXPECT_EQ(allocator.stats().misses, 6);
}

TEST(CachingCpuAllocator, RawInterfaceAndEmptyRequests) {
  CachingCpuAllocator allocator(size_t{1} << 20);
  void* raw = allocator.raw_allocate(1000);
  ASSERT_NE(raw, nullptr);
  allocator.raw_deallocate(raw);
  EXPECT_EQ(allocator.stats().idle_bytes, CachingCpuAllocator::size_class(1000).bytes);
  c10::DataPtr empty = allocator.allocate(0);
  EXPECT_EQ(empty.get(), nullptr);
}

TEST(CachingCpuAllocator, RefusesRequestsTooLargeForItsClassesWithoutCountingThem) {
  CachingCpuAllocator allocator(size_t{1} << 20);
  for (size_t bytes : {SIZE_MAX, SIZE_MAX - 63, (size_t{1} << 63) + 1,
                       CachingCpuAllocator::kMaxRequestBytes + 1}) {
    EXPECT_THROW(allocator.allocate(bytes), c10::Error) << bytes;
  }
  EXPECT_LT(CachingCpuAllocator::size_class(CachingCpuAllocator::kMaxRequestBytes).index,
            CachingCpuAllocator::kClasses);
  const CachingCpuAllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.misses, 0);
  EXPECT_EQ(stats.in_use_bytes, 0u);
}

TEST(CachingCpuAllocator, ThreadsAllocatingAndFreeingAtOnceLoseNoBlock) {
  CachingCpuAllocator allocator(size_t{1} << 30);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&allocator, t] {
      std::vector<c10::DataPtr> held;
      for (int i = 0; i < 2000; ++i) {
        const size_t bytes = 64 + static_cast<size_t>((i * 7919 + t * 104729) % 50000);
        held.push_back(allocator.allocate(bytes));
        static_cast<char*>(held.back().get())[bytes - 1] = static_cast<char>(i);
        if (held.size() > 16) held.erase(held.begin());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const CachingCpuAllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.hits + stats.misses, 4 * 2000);
  EXPECT_GT(stats.hits, 0);
}

// test_main installs it as every app does, so all the suite's tensors go through it.
TEST(CachingCpuAllocator, InstalledItServesLibTorchsTensors) {
  CachingCpuAllocator* installed = install_caching_cpu_allocator();
  ASSERT_NE(installed, nullptr) << "NMTZOO_CPU_ALLOCATOR=system is set";
  EXPECT_EQ(c10::GetCPUAllocator(), installed);
  const CachingCpuAllocatorStats before = installed->stats();
  torch::Tensor a = torch::randn({300, 200});
  torch::Tensor product = torch::matmul(a, a.t());
  const CachingCpuAllocatorStats after = installed->stats();
  EXPECT_GE(after.hits + after.misses, before.hits + before.misses + 2);
  EXPECT_TRUE(torch::allclose(product.diagonal(), a.pow(2).sum(1), 1e-4, 1e-3));
}

// A misspelt setting is an error naming the variable.
TEST(CachingCpuAllocator, SettingsComeFromTheEnvironmentAndBadOnesNameTheVariable) {
  const auto settings_with = [](const char* variable, const char* value) {
    setenv(variable, value, 1);
    try {
      const CpuAllocatorSettings settings = cpu_allocator_settings_from_environment();
      unsetenv(variable);
      return settings;
    } catch (...) {
      unsetenv(variable);
      throw;
    }
  };
  EXPECT_FALSE(settings_with("NMTZOO_CPU_ALLOCATOR", "system").caching);
  EXPECT_TRUE(settings_with("NMTZOO_CPU_ALLOCATOR", "caching").caching);
  EXPECT_EQ(settings_with("NMTZOO_CPU_CACHE_MB", "512").max_idle_bytes, size_t{512} << 20);
  EXPECT_EQ(cpu_allocator_settings_from_environment().max_idle_bytes, size_t{2048} << 20);
  for (const auto& [variable, value] :
       {std::pair{"NMTZOO_CPU_ALLOCATOR", "jemalloc"}, std::pair{"NMTZOO_CPU_CACHE_MB", "2GB"},
        std::pair{"NMTZOO_CPU_CACHE_MB", "-1"}}) {
    try {
      settings_with(variable, value);
      ADD_FAILURE() << variable << "=" << value << " was accepted";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(variable), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace nmtzoo
