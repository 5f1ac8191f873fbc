// SPDX-License-Identifier: MIT
// torch_free/metrics/numpy_random: NumPy 1.24.2's SeedSequence, PCG64, Generator.choice /
// integers(dtype=bool) and summation loops, checked bit for bit against Debian's numpy run live
// by /usr/bin/python3 (not the python3 first on PATH), plus values pinned from numpy 1.24.2's
// output so that the port stays checked where Python is missing.
//
// The live checks run a small Python script that writes numpy's results as raw little-endian
// binary files (ndarray.tofile) into a scratch folder, so that large arrays and floats compare
// exactly.
#include "torch_free/metrics/numpy_random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

#define NMTZOO_REQUIRE_NUMPY()                                                                   \
  do {                                                                                           \
    if (!::nmtzoo::testing::python_numpy_available()) {                                          \
      NMTZOO_SKIP_OR_FAIL("/usr/bin/python3 with numpy is missing (apt install python3-numpy)"); \
    }                                                                                            \
  } while (false)

// Runs `script` with /usr/bin/python3 and the scratch folder as sys.argv[1]; the script writes
// its results there. Fails the test (returns false) when Python fails or is not numpy 1.24.2.
bool run_numpy(const TempDir& dir, const std::string& script) {
  const std::string path = dir.path("numpy_script.py");
  testing::write_text(path,
                      "import sys, os\nimport numpy as np\nOUT = sys.argv[1]\n"
                      "def save(name, array): np.ascontiguousarray(array).tofile(os.path.join(OUT, "
                      "name + '.bin'))\n"
                      "print(np.__version__)\n" +
                          script);
  const testing::CommandResult result =
      testing::run_command("/usr/bin/python3 '" + path + "' '" + dir.path() + "'");
  EXPECT_EQ(result.status, 0) << "python failed: " << result.output;
  EXPECT_EQ(result.output.substr(0, 7), "1.24.2\n")
      << "the reference is numpy 1.24.2; /usr/bin/python3 has " << result.output;
  return result.status == 0;
}

