// SPDX-License-Identifier: MIT
// nmtzoo-serve's API, batching, limits and shutdown, against a server on a free loopback port.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <torch/torch.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <regex>
#include <set>
#include <thread>

#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/shortlist.h"
#include "libtorch/search/translator.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/http_api.h"
#include "libtorch/serve/http_server.h"
#include "tests/serve/raw_http.h"
#include "tests/serve/served_model_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

class Server : public ServedTinyModel {
 protected:
  json post_json(const std::string& path, const json& body, int expected_status) const {
    auto res = client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, expected_status) << res->body;
    EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "*");
    return json::parse(res->body);
  }
  // With a shortlist, one candidate per source token and no frequent tokens, so that it matters.
  std::vector<KeyValue> decoding_settings() const override {
    if (shortlist_path_.empty()) return {};
    return {{"decoding.shortlist", shortlist_path_, "test"},
            {"decoding.shortlist_top_k", "1", "test"},
            {"decoding.shortlist_frequent", "0", "test"}};
  }

  std::string shortlist_path_;  // the served model's shortlist file, set before start()
};

TEST_F(Server, LibreTranslateAnswersJsonAndFormRequestsAsTranslateDoes) {
  start();
  const std::vector<std::string> sentences{"a b c", "d e f g", "b b a"};
  const auto expected = offline(sentences);
  json one =
      post_json("/translate", {{"q", sentences[0]}, {"source", "src"}, {"target", "tgt"}}, 200);
  EXPECT_EQ(one["translatedText"], expected[0]);
  json many =
      post_json("/translate", {{"q", sentences}, {"source", "auto"}, {"target", "tgt"}}, 200);
  EXPECT_EQ(many["translatedText"], json(expected));
  EXPECT_EQ(many["detectedLanguage"][0]["language"], "src");
  json lines = post_json("/translate", {{"q", "a b c\nd e f g"}, {"target", "tgt"}}, 200);
  EXPECT_EQ(lines["translatedText"], expected[0] + "\n" + expected[1]);

  auto form =
      client().Post("/translate", "q=b+b+a&source=src&target=tgt&alternatives=2&api_key=anything",
                    "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  ASSERT_EQ(form->status, 200) << form->body;
  const auto nbest = offline({"b b a"}, 3);
  json answer = json::parse(form->body);
  EXPECT_EQ(answer["translatedText"], nbest[0]);
  EXPECT_EQ(answer["alternatives"], json({nbest[1], nbest[2]}));

  auto languages = client().Get("/languages");
  EXPECT_EQ(
      json::parse(languages->body),
      json::parse(
          R"([{"code":"src","name":"src","targets":["tgt"]},{"code":"tgt","name":"tgt","targets":[]}])"));
  EXPECT_EQ(post_json("/detect", {{"q", "a b"}}, 200),
            json::parse(R"([{"confidence":100.0,"language":"src"}])"));
  EXPECT_EQ(
      post_json("/translate", {{"q", "a"}, {"target", "tgt"}, {"format", "html"}}, 400)["error"],
      "format 'html' is not supported: send text");
  auto health = client().Get("/health");
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
}

TEST_F(Server, ConcurrentRequestsAreBatchedAndEqualOfflineTranslation) {
  start({"serve.max_wait_ms=200"});
  std::vector<std::string> sentences;
  for (int i = 0; i < 24; ++i)
    sentences.push_back(testing::reversal_task(24, 7).src[static_cast<size_t>(i)]);
  const auto expected = offline(sentences);
  std::vector<std::future<std::string>> answers;
  for (const auto& sentence : sentences) {
    answers.push_back(std::async(std::launch::async, [&, sentence] {
      auto res =
          client().Post("/v1/translate", json{{"text", sentence}}.dump(), "application/json");
      return res && res->status == 200
                 ? json::parse(res->body)["translations"][0]["text"].get<std::string>()
                 : std::string("(failed)");
    }));
  }
  for (size_t i = 0; i < sentences.size(); ++i)
    EXPECT_EQ(answers[i].get(), expected[i]) << sentences[i];
  const ServiceStats stats = service_->stats();
  EXPECT_EQ(stats.sentences, 24);
  EXPECT_LT(stats.batches, 24) << "concurrent single sentences share batches";
  auto metrics = client().Get("/metrics");
  EXPECT_NE(metrics->body.find("nmtzoo_batch_sentences_count " + std::to_string(stats.batches)),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("nmtzoo_request_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
}

// With serve.decode_workers, batches of different options decode at once on the one loaded
// model (Translator.ACallRunsWhileAnotherIsUnderWay shows the overlap), each as it would alone.
TEST_F(Server, SeveralDecodeWorkersGiveWhatOneGives) {
  start({"serve.decode_workers=3", "serve.max_wait_ms=0"});
  const std::vector<std::string> sentences{"a b c", "d e f g", "b b a", "g f"};
  std::vector<std::future<json>> answers;
  for (int beam : {1, 2, 3, 4}) {
    for (const auto& sentence : sentences) {
      answers.push_back(std::async(std::launch::async, [this, beam, sentence] {
        return post_json("/v1/translate", {{"text", sentence}, {"beam", beam}}, 200);
      }));
    }
  }
  size_t i = 0;
  for (int beam : {1, 2, 3, 4}) {
    Translator translator({checkpoint_});
    SearchOptions options = translator.search_options();
    options.beam = beam;
    options.nbest = 1;
    const auto expected = translator.translate_batch(sentences, options);
    for (size_t s = 0; s < sentences.size(); ++s, ++i) {
      EXPECT_EQ(answers[i].get()["translations"][0]["text"], expected[s].texts[0])
          << "beam " << beam;
    }
  }
}

// GET /v1/models names the checkpoints' files: a keyed server lists them to key holders only
// (it answered anyone).
TEST_F(Server, AKeyedServersModelListNeedsTheKey) {
  start({"serve.api_keys=[secret]"});
  auto missing = client().Get("/v1/models");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_EQ(missing->body.find(checkpoint_), std::string::npos) << missing->body;
  EXPECT_EQ(client().Get("/v1/models?api_key=wrong")->status, 403);
  auto listed = client().Get("/v1/models?api_key=secret");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  EXPECT_EQ(json::parse(listed->body)[0]["checkpoint"], checkpoint_);
}

TEST_F(Server, V1TranslateTakesDecodingOptionsAndReturnsScoresTokensAttention) {
  start();
  json answer = post_json("/v1/translate",
                          {{"model", "tiny"},
                           {"text", json::array({"a b c"})},
                           {"beam", 4},
                           {"nbest", 2},
                           {"return_tokens", true},
                           {"return_attention", true}},
                          200);
  const json& nbest = answer["translations"][0]["nbest"];
  ASSERT_EQ(nbest.size(), 2u);
  EXPECT_TRUE(nbest[0]["score"].is_number());
  // The same JSON as nmtzoo-translate --format jsonl --alignment soft writes: the source pieces
  // and one row per target token and EOS.
  EXPECT_EQ(nbest[0]["attention"]["matrix"].size(), nbest[0]["tokens"].size() + 1);
  EXPECT_EQ(nbest[0]["attention"]["matrix"][0].size(), nbest[0]["attention"]["source"].size());
  EXPECT_EQ(answer["translations"][0]["text"], nbest[0]["text"]);
  EXPECT_EQ(answer["translations"][0]["score"], nbest[0]["score"]);
  EXPECT_NE(nbest[0]["attention_svg"].get<std::string>().find("<svg"), std::string::npos);
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"beam", 0}}, 400)["error"],
            "field 'beam': 0 is out of range: expected in [1, 1024]");
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"beam", 2}, {"nbest", 3}}, 400)["error"],
            "field 'nbest' (3) exceeds beam (2)");
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"model", "big"}}, 404)["error"],
            "no model named 'big' (this server has tiny)");
  auto models = client().Get("/v1/models");
  EXPECT_EQ(json::parse(models->body)[0]["name"], "tiny");
}

