// SPDX-License-Identifier: MIT
#include "libtorch/runtime/caching_cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nmtzoo {
namespace {

// Each block starts with this header, padded to the 64-byte alignment LibTorch's CPU kernels
// expect of tensor data, so that the deleter (a plain function pointer, as raw_deleter()
// requires) finds its allocator and size class from the data pointer alone.
constexpr size_t kAlignment = 64;
struct BlockHeader {
  const CachingCpuAllocator* owner;
  size_t class_index;
  size_t class_bytes;
};
static_assert(sizeof(BlockHeader) <= kAlignment);

BlockHeader* header_of(void* data) {
  return reinterpret_cast<BlockHeader*>(static_cast<char*>(data) - kAlignment);
}

void* malloc_block(size_t payload_bytes) {
  void* block = nullptr;
  if (posix_memalign(&block, kAlignment, kAlignment + payload_bytes) != 0) return nullptr;
  return static_cast<char*>(block) + kAlignment;
}

void free_to_malloc(void* data) { std::free(static_cast<char*>(data) - kAlignment); }

size_t parse_size_env(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used == std::string(text).size() && value >= 0) return static_cast<size_t>(value);
  } catch (const std::exception&) {
  }
  throw std::runtime_error(std::string(name) + " must be a whole number of MB, but is '" + text +
                           "'");
}

}  // namespace

// Classes: 64 bytes, then four per power of two: (p, 2p] is split at p * 5/4, 6/4, 7/4 and 2.
SizeClass CachingCpuAllocator::size_class(size_t bytes) {
  if (bytes <= 64) return {0, 64};
  const int log2_floor = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1));
  const size_t step = (size_t{1} << log2_floor) / 4;
  const size_t quarters = (bytes + step - 1) / step;  // 5..8
  return {1 + 4 * static_cast<size_t>(log2_floor - 6) + (quarters - 5), quarters * step};
}

CachingCpuAllocator::CachingCpuAllocator(size_t max_idle_bytes) : max_idle_bytes_(max_idle_bytes) {}

CachingCpuAllocator::~CachingCpuAllocator() { release_idle(); }

c10::DataPtr CachingCpuAllocator::allocate(size_t bytes) const {
  const c10::Device cpu(c10::DeviceType::CPU);
  if (bytes == 0) return {nullptr, nullptr, &free_block, cpu};
  TORCH_CHECK(bytes <= kMaxRequestBytes, "CachingCpuAllocator: ", bytes,
              " bytes is too large a request");
  const auto [index, class_bytes] = size_class(bytes);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& free_list = free_lists_[index];
    if (!free_list.empty()) {
      data = free_list.back();
      free_list.pop_back();
      stats_.idle_bytes -= class_bytes;
      ++stats_.hits;
    } else {
      ++stats_.misses;
    }
    stats_.in_use_bytes += class_bytes;
    if (stats_.in_use_bytes > stats_.peak_in_use_bytes) {
      stats_.peak_in_use_bytes = stats_.in_use_bytes;
    }
  }
  if (data == nullptr) {
    data = malloc_block(class_bytes);
    if (data == nullptr) {  // the idle blocks of other classes may make room
      release_idle();
      data = malloc_block(class_bytes);
    }
    if (data == nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.in_use_bytes -= class_bytes;
      TORCH_CHECK(false, "CachingCpuAllocator: not enough memory for ", bytes, " bytes");
    }
    *header_of(data) = BlockHeader{this, index, class_bytes};
  }
  return {data, data, &free_block, cpu};
}

c10::DeleterFnPtr CachingCpuAllocator::raw_deleter() const { return &free_block; }

void CachingCpuAllocator::free_block(void* data) {
  if (data == nullptr) return;
  const BlockHeader& header = *header_of(data);
  header.owner->recycle(data, header.class_index, header.class_bytes);
}

void CachingCpuAllocator::recycle(void* data, size_t class_index, size_t class_bytes) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.in_use_bytes -= class_bytes;
    if (stats_.idle_bytes + class_bytes <= max_idle_bytes_) {
      free_lists_[class_index].push_back(data);
      stats_.idle_bytes += class_bytes;
      return;
    }
    ++stats_.returned;
  }
  free_to_malloc(data);
}

void CachingCpuAllocator::release_idle() const {
  std::array<std::vector<void*>, kClasses> idle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle.swap(free_lists_);
    stats_.idle_bytes = 0;
  }
  for (auto& free_list : idle) {
    for (void* data : free_list) free_to_malloc(data);
  }
}

CachingCpuAllocatorStats CachingCpuAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

CpuAllocatorSettings cpu_allocator_settings_from_environment() {
  CpuAllocatorSettings settings;
  const char* choice = std::getenv("NMTZOO_CPU_ALLOCATOR");
  const std::string name = choice == nullptr ? "" : choice;
  if (name == "system") {
    settings.caching = false;
  } else if (name != "caching" && !name.empty()) {
    throw std::runtime_error("NMTZOO_CPU_ALLOCATOR must be caching or system, but is '" + name +
                             "'");
  }
  settings.max_idle_bytes = parse_size_env("NMTZOO_CPU_CACHE_MB", 2048) << 20;
  return settings;
}

CachingCpuAllocator* install_caching_cpu_allocator() {
  static CachingCpuAllocator* const installed = []() -> CachingCpuAllocator* {
    const CpuAllocatorSettings settings = cpu_allocator_settings_from_environment();
    if (!settings.caching) return nullptr;
    // Never deleted: tensors freed during static destruction still reach it.
    auto* allocator = new CachingCpuAllocator(settings.max_idle_bytes);
    c10::SetCPUAllocator(allocator, /*priority=*/1);
    return allocator;
  }();
  return installed;
}

}  // namespace nmtzoo
