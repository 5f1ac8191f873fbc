// SPDX-License-Identifier: MIT
#include "libtorch/search/translator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <future>
#include <thread>

#include "tests/support/tiny_run.h"
#include "torch_free/config/schema.h"

namespace nmtzoo {
namespace {

const std::vector<std::string> kLines{"alpha bravo", "", "charlie delta echo foxtrot", "golf"};

std::vector<std::string> texts_of(const std::vector<Translation>& translations) {
  std::vector<std::string> texts;
  for (const auto& t : translations) texts.insert(texts.end(), t.texts.begin(), t.texts.end());
  return texts;
}

TEST(Translator, LoadsACheckpointAndTranslatesAsTheTranslationPipelineDoes) {
  testing::TinyRun run("transformer");
  Translator translator({run.save_untrained_checkpoint()});
  SearchOptions options = translator.search_options({{"decoding.beam", "3", "--beam"}});
  EXPECT_EQ(options.beam, 3);
  const TrainedModel& member = translator.members().front();
  TranslationPipeline direct(*member.model, member.tokenizers, options, torch::kCPU);
  EXPECT_EQ(texts_of(translator.translate_batch(kLines, options)),
            texts_of(direct.translate(kLines)));
  // The options are per call: a second call with others is not affected by the first.
  options.beam = 1;
  TranslationPipeline greedy(*member.model, member.tokenizers, options, torch::kCPU);
  EXPECT_EQ(texts_of(translator.translate_batch(kLines, options)),
            texts_of(greedy.translate(kLines)));
}

TEST(Translator, ScoresThatOverflowStopTranslatingAndScoringNamingTheLine) {
  testing::TinyRun run("transformer");
  Translator translator({run.save_untrained_checkpoint()});
  testing::make_activations_overflow(*translator.members().front().model);
  const std::vector<std::string> lines{"alpha bravo", "", "charlie delta"};
  for (const char* beam : {"1", "3"}) {
    const SearchOptions options = translator.search_options({{"decoding.beam", beam, "--beam"}});
    try {
      translator.translate_batch(lines, options, /*first_line=*/5);
      ADD_FAILURE() << "beam " << beam << ": translated with exit 0";
    } catch (const NonFiniteScores& e) {
      EXPECT_EQ(std::string(e.what()).rfind("line 5, 7: the model's scores are not finite", 0), 0)
          << e.what();
    }
  }
  try {
    translator.score_batch({"alpha", "bravo"}, {"charlie", "delta"}, translator.search_options());
    ADD_FAILURE() << "scored";
  } catch (const NonFiniteScores& e) {
    EXPECT_EQ(std::string(e.what()).rfind("line 1: the model's scores are not finite", 0), 0)
        << e.what();
  }
}

TEST(Translator, SearchOptionsAreTheCheckpointsDecodingSectionCheckedByTheSchema) {
  testing::TinyRun run("transformer", {"decoding.alpha=0.7"});
  Translator translator({run.save_untrained_checkpoint()});
  EXPECT_EQ(translator.search_options().alpha, 0.7);
  try {
    translator.search_options({{"decoding.beam", "0", "--beam"}});
    FAIL() << "beam 0 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--beam: decoding.beam 0 is out of range"),
              std::string::npos)
        << e.what();
  }
  // A beam below the checkpoint's n-best narrows it; an explicit n-best over the beam is an error.
  testing::TinyRun nbest_run("transformer", {"decoding.nbest=4", "decoding.beam=4"});
  Translator nbest({nbest_run.save_untrained_checkpoint()});
  EXPECT_EQ(nbest.search_options({{"decoding.beam", "2", "--beam"}}).nbest, 2);
  EXPECT_THROW(
      nbest.search_options({{"decoding.beam", "2", "--beam"}, {"decoding.nbest", "3", "--nbest"}}),
      ConfigError);
}