// Each of these once answered 200 with empty translations and no word: a 400 naming the field
// when it cannot work, a lowered min_len with a warning in the answer when it can.
TEST_F(Server, LimitsThatLeftOutputsEmptyAre400sOrWarnings) {
  start();
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"temperature", 1e39}, {"temperature", 1e7}, {"unk_penalty", -1e39}}) {
    const std::string error =
        post_json("/v1/translate", {{"text", "a b"}, {"sampling", true}, {field, value}},
                  400)["error"]
            .get<std::string>();
    EXPECT_EQ(error.rfind("field '" + field + "': ", 0), 0u) << error;
    EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  }
  std::string long_prefix = "a";
  for (int i = 0; i < 200; ++i) long_prefix += " a";
  const std::string error = post_json("/v1/translate",
                                      {{"text", json::array({"a b", "c d"})},
                                       {"prefix", json::array({"b", long_prefix})}},
                                      400)["error"]
                                .get<std::string>();
  EXPECT_EQ(error.rfind("field 'prefix' item 2: the prefix has ", 0), 0u) << error;
  EXPECT_NE(error.find("the model can output"), std::string::npos) << error;
  // The queue goes on: a request after it is answered.
  const json lowered = post_json(
      "/v1/translate",
      {{"text", json::array({"a b", ""})}, {"min_len", 60}, {"return_tokens", true}}, 200);
  const json& first = lowered["translations"][0];
  EXPECT_FALSE(first["tokens"].empty()) << lowered;
  ASSERT_TRUE(first.contains("warnings")) << lowered;
  EXPECT_NE(first["warnings"][0].get<std::string>().find("min_len was lowered to"),
            std::string::npos)
      << lowered;
  EXPECT_FALSE(lowered["translations"][1].contains("warnings")) << "an empty line: " << lowered;
}

