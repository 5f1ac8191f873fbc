// SPDX-License-Identifier: MIT
// A bit-exact port of the parts of NumPy 1.24.2 that sacreBLEU 2.6.0's significance tests
// (sacrebleu/significance.py) use, so that paired bootstrap resampling and approximate
// randomization give sacreBLEU's numbers:
//
//   rng = np.random.default_rng(seed)                 -> NumpyGenerator(seed)
//   rng.choice(n, size=(rows, n), replace=True)       -> choice_with_replacement(n, rows * n, out)
//   rng.integers(2, size=(rows, n), dtype=bool)       -> random_bools(rows * n, out)
//   np.mean(x) / x.mean() of a float64 array          -> numpy_mean(x)
//   stats_f32[idx].sum(0) of an (n, k) float32 array  -> numpy_float32_indexed_column_sums(...)
//
// Sources: numpy/random/bit_generator.pyx (SeedSequence), _pcg64.pyx and src/pcg64/pcg64.h
// (PCG64), _generator.pyx and _bounded_integers.pyx.in (choice, integers),
// src/distributions/distributions.c (Lemire bounded integers, buffered bools) and
// core/src/umath/loops_utils.h.src (pairwise summation), all at tag v1.24.2. The summation
// facts that depend on the ufunc machinery rather than on one C function (the 0.0 initial value,
// the 8192-element buffer chunks, sequential float32 accumulation along axis 0) were established
// by experiment against Debian 12's numpy 1.24.2; tests/metrics/numpy_random_test.cpp checks all
// of this against /usr/bin/python3's numpy.
//
// The streams are what numpy gives on a little-endian machine with a 128-bit integer type
// (x86-64, aarch64): PCG64 is then the same on every such platform.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#ifndef __SIZEOF_INT128__
#error "numpy_random.h needs unsigned __int128 (GCC or Clang on a 64-bit target)"
#endif

namespace nmtzoo {

// GCC and Clang's 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef unsigned __int128 NumpyUint128;

// numpy.random.SeedSequence with the default pool_size 4 and no spawn_key: hashes the entropy
// into a 128-bit pool and expands it into seeding words.
class NumpySeedSequence {
 public:
  // SeedSequence(entropy) for a non-negative Python int: the entropy is split into 32-bit words,
  // least significant first, with no high zero words (0 gives the single word 0).
  explicit NumpySeedSequence(uint64_t entropy);

  // SeedSequence(np.array(words, dtype=np.uint32)): the words are used as they are (no zero
  // stripping), which also covers entropy wider than 64 bits.
  static NumpySeedSequence from_words(std::vector<uint32_t> words);

  // SeedSequence(None): 128 bits from std::random_device, read as one integer the way numpy reads
  // secrets.randbits(128) (so high zero words are dropped). entropy_words() tells what was drawn.
  static NumpySeedSequence from_os_entropy();

  // The entropy as uint32 words, least significant first (numpy's assembled entropy).
  const std::vector<uint32_t>& entropy_words() const { return entropy_; }
  // The mixed 128-bit pool (SeedSequence.pool).
  const std::array<uint32_t, 4>& pool() const { return pool_; }

  // generate_state(n, np.uint32) and generate_state(n, np.uint64); a uint64 word is two
  // consecutive uint32 words, the first one the low half.
  std::vector<uint32_t> generate_state_uint32(size_t n_words) const;
  std::vector<uint64_t> generate_state_uint64(size_t n_words) const;

 private:
  NumpySeedSequence() = default;
  void mix_entropy();  // fills pool_ from entropy_ (SeedSequence.mix_entropy)

  std::vector<uint32_t> entropy_;
  std::array<uint32_t, 4> pool_{};
};

// numpy.random.PCG64: a 128-bit LCG (multiplier 0x2360ed051fc65da44385df649fccf645) with the
// XSL-RR 64-bit output, plus numpy's one-word buffer that serves a 64-bit output as two 32-bit
// halves (low half first). The buffer lives in the bit generator, so it carries over from one
// Generator call to the next.
class Pcg64 {
 public:
  // PCG64(seed_seq): w = seed_seq.generate_state(4, np.uint64), initstate = w[0] << 64 | w[1],
  // initseq = w[2] << 64 | w[3]; then pcg_setseq_128_srandom_r: inc = initseq << 1 | 1,
  // state = 0, step, state += initstate, step. The 32-bit buffer starts empty.
  explicit Pcg64(const NumpySeedSequence& seed_sequence);

  uint64_t next_uint64() {
    state_ = state_ * kMultiplier + inc_;
    const uint64_t high = static_cast<uint64_t>(state_ >> 64);
    const uint64_t low = static_cast<uint64_t>(state_);
    const unsigned rotation = static_cast<unsigned>(high >> 58);
    const uint64_t xored = high ^ low;
    return (xored >> rotation) | (xored << ((64 - rotation) & 63));
  }