// Values the range check once let through that overflow float32 in the search (every output
// then empty, rc 0): refused by the schema, naming the flag and the key.
TEST(Translator, SearchOptionsThatWouldOverflowFloat32AreRefusedNamingTheKey) {
  testing::TinyRun run("transformer");
  Translator translator({run.save_untrained_checkpoint()});
  const std::vector<std::pair<KeyValue, std::string>> cases{
      {{"decoding.temperature", "1e39", "--temperature"}, "--temperature: decoding.temperature "},
      {{"decoding.temperature", "1e7", "--temperature"}, "--temperature: decoding.temperature "},
      {{"decoding.unk_penalty", "-1e39", "--unk-penalty"}, "--unk-penalty: decoding.unk_penalty "},
      {{"decoding.unk_penalty", "1e39", "--unk-penalty"}, "--unk-penalty: decoding.unk_penalty "},
  };
  for (const auto& [value, message] : cases) {
    try {
      translator.search_options({value});
      FAIL() << value.key << " " << value.yaml_value << " was accepted";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(message), std::string::npos) << what;
      EXPECT_NE(what.find("out of range"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(
      translator.search_options({{"decoding.temperature", "1e6", "--temperature"}}).temperature,
      1e6);
  EXPECT_EQ(
      translator.search_options({{"decoding.unk_penalty", "-1e6", "--unk-penalty"}}).unk_penalty,
      -1e6);
}

TEST(Translator, AnEnsembleOfAModelWithItselfTranslatesAndScoresAsTheModel) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  Translator single({checkpoint});
  Translator pair({checkpoint, checkpoint});
  const SearchOptions options = single.search_options();
  EXPECT_EQ(texts_of(pair.translate_batch(kLines, options)),
            texts_of(single.translate_batch(kLines, options)));
  const std::vector<std::string> targets{"alpha", "", "bravo charlie", "delta delta delta"};
  const auto alone = single.score_batch(kLines, targets, options);
  const auto together = pair.score_batch(kLines, targets, options);
  ASSERT_EQ(alone.size(), kLines.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(together[i].log_prob, alone[i].log_prob, 1e-4) << i;
    EXPECT_EQ(together[i].tokens, alone[i].tokens);
    EXPECT_EQ(alone[i].tokens.back(), "</s>");
    EXPECT_EQ(alone[i].token_log_probs.size(), alone[i].tokens.size());
    EXPECT_LT(alone[i].log_prob, 0.0);
  }
}

// Scoring a target teacher-forced gives the log-probability the search gives the same tokens when
// they are forced as a prefix and the length limit then forces EOS.
TEST(Translator, ScoringATargetGivesTheSearchsLogProbOfItForcedAsAPrefix) {
  testing::TinyRun run("rnn_bahdanau");
  Translator translator({run.save_untrained_checkpoint()});
  SearchOptions options = translator.search_options({{"decoding.beam", "1", "--beam"}});
  options.length_penalty = LengthPenalty::kNone;
  options.max_len_a = 0;
  options.max_len_b = 0;  // the limit is the prefix's length: EOS comes right after it
  const std::vector<std::string> sources{"alpha bravo", "charlie delta echo", "golf"};
  const std::vector<std::string> targets{"bravo alpha", "echo delta charlie", "golf golf"};
  std::vector<TranslationRequest> forced;
  for (size_t i = 0; i < sources.size(); ++i) forced.push_back({sources[i], targets[i], {}, {}});
  const auto translations = translator.translate_batch(forced, options);
  const auto scored = translator.score_batch(sources, targets, options);
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto ids = translator.tokenizers().tgt->encode(targets[i]);
    ASSERT_EQ(translations[i].nbest.at(0).tokens, std::vector<int64_t>(ids.begin(), ids.end()))
        << targets[i];
    EXPECT_EQ(scored[i].tokens.size(), ids.size() + 1);
    EXPECT_NEAR(scored[i].log_prob, translations[i].nbest[0].log_prob, 1e-4) << targets[i];
  }
}

TEST(Translator, RefusesEnsemblesWhoseVocabulariesOrWeightsDoNotFit) {
  testing::TinyRun run("transformer");
  testing::TinyRun other("transformer", {"tokenizer.vocab_size=36"});
  const std::string a = run.save_untrained_checkpoint();
  const std::string b = other.save_untrained_checkpoint();
  try {
    Translator({a, b});
    FAIL() << "different vocabularies were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("different target vocabularies"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Translator({a, a}, TranslatorOptions().weights({1.0})), std::invalid_argument);
  EXPECT_THROW(Translator({a, a}, TranslatorOptions().weights({1.0, -1.0})), std::invalid_argument);
  EXPECT_THROW(Translator({a, a}, TranslatorOptions().recompute_prefix(true)),
               std::invalid_argument);
}

TEST(Translator, ChecksTheAttentionChoiceBeforeAnyInput) {
  testing::TinyRun run("transformer");
  Translator translator({run.save_untrained_checkpoint()});
  SearchOptions options = translator.search_options();
  options.record_attention = true;
  options.attention = AttentionChoice{7, -1, 0, true};
  try {
    translator.prepare(options);
    FAIL() << "layer 7 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--alignment-layer 7"), std::string::npos) << e.what();
  }
  options.attention = AttentionChoice{AttentionChoice::kPenultimateLayer, -1, 0, true};
  EXPECT_NO_THROW(translator.prepare(options));
  const auto translations = translator.translate_batch(kLines, options);
  EXPECT_TRUE(translations[0].nbest.at(0).attention.defined());

  testing::TinyRun plain("rnn_encdec");
  Translator no_attention({plain.save_untrained_checkpoint()});
  SearchOptions align = no_attention.search_options();
  align.record_attention = true;
  align.attention.alignment = true;
  EXPECT_THROW(no_attention.prepare(align), std::invalid_argument);
  align.attention.alignment = false;  // heatmaps only: translated without attention
  EXPECT_FALSE(no_attention.translate_batch(kLines, align)[0].nbest.at(0).attention.defined());
}

