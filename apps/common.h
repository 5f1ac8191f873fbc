// What every nmtzoo app's main() shares.
#pragma once

#include <exception>
#include <functional>
#include <iostream>

namespace nmtzoo {

// Runs `body`, turning any exception into "error: ..." on stderr and exit status 1.
inline int run_app(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace nmtzoo
