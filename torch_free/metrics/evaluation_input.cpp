// SPDX-License-Identifier: MIT
#include "torch_free/metrics/evaluation_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "torch_free/io/text_file.h"
#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

std::string text_problem_message(const std::string& name, int64_t line,
                                 const TextProblem& problem) {
  return fmt::format("{}:{}: {} of the line", name, line, problem.describe());
}

}  // namespace

TextStream read_text_stream(const std::string& path) {
  TextStream stream{path, {}};
  LineReader reader(path);
  std::string line;
  while (reader.next(line)) {
    if (auto bad = find_text_problem(line)) {
      throw IoError(text_problem_message(path, reader.line_number(), *bad));
    }
    stream.lines.emplace_back(rstrip_whitespace(line));
  }
  return stream;
}

std::vector<TextStream> read_stdin_systems(std::istream& in) {
  std::vector<TextStream> systems;
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  size_t start = 0;
  int64_t number = 0;
  while (start < data.size()) {
    size_t end = data.find_first_of("\r\n", start);
    std::string line = data.substr(start, end == std::string::npos ? end : end - start);
    if (end == std::string::npos) {
      start = data.size();
    } else {
      start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
    }
    ++number;
    if (auto bad = find_text_problem(line)) {
      throw IoError(text_problem_message("<stdin>", number, *bad));
    }
    std::vector<std::string_view> fields;
    std::string_view rest = rstrip_whitespace(line);
    for (size_t tab = rest.find('\t'); tab != std::string_view::npos; tab = rest.find('\t')) {
      fields.push_back(rest.substr(0, tab));
      rest.remove_prefix(tab + 1);
    }
    fields.push_back(rest);
    if (systems.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) {
        systems.push_back({fmt::format("System {}", i + 1), {}});
      }
    } else if (fields.size() != systems.size()) {
      throw IoError(fmt::format(
          "<stdin>:{}: {} tab-separated systems, but the first line has {} (tabs separate "
          "systems on stdin, as in sacreBLEU)",
          number, fields.size(), systems.size()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      systems[i].lines.emplace_back(rstrip_whitespace(fields[i]));
    }
  }
  if (systems.empty()) systems.push_back({"<stdin>", {}});
  return systems;
}

std::vector<TextStream> read_references(const std::vector<std::string>& paths, int num_refs) {
  std::vector<TextStream> streams;
  for (const auto& path : paths) streams.push_back(read_text_stream(path));
  if (num_refs == 1) return streams;
  TextStream joined = std::move(streams.front());
  streams.assign(static_cast<size_t>(num_refs), TextStream{});
  for (int r = 0; r < num_refs; ++r) {
    streams[static_cast<size_t>(r)].name = fmt::format("{} (field {})", joined.name, r + 1);
  }
  for (size_t i = 0; i < joined.lines.size(); ++i) {
    std::vector<std::string> fields;
    std::string_view rest = joined.lines[i];
    while (static_cast<int>(fields.size()) < num_refs - 1) {
      size_t tab = rest.find('\t');
      if (tab == std::string_view::npos) break;
      fields.emplace_back(rest.substr(0, tab));
      rest.remove_prefix(tab + 1);
    }
    fields.emplace_back(rest);
    if (static_cast<int>(fields.size()) != num_refs) {
      throw IoError(fmt::format("{}:{}: expected {} tab-separated references, found {}",
                                joined.name, i + 1, num_refs, fields.size()));
    }
    for (size_t r = 0; r < fields.size(); ++r) streams[r].lines.push_back(std::move(fields[r]));
  }
  return streams;
}

std::vector<TextStream> read_systems(const std::vector<std::string>& paths, bool paired,
                                     std::istream& in) {
  if (paths.empty()) return read_stdin_systems(in);
  std::vector<TextStream> systems;
  for (const auto& path : paths) {
    auto same = [&](const TextStream& system) { return system.name == path; };
    if (std::any_of(systems.begin(), systems.end(), same)) {
      if (paired && systems.front().name == path) continue;
      throw IoError("'" + path + "' is given twice: each system needs its own file name");
    }
    systems.push_back(read_text_stream(path));
  }
  return systems;
}

void check_lengths(const TextStream& hypotheses, const std::vector<TextStream>& references) {
  if (hypotheses.lines.empty()) throw IoError("'" + hypotheses.name + "' has no lines to score");
  for (const auto& reference : references) {
    if (reference.lines.size() != hypotheses.lines.size()) {
      throw IoError(fmt::format(
          "line counts differ: hypotheses '{}' have {} lines, but "
          "reference '{}' has {}",
          hypotheses.name, hypotheses.lines.size(), reference.name, reference.lines.size()));
    }
  }
}

}  // namespace nmtzoo
