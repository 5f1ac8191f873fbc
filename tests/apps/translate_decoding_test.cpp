// SPDX-License-Identifier: MIT
// nmtzoo-translate's decoding breadth as users run it: ensembles, input and output formats,
// prefixes, constraints, sampling, alignments.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

#include "tests/apps/translate_fixture.h"

namespace nmtzoo {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class TranslateDecoding : public testing::TranslateAppFixture {
 protected:
  const std::string input_ = "alpha bravo charlie\n\ndelta echo\nfoxtrot golf hotel india\n";
};

TEST_F(TranslateDecoding, AnEnsembleOfAModelWithItselfGivesTheModelsOutput) {
  ASSERT_EQ(translate({"--beam", "3", "--nbest", "3"}, input_), 0) << err();
  const std::string alone = out();
  for (const std::string mode : {"prob", "logprob"}) {
    ASSERT_EQ(translate({"-c", checkpoint_, "--beam", "3", "--nbest", "3", "--ensemble-mode", mode,
                         "--weights", "0.3,0.7"},
                        input_),
              0)
        << err();
    EXPECT_EQ(out(), alone) << mode;
    EXPECT_NE(err().find("2 model(s)"), std::string::npos) << err();
  }
}

TEST_F(TranslateDecoding, AnEnsembleOfTwoArchitecturesRunsAndChecksItsWeights) {
  testing::TinyRun rnn("rnn_bahdanau");  // the same synthetic corpus: the same vocabularies
  const std::string rnn_checkpoint = rnn.save_untrained_checkpoint();
  ASSERT_EQ(translate({"-c", rnn_checkpoint, "--alignment", "hard"}, input_), 0) << err();
  EXPECT_EQ(lines_of(out()).size(), 4u);
  EXPECT_NE(lines_of(out())[0].find('\t'), std::string::npos) << "alignments of the mixed ensemble";
  EXPECT_EQ(translate({"-c", rnn_checkpoint, "--weights", "1"}, input_), 1);
  EXPECT_NE(err().find("--weights has 1 values for 2 checkpoints"), std::string::npos) << err();
  EXPECT_EQ(translate({"-c", rnn_checkpoint, "--weights", "1,-2"}, input_), 1);
  EXPECT_NE(err().find("not a positive weight"), std::string::npos) << err();
}

TEST_F(TranslateDecoding, EnsemblePrefixConstraintsAlignmentAndNbestWorkTogether) {
  testing::TinyRun rnn("rnn_bahdanau");
  const std::string rnn_checkpoint = rnn.save_untrained_checkpoint();
  const std::string tsv = "alpha bravo charlie\tcharlie\tgolf\tdelta\n\t\t\nfoxtrot golf\t\techo\n";
  ASSERT_EQ(translate({"-c", rnn_checkpoint, "--weights", "0.7,0.3", "--input-format", "tsv",
                       "--constraints", "unordered", "--alignment", "hard", "--beam", "4",
                       "--nbest", "2", "--format", "jsonl"},
                      tsv),
            0)
      << err();
  auto lines = lines_of(out());
  ASSERT_EQ(lines.size(), 3u);
  for (size_t i : {0u, 2u}) {
    auto object = nlohmann::json::parse(lines[i]);
    ASSERT_EQ(object["nbest"].size(), 2u);
    EXPECT_FALSE(object.contains("constraints_met")) << "the best meets its constraints";
    for (const auto& hypothesis : object["nbest"]) {
      const std::string text = hypothesis["text"];
      if (i == 0) {
        EXPECT_EQ(text.rfind("charlie", 0), 0u) << "the prefix: " << text;
      }
      EXPECT_FALSE(hypothesis["alignment"].get<std::string>().empty());
      if (hypothesis.contains("constraints_met"))
        continue;  // ended by the length limit, ranked last
      if (i == 0) {
        EXPECT_NE(text.find("golf"), std::string::npos) << text;
        EXPECT_NE(text.find("delta"), std::string::npos) << text;
      } else {
        EXPECT_NE(text.find("echo"), std::string::npos) << text;
      }
    }
  }
}

TEST_F(TranslateDecoding, ModelsWithDifferentVocabulariesAreRefusedNamingBothFiles) {
  testing::TinyRun other("transformer", {"tokenizer.vocab_size=36"});
  const std::string other_checkpoint = other.save_untrained_checkpoint("other.pt");
  ASSERT_EQ(translate({"-c", other_checkpoint}, input_), 1);
  EXPECT_NE(
      err().find(checkpoint_ + " and " + other_checkpoint + " have different target vocabularies"),
      std::string::npos)
      << err();
  EXPECT_EQ(out(), "");
}

TEST_F(TranslateDecoding, TsvPrefixesAppearVerbatimAndConstraintsAreMet) {
  const std::string tsv =
      "alpha bravo charlie\tcharlie bravo\n"
      "\t\n"
      "delta echo\t\tgolf\tindia hotel\n"
      "foxtrot golf\tgolf\tdelta\n";
  ASSERT_EQ(translate({"--input-format", "tsv", "--constraints", "ordered", "--beam", "4"}, tsv), 0)
      << err();
  auto lines = lines_of(out());
  ASSERT_EQ(lines.size(), 4u) << out();
  EXPECT_EQ(lines[0].rfind("charlie bravo", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "");
  EXPECT_NE(lines[2].find("golf"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("india hotel"), std::string::npos) << lines[2];
  EXPECT_LT(lines[2].find("golf"), lines[2].find("india hotel")) << "ordered";
  EXPECT_EQ(lines[3].rfind("golf", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find("delta"), std::string::npos) << lines[3];
}

TEST_F(TranslateDecoding, JsonlInAndOut) {
  const std::string jsonl = R"({"src": "alpha bravo", "prefix": "echo", "constraints": ["golf"]})"
                            "\n"
                            R"({"src": ""})"
                            "\n"
                            R"({"src": "delta echo", "constraints": []})"
                            "\n";
  ASSERT_EQ(translate({"--input-format", "jsonl", "--constraints", "unordered", "--format", "jsonl",
                       "--alignment", "hard", "--nbest", "2", "--beam", "3"},
                      jsonl),
            0)
      << err();
  auto lines = lines_of(out());
  ASSERT_EQ(lines.size(), 3u);
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["line"], 1);
  EXPECT_EQ(first["text"].get<std::string>().rfind("echo", 0), 0u) << first;
  EXPECT_NE(first["text"].get<std::string>().find("golf"), std::string::npos) << first;
  EXPECT_TRUE(first["score"].is_number());
  EXPECT_TRUE(first["tokens"].is_array() && !first["tokens"].empty());
  EXPECT_TRUE(first["alignment"].is_string());
  ASSERT_EQ(first["nbest"].size(), 2u);
  auto empty = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(empty["text"], "");
  EXPECT_TRUE(empty["tokens"].empty());
}

TEST_F(TranslateDecoding, HardAlignmentsInPlainAndNbestOutputAndSoftInJsonl) {
  ASSERT_EQ(translate({"--alignment", "hard"}, input_), 0) << err();
  auto plain = lines_of(out());
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_EQ(plain[1], "\t");
  const auto tab = plain[0].find('\t');
  ASSERT_NE(tab, std::string::npos);
  EXPECT_TRUE(std::regex_match(plain[0].substr(tab + 1), std::regex(R"(\d+-\d+( \d+-\d+)*)")))
      << plain[0];
  ASSERT_EQ(translate({"--alignment", "hard", "--nbest", "2", "--beam", "2"}, input_), 0) << err();
  for (const auto& line : lines_of(out())) {
    if (line.rfind("1 |||", 0) == 0) continue;  // the empty line's n-best entries
    EXPECT_EQ(std::count(line.begin(), line.end(), '|'), 9)
        << "i ||| text ||| score ||| alignment: " << line;
  }
  ASSERT_EQ(translate({"--alignment", "soft", "--format", "jsonl", "--alignment-layer", "0",
                       "--alignment-heads", "1"},
                      "alpha bravo\n"),
            0)
      << err();
  auto soft = nlohmann::json::parse(lines_of(out())[0]);
  const auto& matrix = soft["attention"]["matrix"];
  EXPECT_EQ(matrix.size(), soft["tokens"].size() + 1) << "a row per target token and EOS";
  EXPECT_EQ(matrix[0].size(), soft["attention"]["source"].size());
}

TEST_F(TranslateDecoding, SamplingRepeatsWithItsSeedWhateverTheBatching) {
  const std::vector<std::string> sample{"--sampling", "--nbest", "3",   "--top-k",
                                        "10",         "--top-p", "0.9", "--temperature",
                                        "1.2",        "--seed",  "5"};
  ASSERT_EQ(translate(sample, input_), 0) << err();
  const std::string first = out();
  EXPECT_EQ(lines_of(first).size(), 12u) << "three samples per line";
  auto small_batches = sample;
  small_batches.insert(small_batches.end(), {"--batch-tokens", "5", "--buffer-lines", "1"});
  ASSERT_EQ(translate(small_batches, input_), 0) << err();
  EXPECT_EQ(out(), first);
  auto other_seed = sample;
  other_seed.back() = "6";
  ASSERT_EQ(translate(other_seed, input_), 0) << err();
  EXPECT_NE(out(), first);
}

TEST_F(TranslateDecoding, BadCombinationsAreClearErrors) {
  EXPECT_EQ(translate({"--alignment", "soft"}, input_), 1);
  EXPECT_NE(err().find("--alignment soft"), std::string::npos) << err();
  EXPECT_EQ(translate({"--input-format", "tsv"}, "alpha\t\tgolf\n"), 1);
  EXPECT_NE(err().find("stdin: line 1: has constraints, but constrained decoding is off"),
            std::string::npos)
      << err();
  EXPECT_EQ(translate({"--input-format", "jsonl"}, "{\"src\": 1}\n"), 1);
  EXPECT_NE(err().find("stdin:1: field \"src\" must be a string"), std::string::npos) << err();
  EXPECT_EQ(translate({"--sampling", "--constraints", "ordered"}, input_), 1);
  EXPECT_NE(err().find("decoding.constraints"), std::string::npos) << err();
  EXPECT_EQ(translate({"--alignment", "hard", "--alignment-layer", "7"}, input_), 1);
  EXPECT_NE(err().find("--alignment-layer 7"), std::string::npos) << err();
  testing::TinyRun encdec("rnn_encdec");
  EXPECT_EQ(translate({"--alignment", "hard"}, input_, encdec.save_untrained_checkpoint()), 1);
  EXPECT_NE(err().find("--alignment needs cross-attention, but model rnn_encdec"),
            std::string::npos)
      << err();
}

// Each of these once gave empty translations with rc 0 and no word: refused when it cannot work,
// lowered with a warning when it can.
TEST_F(TranslateDecoding, LimitsThatLeftOutputsEmptyAreRefusedOrLoweredWithAWarning) {
  // A temperature that overflows float32.
  EXPECT_EQ(translate({"--sampling", "--temperature", "1e39"}, input_), 1);
  EXPECT_NE(err().find("--temperature: decoding.temperature "), std::string::npos) << err();
  EXPECT_NE(err().find("out of range"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
  // min_len above the short lines' length limits: lowered to each line's limit, said once.
  ASSERT_EQ(translate({"--min-len", "60", "--beam", "2"}, input_), 0) << err();
  EXPECT_EQ(lines_of(out()).size(), 4u);
  const std::string said = err();
  EXPECT_NE(said.find("warning: stdin:1: decoding.min_len was lowered to "), std::string::npos)
      << said;
  size_t warnings = 0;
  for (size_t at = said.find("min_len was lowered"); at != std::string::npos;
       at = said.find("min_len was lowered", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << "once per run: " << said;
  // In jsonl every lowered line says so, and has an output as long as its limit allows.
  ASSERT_EQ(translate({"--min-len", "60", "--format", "jsonl"}, input_), 0) << err();
  const auto objects = lines_of(out());
  ASSERT_EQ(objects.size(), 4u);
  for (size_t i : {0u, 2u, 3u}) {
    const auto object = nlohmann::json::parse(objects[i]);
    EXPECT_FALSE(object["tokens"].empty()) << objects[i];
    ASSERT_TRUE(object.contains("warnings")) << objects[i];
    EXPECT_NE(object["warnings"][0].get<std::string>().find("min_len was lowered"),
              std::string::npos)
        << objects[i];
  }
  EXPECT_FALSE(nlohmann::json::parse(objects[1]).contains("warnings")) << objects[1];
  // A prefix longer than the model can output: refused naming the file and line, nothing written.
  std::string long_prefix = "alpha";
  for (int i = 0; i < 1500; ++i) long_prefix += " alpha";
  const std::string input = run_.path("input.txt");
  EXPECT_EQ(
      translate({"-i", input, "--input-format", "tsv"}, "bravo\t\ncharlie\t" + long_prefix + "\n"),
      1);
  EXPECT_NE(err().find(input + ": line 2: the prefix has "), std::string::npos) << err();
  EXPECT_NE(err().find("the model can output"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
}

TEST_F(TranslateDecoding, QuietSilencesStderrAndProgressIsLoggedOffATerminal) {
  ASSERT_EQ(translate({"--quiet"}, input_), 0);
  EXPECT_EQ(err(), "");
  ASSERT_EQ(translate({}, input_), 0);
  EXPECT_NE(err().find("translated 4 sentences"), std::string::npos) << err();
}

}  // namespace
}  // namespace nmtzoo
