// SPDX-License-Identifier: MIT
#include "torch_free/metrics/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "torch_free/io/text_file.h"
#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

size_t code_points(std::string_view text) { return split_code_points(text).size(); }

std::string aligned(const std::string& text, size_t width, bool right) {
  const size_t padding = width - std::min(width, code_points(text));
  if (right) return std::string(padding, ' ') + text;
  return std::string(padding / 2, ' ') + text + std::string(padding - padding / 2, ' ');
}

std::string rule(const std::vector<size_t>& widths, std::string_view left, std::string_view fill,
                 std::string_view middle, std::string_view right) {
  std::string line(left);
  for (size_t c = 0; c < widths.size(); ++c) {
    if (c > 0) line += middle;
    for (size_t i = 0; i < widths[c] + 2; ++i) line += fill;
  }
  return line + std::string(right) + "\n";
}

// One table row: the cells' lines side by side, short cells padded with empty lines below.
std::string row_lines(const std::vector<std::vector<std::string>>& cells,
                      const std::vector<size_t>& widths) {
  size_t height = 0;
  for (const auto& cell : cells) height = std::max(height, cell.size());
  std::string text;
  for (size_t line = 0; line < height; ++line) {
    text += "│";
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string& part = line < cells[c].size() ? cells[c][line] : std::string();
      text += " " + aligned(part, widths[c], c == 0) + " │";
    }
    text += "\n";
  }
  return text;
}

// str.strip() of a whole cell, as tabulate does before aligning (PRESERVE_WHITESPACE off).
std::string strip(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\n\r\f\v");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\n\r\f\v") - begin + 1);
}

}  // namespace

std::string python_float_repr(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

std::string fancy_grid(const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& header : headers) widths.push_back(code_points(header) + 2);
  std::vector<std::vector<std::vector<std::string>>> cells;
  for (const auto& row : rows) {
    cells.emplace_back();
    for (size_t c = 0; c < row.size(); ++c) {
      cells.back().push_back(split_fields(strip(row[c]), '\n'));
      for (const auto& line : cells.back().back()) {
        widths[c] = std::max(widths[c], code_points(line));
      }
    }
  }
  std::vector<std::vector<std::string>> header_cells;
  for (const auto& header : headers) header_cells.push_back({header});
  std::string table = rule(widths, "╒", "═", "╤", "╕");
  table += row_lines(header_cells, widths);
  table += rule(widths, "╞", "═", "╪", "╡");
  for (size_t r = 0; r < cells.size(); ++r) {
    if (r > 0) table += rule(widths, "├", "─", "┼", "┤");
    table += row_lines(cells[r], widths);
  }
  return table + rule(widths, "╘", "═", "╧", "╛");
}

}  // namespace nmtzoo
