// nmtzoo's hand-written CPU kernels, where LibTorch 1.13's own are slow on CPU (see each header
// for the measured reason), behind one switch. With the switch off, or on other devices and
// dtypes, callers get LibTorch's operators instead: same results up to rounding, except that
// dropout masks come from LibTorch's bernoulli_ and differ.
#pragma once

namespace nmtzoo {

// On unless the environment sets NMTZOO_KERNELS=off (read once); tests and benchmarks may flip it.
bool fast_kernels_enabled();
void set_fast_kernels_enabled(bool enabled);

}  // namespace nmtzoo
