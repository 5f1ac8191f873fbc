// SPDX-License-Identifier: MIT
// A caching allocator for LibTorch's CPU tensors. LibTorch's own CPU allocator is plain malloc,
// and a training step frees and reallocates hundreds of large blocks whose sizes change with
// every batch's shape; after a few thousand steps glibc's heap is fragmented enough that
// _int_malloc grows from 3.5% to 8% of the RNN's training time and the run loses ~25% of its
// early speed. Like the CUDA caching allocator, this one
// rounds each request up to a size class (four per power of two, so at most 25% over) and keeps
// freed blocks in per-class free lists for the next step, so that after warm-up a step asks
// malloc for nothing. jemalloc without purging did the same for the whole process at 2.5x the
// resident memory; here only the idle blocks up to a cap are kept, and the rest go back to malloc.
// Training installs it (TrainingEngine); decoding keeps malloc, which measured faster there.
// Written here because no Debian library offers one for LibTorch: general-purpose allocators
// (jemalloc, above) serve the whole process, and Debian's LibTorch ships no headers for c10's
// mobile caching allocator (which keys blocks on exact sizes anyway).
#pragma once

#include <c10/core/Allocator.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace nmtzoo {

struct CachingCpuAllocatorStats {
  int64_t hits = 0;         // allocations served from a free list
  int64_t misses = 0;       // allocations that went to malloc
  int64_t returned = 0;     // freed blocks given back to malloc because the cache was full
  size_t idle_bytes = 0;    // in the free lists now
  size_t in_use_bytes = 0;  // handed out and not yet freed (size classes, not requests)
  size_t peak_in_use_bytes = 0;
};

struct SizeClass {
  size_t index;
  size_t bytes;  // what every request of the class gets: at least the request, at most 25% more
};

class CachingCpuAllocator final : public c10::Allocator {
 public:
  // Freed blocks are kept while the free lists hold at most `max_idle_bytes`.
  explicit CachingCpuAllocator(size_t max_idle_bytes);
  ~CachingCpuAllocator() override;  // frees the idle blocks; blocks in use must be gone by then
  CachingCpuAllocator(const CachingCpuAllocator&) = delete;
  CachingCpuAllocator& operator=(const CachingCpuAllocator&) = delete;

  c10::DataPtr allocate(size_t bytes) const override;
  c10::DeleterFnPtr raw_deleter() const override;

  // Gives every idle block back to malloc.
  void release_idle() const;
  CachingCpuAllocatorStats stats() const;

  // The size class a request of `bytes` is served from.
  static SizeClass size_class(size_t bytes);

  // Larger requests are refused, so that neither the class arithmetic nor the header's extra 64
  // bytes can overflow; the largest class index is then 1 + 4 * 49 + 3.
  static constexpr size_t kMaxRequestBytes = size_t{1} << 56;
  static constexpr size_t kClasses = 4 * 64;

 private:
  static void free_block(void* data);
  void recycle(void* data, size_t class_index, size_t class_bytes) const;

  const size_t max_idle_bytes_;
  mutable std::mutex mutex_;
  mutable std::array<std::vector<void*>, kClasses> free_lists_;
  mutable CachingCpuAllocatorStats stats_;
};

// NMTZOO_CPU_ALLOCATOR (caching, the default, or system: LibTorch's own) and NMTZOO_CPU_CACHE_MB
// (the idle cap, default 2048); an error naming the variable when either is malformed.
struct CpuAllocatorSettings {
  bool caching = true;
  size_t max_idle_bytes = size_t{2048} << 20;
};
CpuAllocatorSettings cpu_allocator_settings_from_environment();

// Makes a process-wide CachingCpuAllocator LibTorch's CPU allocator as the environment's settings
// say (idempotent). Returns it, or nullptr when LibTorch keeps its own.
CachingCpuAllocator* install_caching_cpu_allocator();

}  // namespace nmtzoo
