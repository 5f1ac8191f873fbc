// SPDX-License-Identifier: MIT
#include "libtorch/search/translation_json.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>

#include "libtorch/search/alignment.h"
#include "torch_free/plot/svg.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

std::vector<std::string> target_pieces(const Hypothesis& hypothesis, const SentencePiece& target) {
  std::vector<std::string> pieces;
  for (int64_t id : hypothesis.tokens) pieces.push_back(target.piece(id));
  return pieces;
}

// The source pieces without the EOS that closes them.
std::vector<std::string> source_word_pieces(const Translation& t) {
  return {t.source_pieces.begin(), t.source_pieces.end() - (t.source_pieces.empty() ? 0 : 1)};
}

std::string hard_alignment(const Translation& t, size_t k, const SentencePiece& target) {
  if (k >= t.nbest.size() || !t.nbest[k].attention.defined()) return "";
  return pharaoh(hard_word_alignment(t.nbest[k].attention, source_word_pieces(t),
                                     target_pieces(t.nbest[k], target)));
}

json hypothesis_json(const Translation& t, size_t k, const SentencePiece& target,
                     const TranslationJsonOptions& options) {
  json entry;
  entry["text"] = t.texts[k];
  if (k >= t.nbest.size()) {  // an empty input line
    entry["score"] = nullptr;
    if (options.tokens) entry["tokens"] = json::array();
    return entry;
  }
  const Hypothesis& h = t.nbest[k];
  entry["score"] = h.score;
  entry["log_prob"] = h.log_prob;
  if (options.tokens) entry["tokens"] = target_pieces(h, target);
  if (!h.complete) entry["constraints_met"] = false;  // the length limit ended it first
  if (options.alignment == AlignmentOutput::kHard)
    entry["alignment"] = hard_alignment(t, k, target);
  if (options.alignment == AlignmentOutput::kSoft && h.attention.defined()) {
    json matrix = json::array();
    for (const auto& row : attention_rows(t, k)) {
      json values = json::array();
      for (float value : row) values.push_back(std::round(static_cast<double>(value) * 1e4) / 1e4);
      matrix.push_back(std::move(values));
    }
    entry["attention"] = {{"source", t.source_pieces}, {"matrix", std::move(matrix)}};
  }
  if (options.attention_svg && h.attention.defined()) {
    entry["attention_svg"] = attention_heatmap(t, k, target, t.texts[k]);
  }
  return entry;
}

}  // namespace

std::vector<std::vector<float>> attention_rows(const Translation& t, size_t k) {
  if (k >= t.nbest.size() || !t.nbest[k].attention.defined()) return {};
  const auto columns = static_cast<int64_t>(t.source_pieces.size());
  // Through double, so that the JSON matrix is rounded from the exact values.
  const at::Tensor weights =
      t.nbest[k].attention.narrow(1, 0, columns).to(torch::kCPU, torch::kDouble).contiguous();
  std::vector<std::vector<float>> rows;
  for (int64_t r = 0; r < weights.size(0); ++r) {
    const double* values = weights[r].data_ptr<double>();
    rows.emplace_back(values, values + columns);
  }
  return rows;
}

std::string attention_heatmap(const Translation& t, size_t k, const SentencePiece& target,
                              const std::string& title) {
  const auto rows = attention_rows(t, k);
  if (rows.empty()) return "";
  std::vector<std::string> pieces = target_pieces(t.nbest[k], target);
  pieces.push_back("</s>");
  return heatmap_svg(rows, t.source_pieces, pieces, title);
}

json translation_json(const Translation& t, const SentencePiece& target,
                      const TranslationJsonOptions& options) {
  json result = hypothesis_json(t, 0, target, options);
  if (t.truncated) result["truncated"] = true;
  json warnings = json::array();
  for (const std::string& warning : {min_len_warning(t), empty_output_warning(t)}) {
    if (!warning.empty()) warnings.push_back(warning);
  }
  if (!warnings.empty()) result["warnings"] = std::move(warnings);
  if (options.nbest) {
    json list = json::array();
    for (size_t k = 0; k < t.texts.size(); ++k)
      list.push_back(hypothesis_json(t, k, target, options));
    result["nbest"] = std::move(list);
  }
  return result;
}

void TranslationWriter::write(std::ostream& out, const std::vector<Translation>& translations,
                              int64_t first_line) const {
  for (size_t i = 0; i < translations.size(); ++i) {
    const int64_t line = first_line + static_cast<int64_t>(i);
    if (jsonl_) {
      json result{{"line", line}};
      result.update(translation_json(translations[i], target_, options_));
      out << result.dump() << '\n';
    } else {
      write_plain(out, translations[i], line);
    }
  }
}

void TranslationWriter::write_plain(std::ostream& out, const Translation& t, int64_t line) const {
  const bool hard = options_.alignment == AlignmentOutput::kHard;
  if (!options_.nbest) {
    out << t.texts[0];
    if (hard) out << '\t' << hard_alignment(t, 0, target_);
    out << '\n';
    return;
  }
  for (size_t k = 0; k < t.texts.size(); ++k) {
    const double score = k < t.nbest.size() ? t.nbest[k].score : 0.0;
    out << (line - 1) << " ||| " << t.texts[k] << " ||| " << fmt::format("{:.4f}", score);
    if (hard) out << " ||| " << hard_alignment(t, k, target_);
    out << '\n';
  }
}

}  // namespace nmtzoo
