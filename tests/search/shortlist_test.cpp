// SPDX-License-Identifier: MIT
#include "libtorch/search/shortlist.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <random>

#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/ensemble.h"
#include "libtorch/search/prefix_recomputing_model.h"
#include "libtorch/search/search.h"
#include "libtorch/search/search_strategy.h"
#include "libtorch/search/translation_pipeline.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

using testing::random_batch;
using testing::read_text;
using testing::tiny_model;
using testing::write_text;

// Source word s (10..19) translates to target word s + 20; every target also holds the function
// word 5 and the words come out in a shuffled order.
std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> word_for_word_corpus() {
  std::mt19937 generator(7);
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs;
  for (int i = 0; i < 400; ++i) {
    std::vector<int32_t> src;
    for (int w = 0; w < 2 + i % 4; ++w) src.push_back(10 + static_cast<int32_t>(generator() % 10));
    std::vector<int32_t> tgt{5};
    for (int32_t s : src) tgt.push_back(s + 20);
    std::shuffle(tgt.begin(), tgt.end(), generator);
    pairs.emplace_back(src, tgt);
  }
  return pairs;
}

PairVisitor visitor(
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>& pairs) {
  return [&pairs](const std::function<void(TokenSpan, TokenSpan)>& each) {
    for (const auto& [src, tgt] : pairs) each({src.data(), src.size()}, {tgt.data(), tgt.size()});
  };
}

TEST(Shortlist, IbmModel1FindsEachSourceWordsTranslation) {
  const auto pairs = word_for_word_corpus();
  Shortlist shortlist = Shortlist::train(visitor(pairs), 40, 50);
  for (int32_t s = 10; s < 20; ++s) {
    ASSERT_FALSE(shortlist.candidates(s).empty()) << s;
    EXPECT_EQ(shortlist.candidates(s).front().first, s + 20) << s;
    EXPECT_GT(shortlist.candidates(s).front().second, 0.5) << s;
    for (size_t i = 1; i < shortlist.candidates(s).size(); ++i) {
      EXPECT_GE(shortlist.candidates(s)[i - 1].second, shortlist.candidates(s)[i].second);
    }
  }
  EXPECT_TRUE(shortlist.candidates(3).empty());  // never seen
  ASSERT_FALSE(shortlist.frequent().empty());
  EXPECT_EQ(shortlist.frequent().front(), 5);
  EXPECT_EQ(shortlist.frequent().size(), 11u);  // 5 and 30..39

  // Without EM the table is co-occurrence only: every co-occurring word ties.
  ShortlistTraining none;
  none.iterations = 0;
  Shortlist uniform = Shortlist::train(visitor(pairs), 40, 50, none);
  EXPECT_NEAR(uniform.candidates(10).front().second, uniform.candidates(10).back().second, 1e-6);
}

TEST(Shortlist, ABatchsVocabularyIsSortedAndHoldsSpecialsFrequentCandidatesAndExtras) {
  const auto pairs = word_for_word_corpus();
  Shortlist shortlist = Shortlist::train(visitor(pairs), 40, 50);
  auto ids = shortlist.vocabulary({{12}, {17, 12}}, /*top_k=*/1, /*frequent=*/1, /*extra=*/{44});
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 2, 3, 5, 32, 37, 44}));
  auto none = shortlist.vocabulary(std::vector<TokenSpan>{}, 1, 0);
  EXPECT_EQ(none, (std::vector<int64_t>{0, 1, 2, 3}));
  auto wide = shortlist.vocabulary(std::vector<std::vector<int32_t>>{{12}}, 100, 1000);
  EXPECT_TRUE(std::is_sorted(wide.begin(), wide.end()));
  EXPECT_GE(wide.size(), 15u);
}

TEST(Shortlist, IdsOutsideTheVocabularyAreRefused) {
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs{{{1, 45}, {2}}};
  EXPECT_THROW(Shortlist::train(visitor(pairs), 40, 50), std::invalid_argument);
}

