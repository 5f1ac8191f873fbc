// SPDX-License-Identifier: MIT
// nmtzoo-serve as LibreTranslate's clients see it: /languages, /frontend/settings, the fields of
// /translate and /detect, the answers of the features it lacks, and real clients from npm.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "libtorch/search/translator.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/http_api.h"
#include "libtorch/serve/libretranslate.h"
#include "tests/serve/served_model_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

TEST(LibreTranslateLanguages, NamesAreEnglishAndAnUnknownCodeIsItsOwnName) {
  EXPECT_EQ(language_name("de"), "German");
  EXPECT_EQ(language_name("en"), "English");
  EXPECT_EQ(language_name("el"), "Greek");
  EXPECT_EQ(language_name("zh-Hant"), "Chinese (traditional)");
  EXPECT_EQ(language_name("src"), "src");
  EXPECT_EQ(language_name(""), "");
}

// A client checks both codes against /languages: a target-only language is listed too.
TEST(LibreTranslateLanguages, EveryLanguageReadOrWrittenIsListedWithItsTargets) {
  EXPECT_EQ(libretranslate_languages({{"de", "en"}}), json::parse(R"([
    {"code": "de", "name": "German", "targets": ["en"]},
    {"code": "en", "name": "English", "targets": []}])"));
  EXPECT_EQ(libretranslate_languages({{"en", "fr"}, {"de", "fr"}, {"de", "en"}, {"de", "en"}}),
            json::parse(R"([
    {"code": "de", "name": "German", "targets": ["en", "fr"]},
    {"code": "en", "name": "English", "targets": ["fr"]},
    {"code": "fr", "name": "French", "targets": []}])"));
}

class LibreTranslateApi : public ServedTinyModel {
 protected:
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The answer's JSON, after checking its status.
  static json answer(const httplib::Result& res, int expected_status) {
    EXPECT_TRUE(res);
    if (!res) return json();
    EXPECT_EQ(res->status, expected_status) << res->body;
    return json::parse(res->body);
  }
  json get_json(const std::string& path, int expected_status) const {
    return answer(client().Get(path.c_str()), expected_status);
  }
  json post_json(const std::string& path, const json& body, int expected_status) const {
    return answer(client().Post(path.c_str(), body.dump(), "application/json"), expected_status);
  }
};

TEST_F(LibreTranslateApi, LanguagesListsTheTargetLanguageToo) {
  start();
  EXPECT_EQ(get_json("/languages", 200), json::parse(R"([
    {"code": "src", "name": "src", "targets": ["tgt"]},
    {"code": "tgt", "name": "tgt", "targets": []}])"));
}

TEST_F(LibreTranslateApi, AMultilingualModelServesEachOfItsDirectionsByTheRequestsTarget) {
  const RunConfig multilingual = run_.multilingual_config();
  start({}, run_.save_untrained_checkpoint(multilingual, "multi.pt"));
  EXPECT_EQ(get_json("/languages", 200), json::parse(R"([
    {"code": "dup", "name": "dup", "targets": []},
    {"code": "src", "name": "src", "targets": ["dup", "tgt"]},
    {"code": "tgt", "name": "tgt", "targets": []}])"));
  const json models = get_json("/v1/models", 200);
  EXPECT_EQ(
      models[0]["directions"],
      json::parse(R"([{"source": "src", "target": "tgt"}, {"source": "src", "target": "dup"}])"));
  EXPECT_FALSE(models[0].contains("target"));
  // Each target gets its own tag, so the same text is translated as the offline translator does
  // with that target.
  Translator offline_translator({checkpoint_});
  for (const std::string target : {"tgt", "dup"}) {
    const json answer = post_json(
        "/translate", {{"q", "alpha bravo charlie"}, {"source", "auto"}, {"target", target}}, 200);
    SearchOptions options = offline_translator.search_options();
    options.target_lang = target;
    EXPECT_EQ(answer["translatedText"],
              offline_translator.translate_batch({"alpha bravo charlie"}, options)[0].texts[0])
        << target;
    EXPECT_EQ(answer["detectedLanguage"]["language"], "src");
  }
  const json refused =
      post_json("/translate", {{"q", "alpha"}, {"source", "src"}, {"target", "fr"}}, 400);
  EXPECT_EQ(refused["error"],
            "no model translates 'src' to 'fr' (this server has src->tgt, src->dup)");
  // nmtzoo's API by model name: a multilingual model needs the target.
  const json unsaid = post_json("/v1/translate", {{"model", "tiny"}, {"text", "alpha"}}, 400);
  EXPECT_NE(
      unsaid["error"].get<std::string>().find("the model translates into dup, tgt: say which"),
      std::string::npos)
      << unsaid;
  post_json("/v1/translate", {{"model", "tiny"}, {"text", "alpha"}, {"target", "dup"}}, 200);
}