template <typename T>
std::vector<T> read_binary(const TempDir& dir, const std::string& name) {
  const std::string bytes = testing::read_text(dir.path(name + ".bin"));
  EXPECT_EQ(bytes.size() % sizeof(T), 0U) << name;
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

uint64_t bits_of(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// The seeds the live tests use (0, 1, 42, sacreBLEU's default 12345, two- and three-word ones).
const std::vector<uint64_t> kSeeds = {0,         1, 42, 12345, (1ULL << 32) + 5, (1ULL << 63) + 7,
                                      UINT64_MAX};
const char kPythonSeeds[] = "SEEDS = [0, 1, 42, 12345, 2**32 + 5, 2**63 + 7, 2**64 - 1]\n";

// --------------------------------------------------------------------------------------------
// Pinned values: printed by numpy 1.24.2 (Debian 12's python3-numpy) for seed 12345.

TEST(NumpyRandomPinned, SeedSequenceAndPcg64StateForSeed12345) {
  // np.random.SeedSequence(12345).pool and .generate_state(4, np.uint64).
  const NumpySeedSequence seq(12345);
  EXPECT_EQ(seq.entropy_words(), std::vector<uint32_t>{12345});
  EXPECT_EQ(seq.pool(), (std::array<uint32_t, 4>{0xf293d734, 0xfd668225, 0xf94ff895, 0x872090a0}));
  EXPECT_EQ(seq.generate_state_uint64(4),
            (std::vector<uint64_t>{0xb5ae6482a03d837cULL, 0xbbe2996ffa1f7a2fULL,
                                   0x64e39a9f37158f94ULL, 0x3ebb0f96a013fd73ULL}));
  // np.random.PCG64(12345).state['state'], compared as decimal 128-bit integers.
  const Pcg64 pcg(seq);
  const NumpyUint128 state = (static_cast<NumpyUint128>(pcg.state_high()) << 64) | pcg.state_low();
  const NumpyUint128 inc = (static_cast<NumpyUint128>(pcg.inc_high()) << 64) | pcg.inc_low();
  auto decimal = [](NumpyUint128 value) {
    std::string digits;
    do {
      digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
      value /= 10;
    } while (value != 0);
    return digits;
  };
  EXPECT_EQ(decimal(state), "33261208707367790463622745601869196757");
  EXPECT_EQ(decimal(inc), "268209174141567072605526753992732310247");
  EXPECT_FALSE(pcg.has_uint32());
}

TEST(NumpyRandomPinned, DrawsForSeed12345) {
  // default_rng(12345).bit_generator.random_raw(3)
  {
    NumpyGenerator rng(12345);
    EXPECT_EQ(rng.bit_generator().next_uint64(), 0x3a32b18db2ffc19dULL);
    EXPECT_EQ(rng.bit_generator().next_uint64(), 0x51171315c9e4c4deULL);
    EXPECT_EQ(rng.bit_generator().next_uint64(), 0xcc2024823444efd9ULL);
  }
  // default_rng(12345).choice(1000, size=10, replace=True)
  {
    NumpyGenerator rng(12345);
    EXPECT_EQ(rng.choice_with_replacement(1000, 10),
              (std::vector<int64_t>{699, 227, 788, 316, 204, 797, 642, 676, 988, 391}));
  }
  // default_rng(12345).integers(2, size=40, dtype=bool), then .choice(1000, size=5): the 40 bools
  // take two 32-bit halves (one 64-bit output), so the choice goes on with the third index above.
  {
    NumpyGenerator rng(12345);
    bool bools[40];
    rng.random_bools(40, bools);
    std::string bits;
    for (bool b : bools) bits += b ? '1' : '0';
    EXPECT_EQ(bits, "1011100110000011111111110100110110110001");
    EXPECT_EQ(rng.choice_with_replacement(1000, 5),
              (std::vector<int64_t>{788, 316, 204, 797, 642}));
  }
  // default_rng(12345).choice(1000, size=(1000, 1000)).sum() == 499074881, and the next
  // .choice(1000, size=3) == [87, 565, 917].
  {
    NumpyGenerator rng(12345);
    std::vector<int64_t> indices = rng.choice_with_replacement(1000, 1000 * 1000);
    int64_t sum = 0;
    for (int64_t index : indices) sum += index;
    EXPECT_EQ(sum, 499074881);
    EXPECT_EQ(rng.choice_with_replacement(1000, 3), (std::vector<int64_t>{87, 565, 917}));
  }
  // default_rng(12345).choice(3**20, size=5) (32-bit Lemire with frequent rejections), then
  // .choice(3**21, size=3) (64-bit Lemire), then .choice(2**32, size=3) (plain next_uint32).
  {
    NumpyGenerator rng(12345);
    EXPECT_EQ(rng.choice_with_replacement(3486784401LL, 5),
              (std::vector<int64_t>{2438012064, 792671696, 711920807, 2780241438, 2240899044}));
    EXPECT_EQ(rng.choice_with_replacement(10460353203LL, 3),
              (std::vector<int64_t>{4091144040, 3481351236, 6258520886}));
    EXPECT_EQ(rng.choice_with_replacement(1LL << 32, 3),
              (std::vector<int64_t>{2904491694, 915442271, 802017220}));
  }
}

// --------------------------------------------------------------------------------------------
// Behaviour that needs no Python.

TEST(NumpyRandom, SeedSequenceWordsOfAnInteger) {
  EXPECT_EQ(NumpySeedSequence(0).entropy_words(), std::vector<uint32_t>{0});
  EXPECT_EQ(NumpySeedSequence((1ULL << 32) + 5).entropy_words(), (std::vector<uint32_t>{5, 1}));
  EXPECT_EQ(NumpySeedSequence(UINT64_MAX).entropy_words(),
            (std::vector<uint32_t>{0xFFFFFFFF, 0xFFFFFFFF}));
  EXPECT_EQ(NumpySeedSequence(7).pool(), NumpySeedSequence::from_words({7}).pool());
  // generate_state(n, uint64) is generate_state(2n, uint32) paired up, low word first.
  const NumpySeedSequence seq(99);
  const std::vector<uint32_t> halves = seq.generate_state_uint32(6);
  const std::vector<uint64_t> words = seq.generate_state_uint64(3);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(words[i], halves[2 * i] | (static_cast<uint64_t>(halves[2 * i + 1]) << 32));
  }
}

TEST(NumpyRandom, OsEntropyGivesFreshReproducibleStreams) {
  NumpyGenerator a(std::nullopt);
  NumpyGenerator b(std::nullopt);
  EXPECT_NE(a.seed_sequence().entropy_words(), b.seed_sequence().entropy_words());
  EXPECT_LE(a.seed_sequence().entropy_words().size(), 4U);
  // The recorded entropy reproduces the stream.
  NumpyGenerator again(NumpySeedSequence::from_words(a.seed_sequence().entropy_words()));
  EXPECT_EQ(a.choice_with_replacement(1000, 99), again.choice_with_replacement(1000, 99));
  EXPECT_NE(a.choice_with_replacement(1000, 99), b.choice_with_replacement(1000, 99));
}

TEST(NumpyRandom, EdgeCasesOfChoiceAndIntegers) {
  NumpyGenerator rng(5);
  NumpyGenerator untouched(5);
  // Nothing drawn: an empty size (numpy returns before checking the bounds), a population of 1.
  EXPECT_TRUE(rng.choice_with_replacement(0, 0).empty());
  rng.integers(3, 3, 0, nullptr);
  EXPECT_EQ(rng.choice_with_replacement(1, 5), std::vector<int64_t>(5, 0));
  int64_t fixed[3];
  rng.integers(-4, -3, 3, fixed);
  EXPECT_EQ(std::vector<int64_t>(fixed, fixed + 3), std::vector<int64_t>(3, -4));
  EXPECT_EQ(rng.bit_generator().next_uint64(), untouched.bit_generator().next_uint64());
  EXPECT_THROW(rng.choice_with_replacement(0, 1), std::invalid_argument);
  EXPECT_THROW(rng.choice_with_replacement(-3, 1), std::invalid_argument);
  int64_t out[1];
  EXPECT_THROW(rng.integers(5, 5, 1, out), std::invalid_argument);
  EXPECT_THROW(rng.integers(6, 5, 1, out), std::invalid_argument);
}

TEST(NumpyRandom, SumsOfSmallArrays) {
  const double none[1] = {0};
  EXPECT_EQ(numpy_sum(none, 0), 0.0);
  EXPECT_TRUE(std::isnan(numpy_mean(std::vector<double>{})));
  const std::vector<double> negative_zeros(5, -0.0);
  EXPECT_TRUE(std::signbit(numpy_pairwise_sum(negative_zeros.data(), 5)));
  EXPECT_FALSE(std::signbit(numpy_sum(negative_zeros.data(), 5)));  // 0.0 + -0.0
  // Eight or more values use eight accumulators. 1e16 + 1 rounds back to 1e16, so adding fifteen
  // ones to 1e16 in order leaves 1e16; numpy loses only the one added to r0 = 1e16 and adds
  // r1..r7 = 2 each: ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) = 1e16 + 14.
  std::vector<double> values(16, 1.0);
  values[0] = 1e16;
  EXPECT_EQ(numpy_pairwise_sum(values.data(), 16), 1e16 + 14.0);
  EXPECT_EQ(numpy_mean(values), (1e16 + 14.0) / 16);
  float column[3] = {0.5f, 0.25f, 0.25f};
  float sum = -1;
  numpy_float32_column_sums(column, 3, 1, &sum);
  EXPECT_EQ(sum, 1.0f);
}

TEST(NumpyRandom, IndexedColumnSumsEqualGatherThenSum) {
  const size_t n_cols = 3;
  std::vector<float> stats;
  for (int i = 0; i < 30; ++i) stats.push_back(static_cast<float>(i) / 3.0f);
  const std::vector<int64_t> indices = {9, 0, 3, 3, 7, 1, 9, 2};
  std::vector<float> gathered;
  for (int64_t index : indices) {
    for (size_t j = 0; j < n_cols; ++j) gathered.push_back(stats[index * n_cols + j]);
  }
  float expected[3], actual[3];
  numpy_float32_column_sums(gathered.data(), indices.size(), n_cols, expected);
  numpy_float32_indexed_column_sums(stats.data(), n_cols, indices.data(), indices.size(), actual);
  for (size_t j = 0; j < n_cols; ++j) EXPECT_EQ(bits_of(expected[j]), bits_of(actual[j]));
}

// --------------------------------------------------------------------------------------------
// Live cross-checks against numpy.

TEST(NumpyRandomLive, SeedSequenceAndPcg64SeedingMatchNumpy) {
  NMTZOO_REQUIRE_NUMPY();
  TempDir dir;
  ASSERT_TRUE(run_numpy(dir, std::string(kPythonSeeds) + R"(
WORDS = [[7], [1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 9], [], [0xFFFFFFFF] * 9]
def dump(tag, seq, bg):
    save(tag + '_pool', np.array(seq.pool, dtype='<u4'))
    save(tag + '_u32', seq.generate_state(9).astype('<u4'))
    save(tag + '_u64', seq.generate_state(5, np.uint64).astype('<u8'))
    st = bg.state['state']
    save(tag + '_pcg', np.array([st['state'] >> 64, st['state'] & (2**64 - 1),
                                 st['inc'] >> 64, st['inc'] & (2**64 - 1)], dtype='<u8'))
    save(tag + '_raw', bg.random_raw(7).astype('<u8'))
for i, s in enumerate(SEEDS):
    dump('seed%d' % i, np.random.SeedSequence(s), np.random.default_rng(s).bit_generator)
for i, w in enumerate(WORDS):
    seq = np.random.SeedSequence(np.array(w, dtype=np.uint32))
    dump('words%d' % i, seq, np.random.PCG64(seq))
)"));
  const std::vector<std::vector<uint32_t>> words = {
      {7}, {1, 2, 3, 4, 5, 6}, {0, 0, 0, 0, 9}, {}, std::vector<uint32_t>(9, 0xFFFFFFFF)};
  std::vector<std::pair<std::string, NumpySeedSequence>> cases;
  for (size_t i = 0; i < kSeeds.size(); ++i) {
    cases.emplace_back("seed" + std::to_string(i), NumpySeedSequence(kSeeds[i]));
  }
  for (size_t i = 0; i < words.size(); ++i) {
    cases.emplace_back("words" + std::to_string(i), NumpySeedSequence::from_words(words[i]));
  }
  for (const auto& [tag, seq] : cases) {
    SCOPED_TRACE(tag);
    const std::vector<uint32_t> pool = read_binary<uint32_t>(dir, tag + "_pool");
    EXPECT_EQ(std::vector<uint32_t>(seq.pool().begin(), seq.pool().end()), pool);
    EXPECT_EQ(seq.generate_state_uint32(9), read_binary<uint32_t>(dir, tag + "_u32"));
    EXPECT_EQ(seq.generate_state_uint64(5), read_binary<uint64_t>(dir, tag + "_u64"));
    Pcg64 pcg(seq);
    EXPECT_EQ(
        (std::vector<uint64_t>{pcg.state_high(), pcg.state_low(), pcg.inc_high(), pcg.inc_low()}),
        read_binary<uint64_t>(dir, tag + "_pcg"));
    std::vector<uint64_t> raw(7);
    for (uint64_t& value : raw) value = pcg.next_uint64();
    EXPECT_EQ(raw, read_binary<uint64_t>(dir, tag + "_raw"));
  }
}

TEST(NumpyRandomLive, ChoiceMatchesNumpy) {
  NMTZOO_REQUIRE_NUMPY();
  TempDir dir;
  // One generator per seed and population draws sizes 1, 7, 333 and (7, 143) in turn, so the
  // buffered 32-bit half straddles calls. 2**32 takes next_uint32 directly; 2**32 + 1 and up
  // leave the 32-bit path for 64-bit Lemire.
  ASSERT_TRUE(run_numpy(dir, std::string(kPythonSeeds) + R"(
POPULATIONS = [1, 2, 3, 7, 1000, 1014, 2**31 - 1, 3**20, 2**32, 2**32 + 1, 3**21, 2**62 + 3,
               2**63 - 1]
SIZES = [1, 7, 333, (7, 143)]
for i, s in enumerate(SEEDS):
    for j, n in enumerate(POPULATIONS):
        rng = np.random.default_rng(s)
        draws = [rng.choice(n, size=size, replace=True).ravel() for size in SIZES]
        save('choice_%d_%d' % (i, j), np.concatenate(draws).astype('<i8'))
rng = np.random.default_rng(12345)
save('sacrebleu', rng.choice(1000, size=(1000, 1000), replace=True).astype('<i8'))
save('sacrebleu_next', rng.choice(1014, size=(3, 1014), replace=True).astype('<i8'))
rng = np.random.default_rng(42)
parts = [rng.integers(-5, 6, size=9), rng.integers(-2**63, 2**63 - 1, size=9),
         rng.integers(-2**31, 2**31, size=9), rng.integers(10**12, 10**12 + 7, size=9)]
save('integers', np.concatenate(parts).astype('<i8'))
)"));
  // 3**20 = 3486784401, 3**21 = 10460353203.
  const std::vector<int64_t> populations = {1,
                                            2,
                                            3,
                                            7,
                                            1000,
                                            1014,
                                            (1LL << 31) - 1,
                                            3486784401LL,
                                            1LL << 32,
                                            (1LL << 32) + 1,
                                            10460353203LL,
                                            (1LL << 62) + 3,
                                            INT64_MAX};
  const std::vector<size_t> sizes = {1, 7, 333, 7 * 143};
  for (size_t i = 0; i < kSeeds.size(); ++i) {
    for (size_t j = 0; j < populations.size(); ++j) {
      SCOPED_TRACE("seed " + std::to_string(kSeeds[i]) + " population " +
                   std::to_string(populations[j]));
      NumpyGenerator rng(kSeeds[i]);
      std::vector<int64_t> draws;
      for (size_t size : sizes) {
        const std::vector<int64_t> part = rng.choice_with_replacement(populations[j], size);
        draws.insert(draws.end(), part.begin(), part.end());
      }
      EXPECT_EQ(draws,
                read_binary<int64_t>(dir, "choice_" + std::to_string(i) + "_" + std::to_string(j)));
    }
  }
  // sacreBLEU's paired bootstrap: default_rng(12345).choice(1000, size=(1000, 1000)), then more.
  NumpyGenerator rng(12345);
  std::vector<int64_t> indices(1000 * 1000);
  rng.choice_with_replacement(1000, indices.size(), indices.data());
  EXPECT_TRUE(indices == read_binary<int64_t>(dir, "sacrebleu"));
  EXPECT_EQ(rng.choice_with_replacement(1014, 3 * 1014),
            read_binary<int64_t>(dir, "sacrebleu_next"));

  NumpyGenerator general(42);
  std::vector<int64_t> values(36);
  general.integers(-5, 6, 9, values.data());
  general.integers(INT64_MIN, INT64_MAX, 9, values.data() + 9);
  general.integers(-(1LL << 31), 1LL << 31, 9, values.data() + 18);
  general.integers(1000000000000LL, 1000000000007LL, 9, values.data() + 27);
  EXPECT_EQ(values, read_binary<int64_t>(dir, "integers"));
}

TEST(NumpyRandomLive, BoolsAndTheApproximateRandomizationOrderMatchNumpy) {
  NMTZOO_REQUIRE_NUMPY();
  TempDir dir;
  // Per seed: bools of odd counts in turn, then sacreBLEU's AR order on a fresh generator
  // (integers(2, size=(37, 29), dtype=bool) then choice(29, size=(11, 29))), then a mix of calls
  // that shows the 32-bit buffer living in the bit generator: random_raw bypasses it.
  ASSERT_TRUE(run_numpy(dir, std::string(kPythonSeeds) + R"(
COUNTS = [1, 31, 32, 33, 1001, 64, 5]
for i, s in enumerate(SEEDS):
    rng = np.random.default_rng(s)
    save('bools_%d' % i, np.concatenate([rng.integers(2, size=c, dtype=bool) for c in COUNTS]))
    rng = np.random.default_rng(s)
    save('ar_bools_%d' % i, rng.integers(2, size=(37, 29), dtype=bool))
    save('ar_choice_%d' % i, rng.choice(29, size=(11, 29), replace=True).astype('<i8'))
    rng = np.random.default_rng(s)
    mixed = [rng.integers(2, size=3, dtype=bool).astype('<i8'),
             rng.bit_generator.random_raw(1).astype('<i8'),
             rng.choice(1000, size=3).astype('<i8'),
             rng.integers(2, size=70, dtype=bool).astype('<i8'),
             rng.choice(3**21, size=2).astype('<i8'),
             rng.choice(5, size=1).astype('<i8')]
    save('mixed_%d' % i, np.concatenate(mixed))
rng = np.random.default_rng(12345)
save('ar_sacrebleu_bools', rng.integers(2, size=(10000, 1014), dtype=bool))
save('ar_sacrebleu_choice', rng.choice(1014, size=(1000, 1014), replace=True).astype('<i8'))
)"));
  auto as_bytes = [](const std::vector<bool>& bits) {
    std::vector<uint8_t> bytes(bits.begin(), bits.end());
    return bytes;
  };
  auto draw_bools = [](NumpyGenerator& rng, size_t count) {
    std::unique_ptr<bool[]> raw(new bool[count]);
    rng.random_bools(count, raw.get());
    return std::vector<bool>(raw.get(), raw.get() + count);
  };
  for (size_t i = 0; i < kSeeds.size(); ++i) {
    SCOPED_TRACE("seed " + std::to_string(kSeeds[i]));
    {
      NumpyGenerator rng(kSeeds[i]);
      std::vector<bool> bits;
      for (size_t count : {1, 31, 32, 33, 1001, 64, 5}) {
        const std::vector<bool> part = draw_bools(rng, count);
        bits.insert(bits.end(), part.begin(), part.end());
      }
      EXPECT_EQ(as_bytes(bits), read_binary<uint8_t>(dir, "bools_" + std::to_string(i)));
    }
    {
      NumpyGenerator rng(kSeeds[i]);
      EXPECT_EQ(as_bytes(draw_bools(rng, 37 * 29)),
                read_binary<uint8_t>(dir, "ar_bools_" + std::to_string(i)));
      EXPECT_EQ(rng.choice_with_replacement(29, 11 * 29),
                read_binary<int64_t>(dir, "ar_choice_" + std::to_string(i)));
    }
    {
      NumpyGenerator rng(kSeeds[i]);
      std::vector<int64_t> mixed;
      for (bool b : draw_bools(rng, 3)) mixed.push_back(b);
      mixed.push_back(static_cast<int64_t>(rng.bit_generator().next_uint64()));
      for (int64_t v : rng.choice_with_replacement(1000, 3)) mixed.push_back(v);
      for (bool b : draw_bools(rng, 70)) mixed.push_back(b);
      for (int64_t v : rng.choice_with_replacement(10460353203LL, 2)) mixed.push_back(v);
      for (int64_t v : rng.choice_with_replacement(5, 1)) mixed.push_back(v);
      EXPECT_EQ(mixed, read_binary<int64_t>(dir, "mixed_" + std::to_string(i)));
    }
  }
  // sacreBLEU's AR test with confidence: 10000 trials over 1014 segments, then 1000 resamples.
  NumpyGenerator rng(12345);
  EXPECT_TRUE(as_bytes(draw_bools(rng, 10000 * 1014)) ==
              read_binary<uint8_t>(dir, "ar_sacrebleu_bools"));
  EXPECT_TRUE(rng.choice_with_replacement(1014, 1000 * 1014) ==
              read_binary<int64_t>(dir, "ar_sacrebleu_choice"));
}

TEST(NumpyRandomLive, PairwiseSumAndMeanMatchNumpy) {
  NMTZOO_REQUIRE_NUMPY();
  TempDir dir;
  // Values of mixed signs and magnitudes, so that a different summation order shows. Lengths
  // 0..300, around 1000 and 2000, and past numpy's 8192-value buffer.
  ASSERT_TRUE(run_numpy(dir, R"(
import warnings
warnings.simplefilter('ignore')  # the mean of the empty array
LENGTHS = list(range(0, 301)) + [383, 384, 385, 511, 512, 513, 999, 1000, 1001, 1014, 1023, 1024,
                                 1025, 1999, 2000, 8191, 8192, 8193, 16383, 16384, 16385, 20000,
                                 24577, 100003]
rs = np.random.RandomState(7)
data, sums, means, methods = [], [], [], []
for n in LENGTHS:
    a = rs.standard_normal(n) * 10.0 ** rs.uniform(-6, 6, n)
    data.append(a)
    sums.append(np.sum(a)); means.append(np.mean(a)); methods.append(a.mean())
# sacreBLEU-like scores: BLEU of resamples around 30, 1000 and 10000 of them.
for n in [1000, 10000]:
    a = np.round(30 + rs.standard_normal(n), 4)
    data.append(a); sums.append(np.sum(a)); means.append(np.mean(a)); methods.append(a.mean())
save('lengths', np.array(LENGTHS + [1000, 10000], dtype='<i8'))
save('data', np.concatenate(data).astype('<f8'))
save('sums', np.array(sums, dtype='<f8'))
save('means', np.array(means, dtype='<f8'))
save('methods', np.array(methods, dtype='<f8'))
)"));
  const std::vector<int64_t> lengths = read_binary<int64_t>(dir, "lengths");
  const std::vector<double> data = read_binary<double>(dir, "data");
  const std::vector<double> sums = read_binary<double>(dir, "sums");
  const std::vector<double> means = read_binary<double>(dir, "means");
  const std::vector<double> methods = read_binary<double>(dir, "methods");
  ASSERT_EQ(sums.size(), lengths.size());
  size_t offset = 0;
  int sequential_differs = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const size_t n = static_cast<size_t>(lengths[i]);
    SCOPED_TRACE("length " + std::to_string(n));
    ASSERT_LE(offset + n, data.size());
    const double* values = data.data() + offset;
    EXPECT_EQ(bits_of(numpy_sum(values, n)), bits_of(sums[i]));
    if (n == 0) {
      EXPECT_TRUE(std::isnan(means[i]) && std::isnan(numpy_mean(values, n)));
    } else {
      EXPECT_EQ(bits_of(numpy_mean(values, n)), bits_of(means[i]));
      EXPECT_EQ(bits_of(numpy_mean(std::vector<double>(values, values + n))), bits_of(methods[i]));
    }
    if (n <= 8192 && sums[i] != 0.0) {
      EXPECT_EQ(bits_of(numpy_pairwise_sum(values, n)), bits_of(sums[i]));
    }
    double sequential = 0.0;
    for (size_t k = 0; k < n; ++k) sequential += values[k];
    sequential_differs += sequential != sums[i];
    offset += n;
  }
  EXPECT_EQ(offset, data.size());
  EXPECT_GT(sequential_differs, 100);  // the data does tell the summation orders apart
}

TEST(NumpyRandomLive, Float32ColumnSumsMatchNumpy) {
  NMTZOO_REQUIRE_NUMPY();
  TempDir dir;
  // Fractional float32 data (k/3 and k/7), shapes with 1 to 18 columns; then sacreBLEU's
  // stats[idxs].sum(0) for a (1014, 10) array and 200 resamples.
  ASSERT_TRUE(run_numpy(dir, R"(
SHAPES = [(1000, 10), (1014, 9), (1, 5), (7, 3), (129, 2), (5000, 2), (3000, 18), (20000, 4),
          (1, 1), (7, 1), (100, 1), (1000, 1), (1014, 1), (9000, 1), (20000, 1), (0, 4), (0, 1)]
rs = np.random.RandomState(11)
for i, (n, k) in enumerate(SHAPES):
    a = (rs.randint(0, 3000, size=(n, k)) / rs.choice([3.0, 7.0], size=(n, k))).astype(np.float32)
    save('data_%d' % i, a)
    save('sums_%d' % i, a.sum(0))
stats = (rs.randint(0, 60, size=(1014, 10)) / 3).astype(np.float32)
idxs = np.random.default_rng(12345).choice(1014, size=(200, 1014), replace=True)
save('stats', stats)
save('idxs', idxs.astype('<i8'))
save('resampled', np.array([_s.sum(0) for _s in stats[idxs]]))
col = stats[:, :1].copy()
save('resampled1', np.array([_s.sum(0) for _s in col[idxs]]))
)"));
  const std::vector<std::pair<size_t, size_t>> shapes = {
      {1000, 10}, {1014, 9},  {1, 5},     {7, 3}, {129, 2}, {5000, 2},
      {3000, 18}, {20000, 4}, {1, 1},     {7, 1}, {100, 1}, {1000, 1},
      {1014, 1},  {9000, 1},  {20000, 1}, {0, 4}, {0, 1}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [n, k] = shapes[i];
    SCOPED_TRACE("shape (" + std::to_string(n) + ", " + std::to_string(k) + ")");
    const std::vector<float> data = read_binary<float>(dir, "data_" + std::to_string(i));
    const std::vector<float> expected = read_binary<float>(dir, "sums_" + std::to_string(i));
    ASSERT_EQ(data.size(), n * k);
    std::vector<float> sums(k, -1.0f);
    numpy_float32_column_sums(data.data(), n, k, sums.data());
    std::vector<uint32_t> actual_bits, expected_bits;
    for (float v : sums) actual_bits.push_back(bits_of(v));
    for (float v : expected) expected_bits.push_back(bits_of(v));
    EXPECT_EQ(actual_bits, expected_bits);
  }

  const std::vector<float> stats = read_binary<float>(dir, "stats");
  const std::vector<int64_t> idxs = read_binary<int64_t>(dir, "idxs");
  const std::vector<float> resampled = read_binary<float>(dir, "resampled");
  const std::vector<float> resampled1 = read_binary<float>(dir, "resampled1");
  ASSERT_EQ(idxs.size(), 200U * 1014);
  EXPECT_EQ(NumpyGenerator(12345).choice_with_replacement(1014, idxs.size()), idxs);
  std::vector<float> column(1014);
  for (size_t r = 0; r < 1014; ++r) column[r] = stats[r * 10];
  int mismatches = 0;
  for (size_t s = 0; s < 200; ++s) {
    float sums[10];
    numpy_float32_indexed_column_sums(stats.data(), 10, idxs.data() + s * 1014, 1014, sums);
    for (size_t j = 0; j < 10; ++j)
      mismatches += bits_of(sums[j]) != bits_of(resampled[s * 10 + j]);
    float sum1;
    numpy_float32_indexed_column_sums(column.data(), 1, idxs.data() + s * 1014, 1014, &sum1);
    mismatches += bits_of(sum1) != bits_of(resampled1[s]);
  }
  EXPECT_EQ(mismatches, 0);
}

// Times the paired bootstrap's draw: 1000 x 1000 indices from a population of 1000.
TEST(NumpyRandomTiming, ThousandByThousandChoice) {
  std::vector<int64_t> indices(1000 * 1000);
  double best_ms = 1e9;
  for (int repeat = 0; repeat < 5; ++repeat) {
    NumpyGenerator rng(12345);
    const auto start = std::chrono::steady_clock::now();
    rng.choice_with_replacement(1000, indices.size(), indices.data());
    const auto stop = std::chrono::steady_clock::now();
    best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::cout << "choice(1000, size=(1000, 1000)): " << best_ms << " ms (best of 5)\n";
  RecordProperty("choice_1000x1000_ms", std::to_string(best_ms));
  EXPECT_EQ(indices[0], 699);
}

}  // namespace
}  // namespace nmtzoo
