// SPDX-License-Identifier: MIT
#include "libtorch/kernels/counter_rng.h"

#include <torch/torch.h>

#include <limits>

namespace nmtzoo {

uint64_t counter_rng::draw_seed() {
  // random_ over the full int64 range is one random64() of the default generator, drawn under
  // its lock: the public spelling of what the masks were always seeded with.
  return static_cast<uint64_t>(
      torch::empty({}, torch::kLong)
          .random_(std::numeric_limits<int64_t>::lowest(), c10::optional<int64_t>())
          .item<int64_t>());
}

}  // namespace nmtzoo