// The per-sentence phrase lists are `constraints`; the schema's decoding.constraints (the order
// they are met in) is `constraint_order` in a request, so the two never collide.
TEST_F(Server, PerSentenceConstraintsAndTheirOrderHaveDistinctFields) {
  start();
  for (const char* order : {"", "ordered", "unordered"}) {
    json request{{"text", json::array({"a b c", "d e"})},
                 {"constraints", json::array({json::array({"c b"}), json::array()})}};
    if (*order != '\0') request["constraint_order"] = order;
    const json answer = post_json("/v1/translate", request, 200);
    EXPECT_NE(answer["translations"][0]["text"].get<std::string>().find("c b"), std::string::npos)
        << order << ": " << answer.dump();
    EXPECT_FALSE(answer["translations"][0].contains("constraints_met")) << order;
  }
  EXPECT_EQ(
      post_json("/v1/translate", {{"text", "a"}, {"constraint_order", "sideways"}}, 400)["error"],
      "field 'constraint_order': expects one of none, ordered, unordered, got 'sideways'");
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"constraints", "ordered"}}, 400)["error"],
            "field 'constraints' must be a list with one list of phrases per sentence");
  EXPECT_EQ(post_json("/v1/translate",
                      {{"text", "a"},
                       {"constraints", json::array({json::array({std::string(1, '\0')})})}},
                      400)["error"],
            "field 'constraints' item 1: a NUL byte at byte 1");
}

// nmtzoo's own API names every field it reads: a typo was ignored, the request decoded with the
// default. (LibreTranslate's /translate stays lenient: its clients send fields of their own.)
TEST_F(Server, AnUnknownV1FieldOrAnUnsupportedEncodingIsRefusedNamingIt) {
  start();
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"beem", 4}}, 400)["error"],
            "unknown field 'beem'; did you mean 'beam'?");
  EXPECT_EQ(post_json("/v1/translate", {{"text", "a"}, {"batch_tokens", 64}}, 400)["error"],
            "field 'batch_tokens' is decoding.batch_tokens, fixed when the server starts; it "
            "cannot be set per request");
  post_json("/v1/translate",
            {{"text", "a"}, {"beam", 2}, {"return_tokens", true}, {"api_key", "k"}}, 200);
  post_json("/translate", {{"q", "a"}, {"target", "tgt"}, {"format", "text"}, {"client_field", 1}},
            200);
  httplib::Headers zstd{{"Content-Encoding", "zstd"}};
  auto res =
      client().Post("/translate", zstd, R"({"q": "a", "target": "tgt"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  EXPECT_NE(res->body.find("Content-Encoding 'zstd' is not supported"), std::string::npos)
      << res->body;
}

TEST_F(Server, AModelsShortlistServesItsRequestsAsTranslateDoes) {
  const Tokenizers tokenizers = load_tokenizers(run_.config());
  const auto task = testing::reversal_task(200, 9);
  std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> pairs;
  for (size_t i = 0; i < task.src.size(); ++i) {
    pairs.emplace_back(tokenizers.src->encode(task.src[i]), tokenizers.tgt->encode(task.tgt[i]));
  }
  auto shortlist = std::make_shared<Shortlist>(Shortlist::train(
      [&](const std::function<void(TokenSpan, TokenSpan)>& each) {
        for (const auto& [src, tgt] : pairs)
          each({src.data(), src.size()}, {tgt.data(), tgt.size()});
      },
      tokenizers.src->vocab_size(), tokenizers.tgt->vocab_size()));
  shortlist_path_ = run_.path("shortlist.bin");
  shortlist->save(shortlist_path_, tokenizers);
  start();
  const std::vector<std::string> sentences{"a b c", "d e f g"};
  const auto expected = offline(sentences);
  json answer = post_json("/v1/translate", {{"text", sentences}, {"return_tokens", true}}, 200);
  for (size_t i = 0; i < sentences.size(); ++i) {
    EXPECT_EQ(answer["translations"][i]["text"], expected[i]);
    std::set<std::string> allowed;
    for (int64_t id : shortlist->vocabulary({tokenizers.src->encode(sentences[i])}, 1, 0)) {
      allowed.insert(tokenizers.tgt->piece(id));
    }
    for (const auto& piece :
         answer["translations"][i]["nbest"][0]["tokens"].get<std::vector<std::string>>()) {
      EXPECT_TRUE(allowed.count(piece) == 1) << piece;
    }
  }
}