  // pcg64_next32: the buffered high half if there is one, else the low half of a fresh
  // next_uint64() whose high half is kept for the next call.
  uint32_t next_uint32() {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = next_uint64();
    has_uint32_ = true;
    uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next);
  }

  // PCG64().state as numpy shows it: the 128-bit state and increment as (high, low) halves, and
  // the 32-bit buffer.
  uint64_t state_high() const { return static_cast<uint64_t>(state_ >> 64); }
  uint64_t state_low() const { return static_cast<uint64_t>(state_); }
  uint64_t inc_high() const { return static_cast<uint64_t>(inc_ >> 64); }
  uint64_t inc_low() const { return static_cast<uint64_t>(inc_); }
  bool has_uint32() const { return has_uint32_; }
  uint32_t uinteger() const { return uinteger_; }

 private:
  static constexpr NumpyUint128 kMultiplier =
      (static_cast<NumpyUint128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
  NumpyUint128 state_ = 0;
  NumpyUint128 inc_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

// np.random.default_rng(seed) = Generator(PCG64(SeedSequence(seed))), for the calls sacreBLEU
// makes. Calls draw from one stream in order, as on one numpy Generator.
class NumpyGenerator {
 public:
  // default_rng(seed) for an int seed; std::nullopt is default_rng(None) (OS entropy).
  explicit NumpyGenerator(std::optional<uint64_t> seed);
  explicit NumpyGenerator(const NumpySeedSequence& seed_sequence);

  // rng.integers(low, high, size=count, dtype=np.int64), flattened in C order: uniform on
  // [low, high). Throws std::invalid_argument when low >= high and count > 0; count 0 draws
  // nothing. A range of at most 2^32 values uses 32-bit draws (see the .cpp).
  void integers(int64_t low, int64_t high, size_t count, int64_t* out);

  // rng.choice(population, size=count, replace=True) with p=None, flattened in C order (pass
  // rows * cols for size=(rows, cols)): exactly integers(0, population, count). Throws
  // std::invalid_argument when population <= 0 and count > 0.
  void choice_with_replacement(int64_t population, size_t count, int64_t* out);
  std::vector<int64_t> choice_with_replacement(int64_t population, size_t count);

  // rng.integers(2, size=count, dtype=bool), flattened in C order: each next_uint32() gives 32
  // booleans, least significant bit first; bits left over at the end of a call are discarded.
  void random_bools(size_t count, bool* out);

  Pcg64& bit_generator() { return pcg_; }
  const NumpySeedSequence& seed_sequence() const { return seed_sequence_; }

 private:
  NumpySeedSequence seed_sequence_;
  Pcg64 pcg_;
};

// DOUBLE_pairwise_sum of numpy's loops_utils.h.src over contiguous values: fewer than 8 values
// are added in order onto -0.0; up to 128 go to 8 interleaved accumulators combined as
// ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the remainder in order; more are split
// at n2 = n / 2 rounded down to a multiple of 8 and the two halves' sums added.
double numpy_pairwise_sum(const double* values, size_t count);

// np.sum / np.add.reduce of a contiguous 1-d float64 array (default ufunc buffer size): the
// identity 0.0 plus numpy_pairwise_sum of each successive 8192-value chunk, in order. Equals
// numpy_pairwise_sum up to 8192 values except that -0.0 sums to 0.0.
double numpy_sum(const double* values, size_t count);

// np.mean / ndarray.mean of a contiguous 1-d float64 array: numpy_sum / count (NaN when empty,
// where numpy also warns).
double numpy_mean(const double* values, size_t count);
double numpy_mean(const std::vector<double>& values);

// a.sum(0) of a C-contiguous (n_rows, n_cols) float32 array, in float32 as numpy computes it:
// with n_cols >= 2 numpy's reduction iterates row by row, out[j] = out[j] + a[i][j] from
// out[j] = 0.0f (sequential, not pairwise, and no wider accumulator); with n_cols == 1 the axis
// of length 1 drops out and the column is a 1-d float32 add.reduce: pairwise in float32 per
// 8192-value chunk, like numpy_sum. `out` receives n_cols values.
void numpy_float32_column_sums(const float* rows, size_t n_rows, size_t n_cols, float* out);

// stats[indices].sum(0) for a C-contiguous (any, n_cols) float32 array `stats`, without
// materialising the gathered (count, n_cols) array: the same arithmetic as
// numpy_float32_column_sums over rows stats[indices[0]], stats[indices[1]], ... Indices must be
// in range (they are not checked).
void numpy_float32_indexed_column_sums(const float* stats, size_t n_cols, const int64_t* indices,
                                       size_t count, float* out);

}  // namespace nmtzoo
