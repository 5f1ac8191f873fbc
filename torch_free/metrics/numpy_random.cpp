// SPDX-License-Identifier: MIT
// NumPy 1.24.2's SeedSequence, PCG64, Generator.integers/choice/bool draws and summation loops;
// see numpy_random.h for what each piece reproduces and where it comes from.
#include "torch_free/metrics/numpy_random.h"

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmtzoo {

namespace {

// bit_generator.pyx constants.
constexpr uint32_t kInitA = 0x43b0d7e5;
constexpr uint32_t kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd;
constexpr uint32_t kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd;
constexpr uint32_t kMixMultR = 0x4973f715;
constexpr unsigned kXShift = 16;  // np.dtype(np.uint32).itemsize * 8 // 2
constexpr size_t kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// _int_to_uint32_array: 32-bit words of a non-negative integer, least significant first, without
// high zero words; 0 is the single word 0.
std::vector<uint32_t> integer_words(std::vector<uint32_t> words) {
  while (words.size() > 1 && words.back() == 0) words.pop_back();
  if (words.empty()) words.push_back(0);
  return words;
}

// numpy's ufunc buffer size (np.getbufsize(), 8192 unless changed by np.setbufsize): a 1-d
// add.reduce hands its inner loop at most this many values at a time.
constexpr size_t kUfuncBufferSize = 8192;
constexpr size_t kPairwiseBlock = 128;  // PW_BLOCKSIZE

// @TYPE@_pairwise_sum of loops_utils.h.src for float and double, over the values get(begin),
// get(begin + 1), ..., get(begin + n - 1). Every addition is in T, in numpy's order.
template <typename T, typename Get>
T pairwise_sum(const Get& get, size_t begin, size_t n) {
  if (n < 8) {
    T res = -static_cast<T>(0);  // -0.0 so that a sum of -0.0 values stays -0.0
    for (size_t i = 0; i < n; ++i) res += get(begin + i);
    return res;
  }
  if (n <= kPairwiseBlock) {
    T r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = get(begin + j);
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += get(begin + i + j);
    }
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += get(begin + i);
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum<T>(get, begin, n2) + pairwise_sum<T>(get, begin + n2, n - n2);
}

// A 1-d contiguous add.reduce: the identity 0 plus the pairwise sum of each buffer-sized chunk.
template <typename T, typename Get>
T add_reduce(const Get& get, size_t count) {
  T acc = 0;
  for (size_t start = 0; start < count; start += kUfuncBufferSize) {
    acc += pairwise_sum<T>(get, start, std::min(kUfuncBufferSize, count - start));
  }
  return acc;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SeedSequence

NumpySeedSequence::NumpySeedSequence(uint64_t entropy) {
  entropy_ = integer_words({static_cast<uint32_t>(entropy), static_cast<uint32_t>(entropy >> 32)});
  mix_entropy();
}

NumpySeedSequence NumpySeedSequence::from_words(std::vector<uint32_t> words) {
  NumpySeedSequence seq;
  seq.entropy_ = std::move(words);
  seq.mix_entropy();
  return seq;
}

NumpySeedSequence NumpySeedSequence::from_os_entropy() {
  // SeedSequence(None) takes entropy = secrets.randbits(pool_size * 32), a Python int.
  std::random_device device;
  std::vector<uint32_t> words(kPoolSize);
  for (uint32_t& word : words) word = static_cast<uint32_t>(device());
  return from_words(integer_words(std::move(words)));
}

void NumpySeedSequence::mix_entropy() {
  uint32_t hash_const = kInitA;
  // Add in the entropy up to the pool size, running the hash out on zeros past its end.
  for (size_t i = 0; i < kPoolSize; ++i) {
    pool_[i] = hashmix(i < entropy_.size() ? entropy_[i] : 0, hash_const);
  }
  // Mix all bits together so late bits can affect earlier bits.
  for (size_t src = 0; src < kPoolSize; ++src) {
    for (size_t dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
    }
  }
  // Mix each remaining entropy word into every pool word.
  for (size_t src = kPoolSize; src < entropy_.size(); ++src) {
    for (size_t dst = 0; dst < kPoolSize; ++dst) {
      pool_[dst] = mix(pool_[dst], hashmix(entropy_[src], hash_const));
    }
  }
}

std::vector<uint32_t> NumpySeedSequence::generate_state_uint32(size_t n_words) const {
  std::vector<uint32_t> state(n_words);
  uint32_t hash_const = kInitB;
  for (size_t i = 0; i < n_words; ++i) {
    uint32_t value = pool_[i % kPoolSize];
    value ^= hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    value ^= value >> kXShift;
    state[i] = value;
  }
  return state;
}

std::vector<uint64_t> NumpySeedSequence::generate_state_uint64(size_t n_words) const {
  // state.astype('<u4').view('<u8'): the first word of each pair is the low half.
  const std::vector<uint32_t> halves = generate_state_uint32(2 * n_words);
  std::vector<uint64_t> state(n_words);
  for (size_t i = 0; i < n_words; ++i) {
    state[i] =
        static_cast<uint64_t>(halves[2 * i]) | (static_cast<uint64_t>(halves[2 * i + 1]) << 32);
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// PCG64

Pcg64::Pcg64(const NumpySeedSequence& seed_sequence) {
  const std::vector<uint64_t> words = seed_sequence.generate_state_uint64(4);
  const NumpyUint128 initstate = (static_cast<NumpyUint128>(words[0]) << 64) | words[1];
  const NumpyUint128 initseq = (static_cast<NumpyUint128>(words[2]) << 64) | words[3];
  // pcg_setseq_128_srandom_r
  state_ = 0;
  inc_ = (initseq << 1) | 1;
  state_ = state_ * kMultiplier + inc_;
  state_ += initstate;
  state_ = state_ * kMultiplier + inc_;
}

// ---------------------------------------------------------------------------------------------
// Generator

NumpyGenerator::NumpyGenerator(std::optional<uint64_t> seed)
    : NumpyGenerator(seed ? NumpySeedSequence(*seed) : NumpySeedSequence::from_os_entropy()) {}

NumpyGenerator::NumpyGenerator(const NumpySeedSequence& seed_sequence)
    : seed_sequence_(seed_sequence), pcg_(seed_sequence) {}

// _rand_int64 -> random_bounded_uint64_fill(off = low, rng = high - 1 - low, use_masked = false).
void NumpyGenerator::integers(int64_t low, int64_t high, size_t count, int64_t* out) {
  if (count == 0) return;  // numpy returns an empty array before checking the bounds
  if (low >= high) {
    throw std::invalid_argument("integers: low >= high (" + std::to_string(low) +
                                " >= " + std::to_string(high) + ")");
  }
  const uint64_t off = static_cast<uint64_t>(low);
  const uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  // The loops draw from a local copy of the bit generator (written back at the end), which lets
  // the compiler keep its state in registers rather than reload it after every store to `out`.
  Pcg64 pcg = pcg_;
  if (rng == 0) {
    std::fill(out, out + count, low);  // no draw at all
  } else if (rng == 0xFFFFFFFFULL) {
    // 2^32 values: next_uint32 directly (Lemire32 cannot take rng_excl = 2^32).
    for (size_t i = 0; i < count; ++i) {
      out[i] = static_cast<int64_t>(off + pcg.next_uint32());
    }
  } else if (rng < 0xFFFFFFFFULL) {
    // buffered_bounded_lemire_uint32: one buffered 32-bit half per draw, rejected while the low
    // 32 bits of x * rng_excl fall below threshold = 2^32 mod rng_excl. (numpy first compares
    // them with rng_excl, an upper bound of threshold, which changes nothing.)
    const uint32_t rng32 = static_cast<uint32_t>(rng);
    const uint32_t rng_excl = rng32 + 1;
    const uint32_t threshold = (std::numeric_limits<uint32_t>::max() - rng32) % rng_excl;
    for (size_t i = 0; i < count; ++i) {
      uint64_t m = static_cast<uint64_t>(pcg.next_uint32()) * rng_excl;
      while (static_cast<uint32_t>(m) < threshold) {
        m = static_cast<uint64_t>(pcg.next_uint32()) * rng_excl;
      }
      out[i] = static_cast<int64_t>(off + (m >> 32));
    }
  } else {
    // bounded_lemire_uint64 with the 128-bit product: one next_uint64 per draw (the 32-bit
    // buffer is left alone), rejected while the low 64 bits fall below 2^64 mod rng_excl.
    // (numpy's rng == 2^64 - 1 case cannot occur: int64 bounds span at most 2^64 - 1 values.)
    const uint64_t rng_excl = rng + 1;
    const uint64_t threshold = (std::numeric_limits<uint64_t>::max() - rng) % rng_excl;
    for (size_t i = 0; i < count; ++i) {
      NumpyUint128 m = static_cast<NumpyUint128>(pcg.next_uint64()) * rng_excl;
      while (static_cast<uint64_t>(m) < threshold) {
        m = static_cast<NumpyUint128>(pcg.next_uint64()) * rng_excl;
      }
      out[i] = static_cast<int64_t>(off + static_cast<uint64_t>(m >> 64));
    }
  }
  pcg_ = pcg;
}

void NumpyGenerator::choice_with_replacement(int64_t population, size_t count, int64_t* out) {
  if (count == 0) return;
  if (population <= 0) {
    throw std::invalid_argument(
        "choice: the population must be positive unless no samples are taken");
  }
  integers(0, population, count, out);
}

std::vector<int64_t> NumpyGenerator::choice_with_replacement(int64_t population, size_t count) {
  std::vector<int64_t> out(count);
  choice_with_replacement(population, count, out.data());
  return out;
}

// _rand_bool -> random_bounded_bool_fill(off = 0, rng = 1): buffered_bounded_bool with a buffer
// local to the call, so bits left in the last word are dropped.
void NumpyGenerator::random_bools(size_t count, bool* out) {
  // buffered_bounded_bool refills its buffer with next_uint32() when its count is 0 and then
  // shifts it right once per value, counting down from 31: every word gives 32 values, least
  // significant bit first, and a new word is drawn for value 32k.
  Pcg64 pcg = pcg_;
  for (size_t i = 0; i < count; i += 32) {
    const uint32_t word = pcg.next_uint32();
    const size_t n = std::min<size_t>(32, count - i);
    for (size_t bit = 0; bit < n; ++bit) out[i + bit] = ((word >> bit) & 1U) != 0;
  }
  pcg_ = pcg;
}

// ---------------------------------------------------------------------------------------------
// Summation

double numpy_pairwise_sum(const double* values, size_t count) {
  return pairwise_sum<double>([values](size_t i) { return values[i]; }, 0, count);
}

double numpy_sum(const double* values, size_t count) {
  return add_reduce<double>([values](size_t i) { return values[i]; }, count);
}

double numpy_mean(const double* values, size_t count) {
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  return numpy_sum(values, count) / static_cast<double>(count);
}

double numpy_mean(const std::vector<double>& values) {
  return numpy_mean(values.data(), values.size());
}

void numpy_float32_column_sums(const float* rows, size_t n_rows, size_t n_cols, float* out) {
  if (n_cols == 1) {
    out[0] = add_reduce<float>([rows](size_t i) { return rows[i]; }, n_rows);
    return;
  }
  std::fill(out, out + n_cols, 0.0f);
  for (size_t r = 0; r < n_rows; ++r) {
    const float* row = rows + r * n_cols;
    for (size_t j = 0; j < n_cols; ++j) out[j] += row[j];
  }
}

void numpy_float32_indexed_column_sums(const float* stats, size_t n_cols, const int64_t* indices,
                                       size_t count, float* out) {
  if (n_cols == 1) {
    out[0] = add_reduce<float>(
        [stats, indices](size_t i) { return stats[static_cast<size_t>(indices[i])]; }, count);
    return;
  }
  std::fill(out, out + n_cols, 0.0f);
  for (size_t r = 0; r < count; ++r) {
    const float* row = stats + static_cast<size_t>(indices[r]) * n_cols;
    for (size_t j = 0; j < n_cols; ++j) out[j] += row[j];
  }
}

}  // namespace nmtzoo