TEST_F(Server, BadAndHostileInputGetsA4xxNamingTheProblem) {
  start({"serve.max_lines=5", "serve.max_line_chars=20", "serve.max_body_bytes=2000",
         "serve.max_queue=8"});
  auto error_of = [&](const std::string& body, const char* type, int status) {
    auto res = client().Post("/translate", body, type);
    EXPECT_TRUE(res);
    if (!res) return std::string();
    EXPECT_EQ(res->status, status) << body.substr(0, 80) << " -> " << res->body;
    return json::parse(res->body)["error"].get<std::string>();
  };
  const char* json_type = "application/json";
  EXPECT_NE(error_of("{\"q\": ", json_type, 400).find("malformed JSON body"), std::string::npos);
  EXPECT_EQ(error_of("[1, 2]", json_type, 400), "the JSON body must be an object");
  EXPECT_EQ(error_of(R"({"target": "tgt"})", json_type, 400), "missing field 'q'");
  EXPECT_EQ(error_of(R"({"q": ["a", 3], "target": "tgt"})", json_type, 400),
            "field 'q' item 2 must be a string");
  EXPECT_EQ(error_of(R"({"q": "a"})", json_type, 400), "missing field 'target'");
  EXPECT_EQ(error_of(R"({"q": "a", "target": "fr"})", json_type, 400),
            "no model translates 'auto' to 'fr' (this server has src->tgt)");
  EXPECT_EQ(error_of(R"({"q": "a\nb\nc\nd\ne\nf", "target": "tgt"})", json_type, 400),
            "field 'q' holds more than serve.max_lines (5) lines");
  EXPECT_EQ(
      error_of(R"({"q": ["a", "aaaaaaaaaaaaaaaaaaaaaaaaa"], "target": "tgt"})", json_type, 400),
      "field 'q' item 2 line 1 has 25 characters, over serve.max_line_chars (20)");
  EXPECT_EQ(error_of("q=schl%E4gt&target=tgt", "application/x-www-form-urlencoded", 400),
            "field 'q' is not valid UTF-8 (byte 5)");
  EXPECT_EQ(error_of(std::string(3000, 'x'), "text/plain", 413),
            "the request body is over serve.max_body_bytes (2000)");
  // A number beyond a double's range, or a value of the wrong type, is the client's fault, named.
  auto v1_error_of = [&](const std::string& body) {
    auto res = client().Post("/v1/translate", body, json_type);
    EXPECT_TRUE(res && res->status == 400) << body << " -> " << (res ? res->body : "no answer");
    return res ? json::parse(res->body)["error"].get<std::string>() : std::string();
  };
  EXPECT_EQ(v1_error_of(R"({"text": "a", "beam": 1e999})"),
            "field 'beam': number overflow parsing '1e999'");
  EXPECT_EQ(v1_error_of(R"({"text": "a", "return_tokens": "yes"})"),
            "field 'return_tokens' must be true or false");
  EXPECT_EQ(v1_error_of(R"({"text": "a", "return_attention": 1})"),
            "field 'return_attention' must be true or false");
  EXPECT_EQ(error_of(R"({"q": "a", "target": "tgt", "alternatives": -1e999})", json_type, 400),
            "field 'alternatives': number overflow parsing '-1e999'");
  EXPECT_EQ(v1_error_of(R"({"text": "a", "prefix": "b\u0000"})"),
            "field 'prefix' item 1: a NUL byte at byte 2");
  // An empty string is a sentence like any other: an empty translation.
  EXPECT_EQ(post_json("/translate", {{"q", ""}, {"target", "tgt"}}, 200)["translatedText"], "");
  // Nothing broke: a good request still works.
  EXPECT_EQ(post_json("/translate", {{"q", "a b"}, {"target", "tgt"}}, 200)["translatedText"],
            offline({"a b"})[0]);
}