// The target comes from the request's target only: a tag typed in the text (the tokenizer reads
// it as the control token) once chose its own target over the request's, and an unknown one was
// blamed on field 'target'.
TEST_F(LibreTranslateApi, ATargetTagInTheTextIsRefusedNamingTheField) {
  start({}, run_.save_untrained_checkpoint(run_.multilingual_config(), "multi.pt"));
  EXPECT_EQ(post_json("/translate", {{"q", "<2dup> alpha"}, {"target", "tgt"}}, 400)["error"],
            "field 'q' item 1 line 1 holds <2dup>, the model's target-language tag: the target "
            "comes from field 'target' only");
  EXPECT_EQ(
      post_json("/v1/translate", {{"text", {"alpha", "bravo\ncharlie <2tgt>"}}, {"target", "dup"}},
                400)["error"],
      "field 'text' item 2 line 2 holds <2tgt>, the model's target-language tag: the target comes "
      "from field 'target' only");
  // A tag-like text that is no tag of the model is text.
  post_json("/translate", {{"q", "<2cs> alpha"}, {"target", "tgt"}}, 200);
}

TEST_F(LibreTranslateApi, FrontendSettingsHasLibreTranslatesFieldsAndTheServersLimit) {
  start({"serve.max_line_chars=300"});
  EXPECT_EQ(get_json("/frontend/settings", 200), json::parse(R"({
    "charLimit": 300, "frontendTimeout": 500, "apiKeys": false, "keyRequired": false,
    "suggestions": false, "filesTranslation": false, "supportedFilesFormat": [],
    "language": {"source": {"code": "src", "name": "src"}, "target": {"code": "tgt", "name": "tgt"}}})"));
}

TEST_F(LibreTranslateApi, AMissingApiKeyIs400AndAWrongOne403) {
  start({"serve.api_keys=[secret]"});
  const json settings = get_json("/frontend/settings", 200);
  EXPECT_EQ(settings["apiKeys"], true);
  EXPECT_EQ(settings["keyRequired"], true);
  const json request{{"q", "a b"}, {"source", "src"}, {"target", "tgt"}};
  EXPECT_EQ(post_json("/translate", request, 400)["error"],
            "missing field 'api_key': this server needs an API key");
  json wrong = request;
  wrong["api_key"] = "guess";
  EXPECT_EQ(post_json("/translate", wrong, 403)["error"], "field 'api_key': invalid API key");
  EXPECT_EQ(post_json("/detect", {{"q", "a b"}, {"api_key", "guess"}}, 403)["error"],
            "field 'api_key': invalid API key");
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a b"}}, 400)["error"],
            "missing field 'api_key': this server needs an API key");
  json right = request;
  right["api_key"] = "secret";
  EXPECT_TRUE(post_json("/translate", right, 200)["translatedText"].is_string());
}

// LibreTranslate answers a list's detectedLanguage with one detection per text.
TEST_F(LibreTranslateApi, AutoSourceGivesDetectedLanguageOnlyThenAndOncePerText) {
  start();
  const json detected{{"confidence", 100.0}, {"language", "src"}};
  EXPECT_EQ(post_json("/translate", {{"q", "a b"}, {"source", "auto"}, {"target", "tgt"}},
                      200)["detectedLanguage"],
            detected);
  EXPECT_EQ(
      post_json("/translate",
                {{"q", json::array({"a b", "c d\ne"})}, {"source", "auto"}, {"target", "tgt"}},
                200)["detectedLanguage"],
      json({detected, detected}));
  EXPECT_FALSE(post_json("/translate", {{"q", "a b"}, {"source", "src"}, {"target", "tgt"}}, 200)
                   .contains("detectedLanguage"));
}

