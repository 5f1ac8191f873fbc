// SPDX-License-Identifier: MIT
#include "torch_free/io/process_stats.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace nmtzoo {
namespace {

double status_field_mb(const std::string& name) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.compare(0, name.size() + 1, name + ":") == 0) {
      return std::stod(line.substr(name.size() + 1)) / 1024.0;  // "VmRSS:   123456 kB"
    }
  }
  return -1;
}

}  // namespace

double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::ifstream uptime_file("/proc/uptime");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  double uptime = 0;
  const size_t after_name = text.rfind(')');  // the name may hold spaces and parentheses
  if (!(uptime_file >> uptime) || after_name == std::string::npos) return -1;
  std::istringstream fields(text.substr(after_name + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return uptime - std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return -1;
}

double resident_set_mb() { return status_field_mb("VmRSS"); }
double peak_resident_set_mb() { return status_field_mb("VmHWM"); }

}  // namespace nmtzoo