class ShortlistFile : public ::testing::Test {
 protected:
  void SetUp() override {
    trained_ = load_trained_model(run_.save_untrained_checkpoint(), torch::kCPU);
    const auto task = testing::reversal_task(200, 3);
    for (size_t i = 0; i < task.src.size(); ++i) {
      pairs_.emplace_back(trained_.tokenizers.src->encode(task.src[i]),
                          trained_.tokenizers.tgt->encode(task.tgt[i]));
    }
    shortlist_ = Shortlist::train(visitor(pairs_), trained_.tokenizers.src->vocab_size(),
                                  trained_.tokenizers.tgt->vocab_size());
    path_ = run_.path("shortlist.tsv");
    shortlist_.save(path_, trained_.tokenizers);
  }
  std::string load_error(const std::string& content) {
    write_text(run_.path("bad.tsv"), content);
    try {
      Shortlist::load(run_.path("bad.tsv"), trained_.tokenizers);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  testing::TinyRun run_{"transformer"};
  TrainedModel trained_;
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs_;
  Shortlist shortlist_;
  std::string path_;
};

TEST_F(ShortlistFile, LoadsWhatWasSaved) {
  Shortlist loaded = Shortlist::load(path_, trained_.tokenizers);
  EXPECT_EQ(loaded.frequent(), shortlist_.frequent());
  for (int64_t s = 0; s < trained_.tokenizers.src->vocab_size(); ++s) {
    const auto& a = shortlist_.candidates(s);
    const auto& b = loaded.candidates(s);
    ASSERT_EQ(a.size(), b.size()) << s;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first);
      EXPECT_NEAR(a[i].second, b[i].second, 1e-5 * a[i].second);
    }
  }
  EXPECT_EQ(loaded.vocabulary({pairs_[0].first}, 3, 5),
            shortlist_.vocabulary({pairs_[0].first}, 3, 5));
}

TEST_F(ShortlistFile, BadFilesAreRefusedNamingFileAndLine) {
  const std::string bad = run_.path("bad.tsv");
  EXPECT_NE(load_error("").find(bad + ":0: empty file"), std::string::npos) << load_error("");
  EXPECT_NE(load_error("hello\n").find(bad + ":1: not an nmtzoo shortlist"), std::string::npos);
  EXPECT_NE(load_error("nmtzoo-shortlist\t9\tx\n").find("version 9 is not supported"),
            std::string::npos);
  std::string header = read_text(path_).substr(0, read_text(path_).find('\n') + 1);
  const std::string other = load_error("nmtzoo-shortlist\t1\t0123456789abcdef\n");
  EXPECT_NE(other.find(bad + ":1: made for other tokenizers"), std::string::npos) << other;
  const std::string piece = load_error(header + "frequent\t\xe2\x96\x81nosuchpiece\t3\n");
  EXPECT_NE(
      piece.find(bad + ":2: '\xe2\x96\x81nosuchpiece' is not a piece of the target tokenizer"),
      std::string::npos)
      << piece;
  const std::string shape = load_error(header + "lexical\ta\tb\n");
  EXPECT_NE(shape.find(bad + ":2: expected"), std::string::npos) << shape;
  const std::string number = load_error(header + "lexical\t" + trained_.tokenizers.src->piece(5) +
                                        "\t" + trained_.tokenizers.tgt->piece(6) + "\tmany\n");
  EXPECT_NE(number.find(bad + ":2: 'many' is not a valid probability"), std::string::npos)
      << number;
  EXPECT_THROW(Shortlist::load(run_.path("missing.tsv"), trained_.tokenizers), std::runtime_error);
}

