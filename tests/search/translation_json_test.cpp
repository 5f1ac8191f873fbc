// SPDX-License-Identifier: MIT
#include "libtorch/search/translation_json.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

#include "tests/support/tiny_run.h"
#include "torch_free/data/tokenizers.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

class TranslationJson : public ::testing::Test {
 protected:
  // Two hypotheses over the target pieces 5 6 and 7, the first with attention over 2 source pieces
  // and EOS.
  Translation two_best() const {
    Translation t;
    t.source_pieces = {"\u2581a", "\u2581b", "</s>"};
    Hypothesis best;
    best.tokens = {5, 6};
    best.score = -1.234567;
    best.log_prob = -2.5;
    best.attention =
        torch::tensor({0.9f, 0.1f, 0.0f, 0.2f, 0.7f, 0.1f, 0.0f, 0.0f, 1.0f}).reshape({3, 3});
    Hypothesis second;
    second.tokens = {7};
    second.score = -3.0;
    second.log_prob = -3.0;
    second.complete = false;
    t.nbest = {best, second};
    t.texts = {"x y", "z"};
    return t;
  }
  testing::TinyRun run_{"transformer"};
  Tokenizers tokenizers_ = load_tokenizers(run_.config());
};

TEST_F(TranslationJson, TheBestHypothesisIsAtTheTopAndEveryOneInTheNbestList) {
  const SentencePiece& target = *tokenizers_.tgt;
  const json j = translation_json(two_best(), target, {true, true, AlignmentOutput::kNone, false});
  EXPECT_EQ(j["text"], "x y");
  EXPECT_EQ(j["score"], -1.234567);
  EXPECT_EQ(j["log_prob"], -2.5);
  EXPECT_EQ(j["tokens"], json({target.piece(5), target.piece(6)}));
  EXPECT_FALSE(j.contains("truncated"));
  EXPECT_FALSE(j.contains("attention"));
  ASSERT_EQ(j["nbest"].size(), 2u);
  EXPECT_EQ(j["nbest"][1]["text"], "z");
  EXPECT_EQ(j["nbest"][1]["constraints_met"], false);
  EXPECT_FALSE(j["nbest"][0].contains("constraints_met"));
}

TEST_F(TranslationJson, AttentionComesAsSourcePiecesAndRoundedRowsOrAsPharaohPairs) {
  const SentencePiece& target = *tokenizers_.tgt;
  const json soft =
      translation_json(two_best(), target, {false, false, AlignmentOutput::kSoft, true});
  EXPECT_FALSE(soft.contains("tokens"));
  EXPECT_EQ(soft["attention"]["source"], json({"\u2581a", "\u2581b", "</s>"}));
  EXPECT_EQ(soft["attention"]["matrix"][0], json({0.9, 0.1, 0.0}));
  EXPECT_NE(soft["attention_svg"].get<std::string>().find("<svg"), std::string::npos);
  const json hard =
      translation_json(two_best(), target, {false, true, AlignmentOutput::kHard, false});
  EXPECT_TRUE(hard["alignment"].is_string());
  EXPECT_FALSE(hard.contains("attention"));
}

TEST_F(TranslationJson, AnEmptyLineHasNoScoreAndATruncatedOneSaysSo) {
  Translation empty;
  empty.texts = {""};
  const json e = translation_json(empty, *tokenizers_.tgt, {});
  EXPECT_EQ(e, json({{"text", ""}, {"score", nullptr}, {"tokens", json::array()}}));
  Translation cut = two_best();
  cut.truncated = true;
  EXPECT_EQ(translation_json(cut, *tokenizers_.tgt, {})["truncated"], true);
}

TEST_F(TranslationJson, WhatALengthLimitDidComesAsWarnings) {
  EXPECT_FALSE(translation_json(two_best(), *tokenizers_.tgt, {}).contains("warnings"));
  Translation lowered = two_best();
  lowered.length_limit = 2;
  lowered.min_len_lowered = true;
  const json l = translation_json(lowered, *tokenizers_.tgt, {});
  ASSERT_EQ(l["warnings"].size(), 1u);
  EXPECT_EQ(l["warnings"][0], min_len_warning(lowered));
  EXPECT_NE(l["warnings"][0].get<std::string>().find("min_len was lowered to 2 tokens"),
            std::string::npos)
      << l;
  Translation empty;
  empty.texts = {""};
  empty.length_limit = 11;
  empty.empty_by_limit = true;
  const json e = translation_json(empty, *tokenizers_.tgt, {});
  EXPECT_EQ(e["score"], nullptr);
  ASSERT_EQ(e["warnings"].size(), 1u);
  EXPECT_NE(e["warnings"][0].get<std::string>().find("output length limit of 11 tokens"),
            std::string::npos)
      << e;
}

TEST_F(TranslationJson, TheWriterGivesPlainNbestAndJsonLines) {
  const SentencePiece& target = *tokenizers_.tgt;
  std::ostringstream plain;
  TranslationWriter(false, {true, true, AlignmentOutput::kNone, false}, target)
      .write(plain, {two_best()}, 3);
  EXPECT_EQ(plain.str(), "2 ||| x y ||| -1.2346\n2 ||| z ||| -3.0000\n");
  std::ostringstream best_only;
  TranslationWriter(false, {}, target).write(best_only, {two_best(), two_best()}, 1);
  EXPECT_EQ(best_only.str(), "x y\nx y\n");
  std::ostringstream lines;
  TranslationWriter(true, {}, target).write(lines, {two_best()}, 7);
  const json line = json::parse(lines.str());
  EXPECT_EQ(line["line"], 7);
  EXPECT_EQ(line["text"], "x y");
}

}  // namespace
}  // namespace nmtzoo