TEST(Translator, TwoThreadsTranslatingAtOnceGetWhatEachGetsAlone) {
  testing::TinyRun run("transformer");
  Translator translator({run.save_untrained_checkpoint()});
  SearchOptions beam = translator.search_options();
  SearchOptions greedy = beam;
  greedy.beam = 1;
  const auto expected_beam = texts_of(translator.translate_batch(kLines, beam));
  const auto expected_greedy = texts_of(translator.translate_batch(kLines, greedy));
  std::vector<std::string> got_beam;
  std::vector<std::string> got_greedy;
  std::thread first([&] {
    for (int i = 0; i < 5; ++i) got_beam = texts_of(translator.translate_batch(kLines, beam));
  });
  std::thread second([&] {
    for (int i = 0; i < 5; ++i) got_greedy = texts_of(translator.translate_batch(kLines, greedy));
  });
  first.join();
  second.join();
  EXPECT_EQ(got_beam, expected_beam);
  EXPECT_EQ(got_greedy, expected_greedy);
}

// Calls overlap: one call, stopped inside its decoding (its progress callback), lets another on
// the same Translator run to its end. (Calls once took a lock for their whole length: the second
// waited for the first, which waited for it.) An ensemble's two calls each record the attention
// they chose, as each does alone.
TEST(Translator, ACallRunsWhileAnotherIsUnderWay) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  for (const std::vector<std::string>& checkpoints :
       {std::vector<std::string>{checkpoint}, std::vector<std::string>{checkpoint, checkpoint}}) {
    Translator translator(checkpoints);
    SearchOptions last_layer = translator.search_options();  // the mean of heads and layers
    last_layer.record_attention = true;
    SearchOptions first_layer = last_layer;  // one head
    first_layer.attention.layer = 0;
    first_layer.attention.head = 0;
    const auto alone_first = translator.translate_batch(kLines, first_layer);
    const auto alone_last = translator.translate_batch(kLines, last_layer);
    std::promise<void> paused;
    std::promise<void> other_done;
    auto other_done_future = other_done.get_future();
    std::vector<Translation> overlapped_first;
    std::thread first([&] {
      bool once = false;
      std::vector<TranslationRequest> requests;
      for (const auto& line : kLines) requests.push_back({line, {}, {}, {}});
      overlapped_first = translator.translate_batch(requests, first_layer, 1, [&](int64_t) {
        if (once) return;
        once = true;
        paused.set_value();
        other_done_future.wait_for(std::chrono::seconds(20));
      });
    });
    paused.get_future().wait();
    std::vector<Translation> overlapped_last;
    std::thread second([&] {
      overlapped_last = translator.translate_batch(kLines, last_layer);
      other_done.set_value();
    });
    const bool finished =
        other_done_future.wait_for(std::chrono::seconds(15)) == std::future_status::ready;
    second.join();
    first.join();
    ASSERT_TRUE(finished) << checkpoints.size()
                          << " model(s): the second call waited for the first";
    ASSERT_EQ(overlapped_first.size(), alone_first.size());
    for (size_t i = 0; i < kLines.size(); ++i) {
      EXPECT_EQ(overlapped_first[i].texts, alone_first[i].texts);
      EXPECT_EQ(overlapped_last[i].texts, alone_last[i].texts);
      if (alone_first[i].nbest.empty() || !alone_first[i].nbest[0].attention.defined()) continue;
      EXPECT_TRUE(overlapped_first[i].nbest[0].attention.equal(alone_first[i].nbest[0].attention));
      EXPECT_TRUE(overlapped_last[i].nbest[0].attention.equal(alone_last[i].nbest[0].attention));
    }
  }
}

}  // namespace
}  // namespace nmtzoo
