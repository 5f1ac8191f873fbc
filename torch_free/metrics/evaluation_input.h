// SPDX-License-Identifier: MIT
// The texts nmtzoo-evaluate scores, read as sacreBLEU's command line reads them: reference and
// hypothesis files (plain or gzip) or the tab-separated systems of stdin, each line right-stripped,
// with a clear error for unusable text and for streams of different lengths.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace nmtzoo {

struct TextStream {
  std::string name;                // the file, "<stdin>", or "System N" for a field of stdin
  std::vector<std::string> lines;  // right-stripped, as sacreBLEU reads them
};

// One file's lines; invalid UTF-8 or a NUL byte is an IoError naming the file and line.
TextStream read_text_stream(const std::string& path);

// Systems on `in`, lines split like Python's text-mode stdin (universal newlines: \n, \r\n, \r);
// as in sacreBLEU, tab-separated fields are several systems, as many on every line as on the
// first. No input is one system of no lines.
std::vector<TextStream> read_stdin_systems(std::istream& in);

// Reference streams: one per file, or `num_refs` tab-separated fields of a single file (then
// `paths` holds one file).
std::vector<TextStream> read_references(const std::vector<std::string>& paths, int num_refs);

// The systems to score: the `paths` (in paired tests a repeat of the baseline is dropped, as
// sacreBLEU does; another repeat is an IoError), or those of `in` when there are no paths.
std::vector<TextStream> read_systems(const std::vector<std::string>& paths, bool paired,
                                     std::istream& in);

// IoError unless `hypotheses` has lines and every reference stream as many.
void check_lengths(const TextStream& hypotheses, const std::vector<TextStream>& references);

}  // namespace nmtzoo
