// SPDX-License-Identifier: MIT
// Facts about this process from Linux's /proc (-1 where unavailable). Memory in MB: pages of
// memory-mapped files the process touched count, the page cache alone does not.
#pragma once

namespace nmtzoo {

double resident_set_mb();       // VmRSS: resident now
double peak_resident_set_mb();  // VmHWM: the most ever resident
// Seconds since the process started, loading of shared libraries before main() included.
double seconds_since_process_start();

}  // namespace nmtzoo