// As LibreTranslate's: distinct, never the translation itself, none for a count below 1.
TEST_F(LibreTranslateApi, AlternativesAreDistinctOtherTranslations) {
  start();
  const auto nbest = offline({"b b a"}, 4);
  std::vector<std::string> expected;
  for (size_t i = 1; i < nbest.size(); ++i) {
    if (!nbest[i].empty() && nbest[i] != nbest[0] &&
        std::find(expected.begin(), expected.end(), nbest[i]) == expected.end()) {
      expected.push_back(nbest[i]);
    }
  }
  const json request{{"q", "b b a"}, {"source", "src"}, {"target", "tgt"}};
  json three = request;
  three["alternatives"] = 3;
  const json answer = post_json("/translate", three, 200);
  EXPECT_EQ(answer["translatedText"], nbest[0]);
  EXPECT_EQ(answer["alternatives"], json(expected));
  json list = three;
  list["q"] = json::array({"b b a"});
  EXPECT_EQ(post_json("/translate", list, 200)["alternatives"], json::array({json(expected)}));
  json negative = request;
  negative["alternatives"] = -2;
  EXPECT_FALSE(post_json("/translate", negative, 200).contains("alternatives"));
  json many = request;
  many["alternatives"] = 17;
  EXPECT_EQ(post_json("/translate", many, 400)["error"],
            "field 'alternatives' is 17, over this server's limit of 16");
  json word = request;
  word["alternatives"] = "three";
  EXPECT_EQ(post_json("/translate", word, 400)["error"], "field 'alternatives' must be an integer");
}

// alternatives is an integer or its text, nothing else: 3.7, "2abc", 1e300 and 10^20 were read
// as 3, 2, 0 and 0 without a word. The bound is serve.max_alternatives.
TEST_F(LibreTranslateApi, AlternativesMustBeAnIntegerWithinTheKeysBound) {
  start({"serve.max_alternatives=2"});
  for (const char* value :
       {"3.7", R"("2abc")", "1e300", "100000000000000000000", R"("")", "true", "[1]", R"("1.0")"}) {
    const json body = json::parse(
        std::string(R"({"q": "alpha", "target": "tgt", "alternatives": )") + value + "}");
    EXPECT_EQ(post_json("/translate", body, 400)["error"],
              "field 'alternatives' must be an integer")
        << value;
  }
  EXPECT_EQ(post_json("/translate", {{"q", "alpha"}, {"target", "tgt"}, {"alternatives", 3}},
                      400)["error"],
            "field 'alternatives' is 3, over this server's limit of 2");
  EXPECT_EQ(post_json("/translate",
                      {{"q", "alpha"}, {"target", "tgt"}, {"alternatives", "99999999999999999999"}},
                      400)["error"],
            "field 'alternatives' is 99999999999999999999, over this server's limit of 2");
  post_json("/translate", {{"q", "alpha"}, {"target", "tgt"}, {"alternatives", "2"}}, 200);
  // nbest, per request or from Python, is the schema's decoding.nbest: at most 1,024 samples (a
  // request for 20,000 took 69 s and 400 MB).
  const json nbest =
      post_json("/v1/translate", {{"text", "alpha"}, {"sampling", true}, {"nbest", 20000}}, 400);
  EXPECT_NE(nbest["error"].get<std::string>().find("nbest"), std::string::npos) << nbest;
  EXPECT_NE(nbest["error"].get<std::string>().find("1024"), std::string::npos) << nbest;
}

