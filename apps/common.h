// SPDX-License-Identifier: MIT
// What every nmtzoo app's main() shares.
#pragma once

#include <exception>
#include <functional>
#include <iostream>

namespace nmtzoo {

// Runs `body`, turning any exception into "error: ..." on stderr and exit status 1. What was
// printed must have reached stdout: a failed write there (a full disk behind a redirection) is
// an error too, not a silent loss.
inline int run_app(const std::function<int()>& body) {
  int status = 1;
  try {
    status = body();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (!std::cout.flush()) {
    std::cerr << "error: writing to stdout failed\n";
    return 1;
  }
  return status;
}

}  // namespace nmtzoo