TEST_F(ShortlistFile,
       TheTranslatorDecodesOverTheShortlistUnlessSamplingOrConstraintsNeedEverything) {
  std::vector<std::string> lines{"alpha bravo", "", "charlie delta echo"};
  SearchOptions options;
  options.beam = 3;
  options.shortlist = path_;
  options.shortlist_top_k = 2;
  options.shortlist_frequent = 0;
  auto translations =
      TranslationPipeline(*trained_.model, trained_.tokenizers, options, torch::kCPU)
          .translate(lines);
  ASSERT_EQ(translations.size(), lines.size());
  for (size_t i : {0, 2}) {
    auto allowed = shortlist_.vocabulary({trained_.tokenizers.src->encode(lines[i])}, 2, 0);
    auto alone = TranslationPipeline(*trained_.model, trained_.tokenizers, options, torch::kCPU)
                     .translate({lines[i]});
    for (int64_t token : alone[0].nbest.at(0).tokens) {
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), token))
          << "line " << i << " token " << token;
    }
  }
  options.sampling = true;
  options.nbest = 2;
  auto sampled = TranslationPipeline(*trained_.model, trained_.tokenizers, options, torch::kCPU)
                     .translate(lines);
  options.shortlist.clear();
  auto sampled_whole =
      TranslationPipeline(*trained_.model, trained_.tokenizers, options, torch::kCPU)
          .translate(lines);
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(sampled[i].texts, sampled_whole[i].texts);

  options = SearchOptions();
  options.shortlist = run_.path("missing.tsv");
  EXPECT_THROW(TranslationPipeline(*trained_.model, trained_.tokenizers, options, torch::kCPU),
               std::runtime_error);
}

TEST_F(ShortlistFile, TheAppLearnsAShortlistThatTranslateUses) {
  const std::string checkpoint = run_.save_untrained_checkpoint("model.pt");
  std::string src_text;
  std::string tgt_text;
  const auto task = testing::reversal_task(100, 5);
  for (size_t i = 0; i < task.src.size(); ++i) {
    src_text += task.src[i] + "\n";
    tgt_text += task.tgt[i] + "\n";
  }
  write_text(run_.path("corpus.src"), src_text);
  write_text(run_.path("corpus.tgt"), tgt_text);
  const std::string out = run_.path("app.tsv");
  ASSERT_EQ(
      testing::run({testing::bin("nmtzoo-shortlist"), checkpoint, "-o", out, "--source",
                    run_.path("corpus.src"), "--target", run_.path("corpus.tgt"), "--threads", "1"},
                   "", run_.path("stdout.txt"), run_.path("stderr.txt")),
      0)
      << read_text(run_.path("stderr.txt"));
  EXPECT_NE(read_text(run_.path("stderr.txt")).find("100 pairs read"), std::string::npos);
  Shortlist loaded = Shortlist::load(out, trained_.tokenizers);
  EXPECT_FALSE(loaded.frequent().empty());

  write_text(run_.path("input.txt"), "alpha bravo\n\ncharlie\n");
  ASSERT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint, "--threads", "1",
                          "--shortlist", out},
                         run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt")),
            0)
      << read_text(run_.path("stderr.txt"));
  const std::string translated = read_text(run_.path("stdout.txt"));
  EXPECT_EQ(std::count(translated.begin(), translated.end(), '\n'), 3);

  ASSERT_NE(testing::run({testing::bin("nmtzoo-shortlist"), checkpoint, "-o", out, "--source",
                          run_.path("corpus.src")},
                         "", run_.path("stdout.txt"), run_.path("stderr.txt")),
            0);
  EXPECT_NE(read_text(run_.path("stderr.txt")).find("--source given 1 times but --target 0 times"),
            std::string::npos);

  // A multilingual model's sources carry tags and its targets mix languages: refused.
  const std::string multilingual =
      run_.save_untrained_checkpoint(run_.multilingual_config(), "multi.pt");
  ASSERT_NE(testing::run({testing::bin("nmtzoo-shortlist"), multilingual, "-o", out}, "",
                         run_.path("stdout.txt"), run_.path("stderr.txt")),
            0);
  EXPECT_NE(read_text(run_.path("stderr.txt")).find("is a multilingual model (data.directions)"),
            std::string::npos)
      << read_text(run_.path("stderr.txt"));
}

at::Tensor ids(std::vector<int64_t> values) { return torch::tensor(values, torch::kLong); }

TEST(ShortlistSearch, AShortlistOfTheWholeVocabularyChangesNothing) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 3, 6}, {1, 1, 1}, 21);
    SearchOptions options;
    options.beam = 3;
    options.nbest = 3;
    BeamStrategy whole(3);
    auto plain = search(*model, batch.src_tokens, batch.src_pad_mask, options, whole);
    BeamStrategy listed(3);
    auto shortlisted = search(*model, batch.src_tokens, batch.src_pad_mask, options, listed, {},
                              torch::arange(testing::kTinyVocab, torch::kLong));
    for (size_t b = 0; b < plain.size(); ++b) {
      ASSERT_EQ(plain[b].size(), shortlisted[b].size()) << variant;
      for (size_t k = 0; k < plain[b].size(); ++k) {
        EXPECT_EQ(plain[b][k].tokens, shortlisted[b][k].tokens) << variant;
        EXPECT_NEAR(plain[b][k].score, shortlisted[b][k].score, 1e-5) << variant;
      }
    }
  }
}