TEST_F(LibreTranslateApi, FeaturesItLacksAnswerAsADisabledLibreTranslate) {
  start();
  const httplib::MultipartFormDataItems file{{"file", "a b c\n", "text.txt", "text/plain"},
                                             {"source", "src", "", ""},
                                             {"target", "tgt", "", ""}};
  EXPECT_EQ(answer(client().Post("/translate_file", file), 403)["error"],
            "Files translation are disabled on this server.");
  EXPECT_EQ(post_json("/suggest", {{"q", "a"}, {"s", "b"}, {"source", "src"}, {"target", "tgt"}},
                      403)["error"],
            "Suggestions are disabled on this server.");
  EXPECT_EQ(get_json("/download_file/some.txt", 400)["error"],
            "Files translation are disabled on this server.");
  EXPECT_EQ(post_json("/detect", json::object(), 400)["error"], "missing field 'q'");
  // The server goes on after a body it did not read.
  EXPECT_EQ(post_json("/detect", {{"q", "a b"}}, 200),
            json::parse(R"([{"confidence": 100.0, "language": "src"}])"));
}

// The folder scripts/setup.sh installs the npm clients into (NMTZOO_NPM_DIR overrides it).
std::string npm_dir() {
  if (const char* dir = std::getenv("NMTZOO_NPM_DIR")) return dir;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  return (cache != nullptr ? std::string(cache)
                           : std::string(home != nullptr ? home : "/root") + "/.cache") +
         "/nmtzoo/npm";
}

// Two LibreTranslate clients from npm (tests/serve/libretranslate_client.mjs) get what
// nmtzoo-translate writes for the same sentences.
TEST_F(LibreTranslateApi, ClientsFromNpmTranslateAsTranslateDoes) {
  const std::string dir = npm_dir();
  const testing::CommandResult node = testing::run_command("command -v node");
  if (node.status != 0)
    NMTZOO_SKIP_OR_FAIL(
        "the LibreTranslate client test needs node (scripts/setup.sh installs nodejs)");
  for (const char* package : {"libretranslate", "libretranslate-ts"}) {
    if (!std::filesystem::exists(dir + "/node_modules/" + package + "/package.json")) {
      NMTZOO_SKIP_OR_FAIL(std::string("the npm package ") + package + " is not in " + dir +
                          " (scripts/setup.sh installs it there)");
    }
  }
  start();
  const std::vector<std::string> sentences{"a b c", "d e f g", "b b a", "c a"};
  std::string text;
  for (const auto& sentence : sentences) text += sentence + "\n";
  testing::write_text(run_.path("sentences.txt"), text);
  ASSERT_EQ(
      testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "1", "-q"},
                   run_.path("sentences.txt"), run_.path("offline.txt"), run_.path("offline.err")),
      0)
      << testing::read_text(run_.path("offline.err"));
  std::vector<std::string> offline;
  std::istringstream lines(testing::read_text(run_.path("offline.txt")));
  for (std::string line; std::getline(lines, line);) offline.push_back(line);
  ASSERT_EQ(offline.size(), sentences.size());

  const std::string script =
      std::string(NMTZOO_SOURCE_DIR) + "/tests/serve/libretranslate_client.mjs";
  ASSERT_EQ(testing::run({"/usr/bin/env", "node", script, dir, url(), "src", "tgt",
                          run_.path("sentences.txt")},
                         "", run_.path("client.json"), run_.path("client.err")),
            0)
      << testing::read_text(run_.path("client.err"));
  const json got = json::parse(testing::read_text(run_.path("client.json")));
  EXPECT_EQ(got["languages"], get_json("/languages", 200));
  EXPECT_EQ(got["translated"], json(offline));
  EXPECT_EQ(got["auto"], json(offline));
  for (size_t i = 0; i < sentences.size(); ++i) {
    const json& sdk = got["sdk"][i];
    EXPECT_EQ(sdk["status"], 200) << sdk;
    EXPECT_EQ(sdk["translatedText"], offline[i]) << sentences[i];
    EXPECT_LE(sdk["alternatives"].size(), 2u) << sdk;
  }
  EXPECT_EQ(got["detected"]["language"], "src") << got["detected"];
}

}  // namespace
}  // namespace nmtzoo
