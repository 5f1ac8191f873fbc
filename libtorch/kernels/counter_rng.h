// SPDX-License-Identifier: MIT
// The counter-based random bits of nmtzoo's dropout kernels (libtorch/kernels/dropout.h and
// libtorch/kernels/dropout_layer_norm.h): one seed per call from LibTorch's default generator, so
// manual_seed and checkpointed RNG state reproduce the masks, and the bits of each element a
// function of the seed and its index alone, so the masks depend neither on the thread count nor
// on which kernel draws them (the fused residual step drops what chunked_dropout would).
#pragma once

#include <cstdint>

namespace nmtzoo::counter_rng {

// One 64-bit seed from LibTorch's default CPU generator.
uint64_t draw_seed();

// Elements per stream: element f of a tensor takes its bits from stream f / kStreamElements.
constexpr int64_t kStreamElements = 4096;

// The stream of a block of kStreamElements elements under `seed`.
inline uint64_t stream(uint64_t seed, int64_t block) {
  return seed ^ (static_cast<uint64_t>(block) * 0xd1b54a32d192ed03ULL);
}

// splitmix64 (Steele, Lea and Flood 2014): the i-th 64 random bits of a stream (i from 0), as
// a function of i, so a loop over i has independent iterations the compiler can vectorise.
inline uint64_t at(uint64_t state, uint64_t i) {
  uint64_t z = state + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The next 64 random bits of a stream.
inline uint64_t next(uint64_t& state) {
  const uint64_t bits = at(state, 0);
  state += 0x9e3779b97f4a7c15ULL;
  return bits;
}

// The 64 random bits that elements f and f + 1 (f even) of a tensor share under `seed`: f takes
// the low 32, f + 1 the high 32.
inline uint64_t pair_bits(uint64_t seed, int64_t f) {
  return at(stream(seed, f / kStreamElements), static_cast<uint64_t>((f % kStreamElements) / 2));
}

// Keep an element when the top 24 bits of its 32 random bits fall below this.
inline uint32_t keep_threshold(double p) { return static_cast<uint32_t>((1.0 - p) * 16777216.0); }
inline bool kept(uint32_t bits, uint32_t threshold) { return (bits >> 8) < threshold; }

}  // namespace nmtzoo::counter_rng