TEST_F(Server, AFullQueueAnswers503AndOthersAreServed) {
  start({"serve.max_queue=3", "serve.max_wait_ms=300"});
  // 3 sentences fill the queue for 300 ms; 2 more are refused meanwhile.
  auto filling = std::async(std::launch::async, [&] {
    return client()
        .Post("/translate", json{{"q", {"a", "b", "c"}}, {"target", "tgt"}}.dump(),
              "application/json")
        ->status;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto refused = client().Post("/translate", json{{"q", {"a", "b"}}, {"target", "tgt"}}.dump(),
                               "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(
      json::parse(refused->body)["error"].get<std::string>().find("the decoding queue is full"),
      std::string::npos);
  EXPECT_EQ(filling.get(), 200);
}

TEST_F(Server, ASlowClientTimesOutWithoutStallingOthers) {
  start({"serve.read_timeout_s=0.5", "serve.http_threads=2"});
  // Two clients that connect and send half a request, holding both HTTP threads.
  std::vector<int> slow;
  for (int i = 0; i < 2; ++i) {
    const int fd = send_raw(
        port_, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"q\":");
    ASSERT_GE(fd, 0);
    slow.push_back(fd);
  }
  // Once their time is up, a well-behaved client is served.
  const auto start_time = std::chrono::steady_clock::now();
  EXPECT_EQ(post_json("/translate", {{"q", "a b"}, {"target", "tgt"}}, 200)["translatedText"],
            offline({"a b"})[0]);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(),
            5.0);
  for (int fd : slow) ::close(fd);
}

// A chunked body is bounded as it arrives: 413 as soon as serve.max_body_bytes is passed, long
// before the client is done (the server once read all 100 MB, buffered, before a 400).
TEST_F(Server, AChunkedBodyOverTheBoundIsRefusedBeforeItIsAllSent) {
  start({"serve.max_body_bytes=65536"});
  const int fd =
      send_raw(port_,
               "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Transfer-Encoding: chunked\r\n\r\n");
  ASSERT_GE(fd, 0);
  const std::string chunk = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
  const size_t total = 1600 * chunk.size();  // 100 MiB of data
  size_t sent = 0;
  while (sent < total) {  // sends without waiting, and stops as soon as an answer comes
    pollfd p{fd, POLLIN | POLLOUT, 0};
    ASSERT_GT(::poll(&p, 1, 10000), 0) << "the server neither reads nor answers";
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) break;
    const size_t offset = sent % chunk.size();
    const ssize_t n =
        ::send(fd, chunk.data() + offset, chunk.size() - offset, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) break;
    sent += static_cast<size_t>(std::max<ssize_t>(n, 0));
  }
  if (sent == total) ::send(fd, "0\r\n\r\n", 5, MSG_NOSIGNAL);
  const auto answers = read_answers(fd, 1, 30);
  ::close(fd);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].first, 413) << answers[0].second.substr(0, 200);
  EXPECT_EQ(json::parse(answers[0].second)["error"],
            "the request body is over serve.max_body_bytes (65536)");
  EXPECT_LT(sent, total / 4) << "the server read on past the bound";
}

// A compressed body is bounded by what it inflates to: 8 MB of JSON in a few KB of gzip once
// passed the bound (which saw only the Content-Length) and was inflated whole.
TEST_F(Server, ACompressedBodyIsBoundedAsItInflates) {
  start({"serve.max_body_bytes=65536"});
  httplib::Client c = client();
  c.set_compress(true);  // gzip, Content-Encoding: gzip
  std::string text;
  for (int i = 0; i < (4 << 20); ++i) text += "a ";
  auto bomb = c.Post("/translate", json{{"q", text}, {"target", "tgt"}}.dump(), "application/json");
  ASSERT_TRUE(bomb);
  EXPECT_EQ(bomb->status, 413) << bomb->body.substr(0, 200);
  EXPECT_EQ(json::parse(bomb->body)["error"],
            "the request body is over serve.max_body_bytes (65536)");
  // Within the bound, a compressed body is read as any other.
  auto small =
      c.Post("/translate", json{{"q", "a b"}, {"target", "tgt"}}.dump(), "application/json");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  EXPECT_EQ(json::parse(small->body)["translatedText"], offline({"a b"})[0]);
}