TEST(ShortlistSearch, CachedDecodingOverAShortlistEqualsRecomputingOverIt) {
  const at::Tensor vocabulary = ids({0, 1, 2, 3, 5, 8, 9, 14, 20});
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 3, 6}, {1, 1, 1}, 22);
    SearchOptions options;
    options.beam = 3;
    options.nbest = 2;
    BeamStrategy first(3);
    auto cached =
        search(*model, batch.src_tokens, batch.src_pad_mask, options, first, {}, vocabulary);
    PrefixRecomputingModel recomputing(model);
    BeamStrategy second(3);
    auto uncached =
        search(recomputing, batch.src_tokens, batch.src_pad_mask, options, second, {}, vocabulary);
    for (size_t b = 0; b < cached.size(); ++b) {
      for (size_t k = 0; k < cached[b].size(); ++k) {
        EXPECT_EQ(cached[b][k].tokens, uncached[b][k].tokens) << variant;
        EXPECT_NEAR(cached[b][k].score, uncached[b][k].score, 1e-4) << variant;
        for (int64_t token : cached[b][k].tokens) {
          EXPECT_TRUE(token == 5 || token == 8 || token == 9 || token == 14 || token == 20 ||
                      token == kUnkId)
              << variant << " token " << token;
        }
      }
    }
  }
}

TEST(ShortlistSearch, PrefixesAndEnsemblesWorkOverAShortlist) {
  auto transformer = tiny_model("transformer_post");
  auto rnn = tiny_model("rnn_bahdanau");
  EnsembleModel ensemble({transformer, rnn});
  auto batch = random_batch({4, 6}, {1, 1}, 23);
  SearchOptions options;
  options.beam = 2;
  std::vector<SentenceGuide> guides(2);
  guides[0].prefix = {9, 14};
  // Whole vocabulary: the same as no shortlist.
  BeamStrategy a(2);
  auto plain = search(ensemble, batch.src_tokens, batch.src_pad_mask, options, a, guides);
  BeamStrategy b(2);
  auto whole = search(ensemble, batch.src_tokens, batch.src_pad_mask, options, b, guides,
                      torch::arange(testing::kTinyVocab, torch::kLong));
  for (size_t s = 0; s < plain.size(); ++s) EXPECT_EQ(plain[s][0].tokens, whole[s][0].tokens);
  // A narrow one: the prefix comes first, then only shortlisted tokens.
  BeamStrategy c(2);
  auto narrow = search(ensemble, batch.src_tokens, batch.src_pad_mask, options, c, guides,
                       ids({0, 1, 2, 3, 7, 9, 14}));
  ASSERT_GE(narrow[0][0].tokens.size(), 2u);
  EXPECT_EQ(narrow[0][0].tokens[0], 9);
  EXPECT_EQ(narrow[0][0].tokens[1], 14);
  for (const auto& nbest : narrow) {
    for (int64_t token : nbest[0].tokens)
      EXPECT_TRUE(token == 1 || token == 7 || token == 9 || token == 14) << token;
  }
  // A prefix token outside the shortlist, or a shortlist without the special ids, is a caller's
  // bug.
  BeamStrategy d(2);
  EXPECT_THROW(search(ensemble, batch.src_tokens, batch.src_pad_mask, options, d, guides,
                      ids({0, 1, 2, 3, 7})),
               c10::Error);
  EXPECT_THROW(
      search(ensemble, batch.src_tokens, batch.src_pad_mask, options, d, {}, ids({0, 1, 3, 7})),
      c10::Error);
  EXPECT_THROW(search(ensemble, batch.src_tokens, batch.src_pad_mask, options, d, {},
                      ids({0, 1, 2, 3, 9, 7})),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
