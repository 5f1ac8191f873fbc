// SPDX-License-Identifier: MIT
// The text shapes sacreBLEU prints with Python's and tabulate's formatting, for nmtzoo-evaluate's
// output to be byte-identical to sacreBLEU's.
#pragma once

#include <string>
#include <vector>

namespace nmtzoo {

// Python's repr() of a float, as json.dumps writes it: the shortest digits that read back as the
// same double, ".0" on integral values, exponents as "1e-05".
std::string python_float_repr(double value);

// tabulate 0.8.9's "fancy_grid" table as sacreBLEU's print_results_table asks for it
// (colalign=('right',), stralign and numalign 'center'): the first column right-aligned, the
// others centred (Python's str.center: the odd space goes right), every column at least two wider
// than its header, a cell's lines ("\n"-separated) aligned one by one, widths counted in code
// points (tabulate without wcwidth).
std::string fancy_grid(const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& rows);

}  // namespace nmtzoo