// Clients sending their request a byte at a time hold no HTTP thread: with more of them than
// threads, /health is answered at once, and each is cut with a 408 serve.read_timeout_s after its
// first byte (a timeout per read never fired: every byte restarted it, and the threads stayed
// held).
TEST_F(Server, SlowClientsHoldNoThreadAndAreCutAtTheRequestDeadline) {
  start({"serve.read_timeout_s=2", "serve.http_threads=4"});
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(send_raw(port_, "G"));
    ASSERT_GE(slow.back(), 0);
  }
  const auto began = std::chrono::steady_clock::now();
  struct Drip {  // a byte more from each slow client every 100 ms, until the test ends
    std::atomic<bool> on{true};
    std::thread thread;
    ~Drip() {
      on = false;
      thread.join();
    }
  } drip;
  drip.thread = std::thread([&] {
    const std::string rest = "ET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(300, 'a');
    for (size_t i = 0; i < rest.size() && drip.on; ++i) {
      for (int fd : slow) ::send(fd, &rest[i], 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(5, 0);
  const auto asked = std::chrono::steady_clock::now();
  auto health = c.Get("/health");
  const double waited = seconds_since(asked);
  EXPECT_TRUE(health && health->status == 200);
  EXPECT_LT(waited, 1.0) << "/health waited behind the slow clients";
  size_t cut = 0;
  for (int fd : slow) {
    const auto answers = read_answers(fd, 1, 6);
    if (answers.size() != 1) break;
    EXPECT_EQ(answers[0].first, 408);
    EXPECT_EQ(
        answers[0].second,
        R"x({"error": "the request did not arrive whole within serve.read_timeout_s (2 s)"})x");
    ++cut;
  }
  const double elapsed = seconds_since(began);
  EXPECT_EQ(cut, slow.size()) << "slow clients were not cut";
  EXPECT_GT(elapsed, 1.5) << "cut before the deadline";
  EXPECT_LT(elapsed, 4.0);
  for (int fd : slow) ::close(fd);
}

// Requests sent back to back in one packet are each answered, in order (the second once went
// unanswered until the keep-alive timeout: httplib dropped what it had read past the first).
TEST_F(Server, PipelinedRequestsAreAllAnsweredInOrder) {
  start();
  const std::string body = json{{"q", "a b"}, {"target", "tgt"}}.dump();
  const auto sent = std::chrono::steady_clock::now();
  const int fd = send_raw(
      port_,
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n" +
          fmt::format("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: {}\r\n\r\n{}",
                      body.size(), body));
  ASSERT_GE(fd, 0);
  const auto answers = read_answers(fd, 3, 5);
  ::close(fd);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(json::parse(answers[0].second)["status"], "ok");
  EXPECT_EQ(json::parse(answers[1].second)[0]["name"], "tiny");
  EXPECT_EQ(json::parse(answers[2].second)["translatedText"], offline({"a b"})[0]);
  EXPECT_LT(seconds_since(sent), 3.0);
}

// At most max_per_client connections from one address (503 beyond, at once); other addresses
// are served, and a closed connection frees its place.
TEST(HttpServer, ConnectionsFromOneAddressAreBounded) {
  ConnectionLimits limits;
  limits.threads = 2;
  limits.max_per_client = 4;
  HttpHandlers handlers;
  handlers.handle = [](const HttpRequest&, HttpResponse& res) { res.body = "ok"; };
  handlers.refuse = [](const HttpRequest&, std::string_view problem, HttpResponse& res) {
    res.body = problem;
  };
  HttpServer http(limits, handlers);
  const int port = http.bind("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  std::thread listening([&] { http.run(); });
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(send_raw(port, ""));
  auto status_from = [&](const char* from) {
    const int fd = send_raw(port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", from);
    const auto answers = read_answers(fd, 1, 5);
    ::close(fd);
    return answers.empty() ? -1 : answers[0].first;
  };
  EXPECT_EQ(status_from("127.0.0.1"), 503);
  EXPECT_EQ(status_from("127.0.0.2"), 200);
  ::close(idle[0]);
  int status = -1;
  for (int i = 0; i < 50 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = status_from("127.0.0.1");
  }
  EXPECT_EQ(status, 200);
  for (size_t i = 1; i < idle.size(); ++i) ::close(idle[i]);
  http.stop();
  listening.join();
}

TEST_F(Server, ARequestWhoseClientDisconnectedIsDroppedFromTheQueue) {
  // A lone request waits 3 s for company: time for its client to give up.
  start({"serve.max_wait_ms=3000"});
  const std::string body = json{{"q", {"a b", "b c"}}, {"target", "tgt"}}.dump();
  const int fd = send_raw(
      port_, fmt::format("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: {}\r\n\r\n{}",
                         body.size(), body));
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 100 && service_->stats().queued_sentences < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(service_->stats().queued_sentences, 2);
  ::close(fd);
  const auto closed = std::chrono::steady_clock::now();
  for (int i = 0; i < 100 && service_->stats().withdrawn_requests == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Dropped within a few polls, long before its wait was over, and never decoded.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - closed).count(), 1.0);
  ServiceStats stats = service_->stats();
  EXPECT_EQ(stats.withdrawn_requests, 1);
  EXPECT_EQ(stats.withdrawn_sentences, 2);
  EXPECT_EQ(stats.queued_sentences, 0);
  EXPECT_EQ(stats.sentences, 0);
  auto metrics = client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("nmtzoo_withdrawn_requests_total 1\n"), std::string::npos)
      << metrics->body;
  // A client that stays is still served.
  EXPECT_EQ(post_json("/translate", {{"q", "a b"}, {"target", "tgt"}}, 200)["translatedText"],
            offline({"a b"})[0]);
  EXPECT_EQ(service_->stats().withdrawn_requests, 1);
}

// The port an nmtzoo-serve started with --port 0 logs to `err_path`; 0 if it never does.
int listening_port(const std::string& err_path) {
  for (int i = 0; i < 200; ++i) {
    std::smatch match;
    const std::string err = testing::read_text(err_path);
    if (std::regex_search(err, match, std::regex("listening on http://127.0.0.1:([0-9]+)/")))
      return std::stoi(match[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

TEST(ServeApp, SigtermFinishesTheRequestsInFlightAndExitsZero) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  testing::Subprocess server({testing::bin("nmtzoo-serve"), "-c", checkpoint, "--port", "0",
                              "--threads", "1", "--set", "serve.max_wait_ms=500"},
                             "", run.path("out"), run.path("err"));
  const int port = listening_port(run.path("err"));
  ASSERT_GT(port, 0) << testing::read_text(run.path("err"));
  auto in_flight = std::async(std::launch::async, [port] {
    httplib::Client c("127.0.0.1", port);
    auto res = c.Post("/translate", R"({"q": "a b c", "target": "tgt"})", "application/json");
    return res ? res->status : -1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // queued, waiting for company
  server.signal(SIGTERM);
  EXPECT_EQ(in_flight.get(), 200);
  EXPECT_EQ(server.wait(), 0) << testing::read_text(run.path("err"));
  EXPECT_NE(testing::read_text(run.path("err"))
                .find("received SIGTERM: finishing the requests in flight"),
            std::string::npos);
}

// -c A -c B means one ensemble, as in nmtzoo-translate (same flags, same answers); --model gives
// other, separately named models.
TEST(ServeApp, RepeatedCheckpointsServeOneEnsembleAsTranslateDoes) {
  testing::TinyRun run("transformer");
  testing::TinyRun rnn("rnn_bahdanau");  // the same synthetic corpus: the same vocabularies
  const std::string transformer = run.save_untrained_checkpoint();
  const std::string recurrent = rnn.save_untrained_checkpoint();
  testing::Subprocess server({testing::bin("nmtzoo-serve"), "-c", transformer, "-c", recurrent,
                              "--weights", "0.6,0.4", "--ensemble-mode", "logprob", "--model",
                              "alone=" + recurrent, "--port", "0", "--threads", "1"},
                             "", run.path("out"), run.path("err"));
  const int port = listening_port(run.path("err"));
  ASSERT_GT(port, 0) << testing::read_text(run.path("err"));
  const std::vector<std::string> sentences{"a b c", "d e f g", "b b a"};
  auto offline = [&](const std::vector<std::string>& flags) {
    testing::write_text(run.path("input.txt"), "a b c\nd e f g\nb b a\n");
    std::vector<std::string> args{
        testing::bin("nmtzoo-translate"), "--threads", "1", "--beam", "3", "-q"};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(
        testing::run(args, run.path("input.txt"), run.path("offline.txt"), run.path("offline.err")),
        0)
        << testing::read_text(run.path("offline.err"));
    return testing::read_text(run.path("offline.txt"));
  };
  auto served = [&](const json& request) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    auto res = c.Post("/v1/translate", request.dump(), "application/json");
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
    std::string text;
    if (res) {
      const json answer = json::parse(res->body);
      for (const auto& t : answer["translations"]) text += t["text"].get<std::string>() + "\n";
    }
    return text;
  };
  EXPECT_EQ(served({{"text", sentences}, {"beam", 3}}),
            offline({"-c", transformer, "-c", recurrent, "--weights", "0.6,0.4", "--ensemble-mode",
                     "logprob"}));
  EXPECT_EQ(served({{"text", sentences}, {"beam", 3}, {"model", "alone"}}),
            offline({"-c", recurrent}));
  httplib::Client c("127.0.0.1", port);
  const json models = json::parse(c.Get("/v1/models")->body);
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0]["name"], "untrained");
  EXPECT_EQ(models[0]["checkpoints"], json({transformer, recurrent}));
  EXPECT_NE(models[0]["arch"].get<std::string>().find('+'), std::string::npos) << models[0]["arch"];
  EXPECT_EQ(models[1]["name"], "alone");
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

// --port is serve.port's spelling: its range is the schema's, not the socket API's modulo.
TEST(ServeApp, APortOutOfRangeIsRefusedNamingTheFlag) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-serve"), "-c", checkpoint, "--port", "70000",
                          "--threads", "1"},
                         "", run.path("out"), run.path("err")),
            1);
  const std::string err = testing::read_text(run.path("err"));
  EXPECT_NE(err.find("--port: serve.port 70000 is out of range: expected in [0, 65535]"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("listening"), std::string::npos) << err;
}

TEST(ServeApp, AShortlistThatCannotBeLoadedStopsItAtStartNamingTheFile) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  const std::string missing = run.path("missing.shortlist");
  testing::Subprocess server({testing::bin("nmtzoo-serve"), "-c", checkpoint, "--port", "0",
                              "--threads", "1", "--set", "decoding.shortlist=" + missing},
                             "", run.path("out"), run.path("err"));
  EXPECT_NE(server.wait(), 0);
  EXPECT_NE(testing::read_text(run.path("err")).find(missing), std::string::npos)
      << testing::read_text(run.path("err"));
}

TEST(ServeApp, TheWebPageTranslatesInARealBrowser) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  testing::Subprocess server(
      {testing::bin("nmtzoo-serve"), "-c", checkpoint, "--port", "0", "--threads", "1"}, "",
      run.path("out"), run.path("err"));
  const int port = listening_port(run.path("err"));
  ASSERT_GT(port, 0) << testing::read_text(run.path("err"));
  // The same model behind API keys: its page takes a key (once without one it could not translate).
  testing::Subprocess keyed({testing::bin("nmtzoo-serve"), "-c", checkpoint, "--port", "0",
                             "--threads", "1", "--set", "serve.api_keys=[page-key]"},
                            "", run.path("keyed.out"), run.path("keyed.err"));
  const int keyed_port = listening_port(run.path("keyed.err"));
  ASSERT_GT(keyed_port, 0) << testing::read_text(run.path("keyed.err"));
  // What the page must show: the API's answer for the page's options (beam 5, 3-best).
  httplib::Client api("127.0.0.1", port);
  auto res = api.Post("/v1/translate", R"({"text": "a b c\nd e f", "beam": 5, "nbest": 3})",
                      "application/json");
  ASSERT_TRUE(res);
  const json answer = json::parse(res->body);
  const std::string expected = answer["translations"][0]["text"].get<std::string>() + "\n" +
                               answer["translations"][1]["text"].get<std::string>();
  const std::string screenshot = std::string(NMTZOO_BIN_DIR) + "/../web_page_test.png";
  const std::string phone_screenshot = std::string(NMTZOO_BIN_DIR) + "/../web_page_test_phone.png";
  testing::write_text(run.path("text.txt"), "a b c\nd e f");
  testing::write_text(run.path("expected.txt"), expected);
  const std::string command = "/usr/bin/python3 " + std::string(NMTZOO_SOURCE_DIR) +
                              "/tests/serve/browser_test.py --port " + std::to_string(port) +
                              " --text-file " + run.path("text.txt") + " --expect-file " +
                              run.path("expected.txt") + " --screenshot " + screenshot +
                              " --phone-screenshot " + phone_screenshot + " --keyed-port " +
                              std::to_string(keyed_port) + " --api-key page-key";
  const int status = std::system(command.c_str());
  server.signal(SIGTERM);
  keyed.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
  EXPECT_EQ(keyed.wait(), 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    NMTZOO_SKIP_OR_FAIL("the browser test needs chromium, chromium-driver and python3-selenium");
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  EXPECT_TRUE(std::filesystem::exists(screenshot));
  EXPECT_TRUE(std::filesystem::exists(phone_screenshot));
}

}  // namespace
}  // namespace nmtzoo
