// SPDX-License-Identifier: MIT
// The decoding half of nmtzoo-serve: loaded models and one queue in front of them. Requests from
// any number of HTTP threads are queued; each of serve.decode_workers decoding threads takes the
// oldest request no other worker has taken and decodes it with the compatible requests queued
// behind it (same model and options; none while another worker is idle, which takes them), in one
// Translator call, which batches by decoding.batch_tokens. Workers decode at once on the same
// loaded models (CTranslate2's inter_threads). A single worker first waits at most
// serve.max_wait_ms for such company, counted from when it became free, so that a request never
// waits for company longer than that once it could have been decoded. No HTTP here.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "libtorch/search/translator.h"
#include "libtorch/serve/metrics.h"

namespace nmtzoo {

// One model of the server: a checkpoint, or an ensemble of checkpoints decoded as one, behind a
// Translator, with the decoding options its requests start from.
struct ServedModel {
  std::string name;  // the (first) checkpoint's file stem unless given
  std::shared_ptr<Translator> translator;
  // The (first) checkpoint's decoding section with the server's decoding.* settings on top.
  SearchOptions defaults;
  const RunConfig& config() const { return translator->config(); }
  // The directions it translates: a multilingual model's data.directions, else its one pair.
  std::vector<LanguagePair> pairs() const { return config().language_pairs(); }
  bool translates(const std::string& src_lang, const std::string& tgt_lang) const;
  std::string directions() const;  // "de->en, fr->en"
  // "transformer", or the members' architectures joined by '+' for an ensemble.
  std::string arch() const;
};

// The queue already holds serve.max_queue sentences.
struct QueueFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the future of a withdrawn request holds.
struct Withdrawn : std::runtime_error {
  Withdrawn() : std::runtime_error("the request was withdrawn") {}
};

// What a client waits on: the translations, and the id that withdraws the request.
struct PendingTranslation {
  std::future<std::vector<Translation>> result;
  uint64_t id = 0;
};

struct ServiceStats {
  int64_t batches = 0;
  int64_t withdrawn_requests = 0;
  int64_t withdrawn_sentences = 0;
  int64_t sentences = 0;
  int64_t queued_sentences = 0;
  Histogram batch_sentences{{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}};
  Histogram queue_wait_seconds{{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5}};
};

// The decoding threads: how many, and each one's CPU threads (0: the process's setting).
struct DecodeWorkers {
  int64_t count = 1;
  int64_t threads_each = 0;
};

class DecodingQueue {
 public:
  DecodingQueue(std::vector<ServedModel> models, std::chrono::duration<double, std::milli> max_wait,
                int64_t max_queue, DecodeWorkers workers = {});
  ~DecodingQueue();  // finishes what is queued, then stops
  DecodingQueue(const DecodingQueue&) = delete;
  DecodingQueue& operator=(const DecodingQueue&) = delete;

  const std::vector<ServedModel>& models() const { return models_; }
  // By name, or by language pair (the first model that translates it); null when none matches.
  const ServedModel* find(const std::string& name) const;
  const ServedModel* find(const std::string& src_lang, const std::string& tgt_lang) const;

  // Queues `sentences` for `model` with `options`; the future gets one Translation per sentence,
  // exactly what a Translator with these options gives (or its exception). Throws QueueFull.
  PendingTranslation submit(const ServedModel& model, const SearchOptions& options,
                            std::vector<TranslationRequest> sentences);
  // Drops request `id` if it is still queued (its client left): true if it was, false once its
  // decoding has begun or ended. Its future then holds Withdrawn.
  bool withdraw(uint64_t id);

  ServiceStats stats() const;

 private:
  struct Job;
  void decode_loop();
  // Jobs decodable with `first` in one call, oldest first (first included); `first` only when
  // `alone`.
  std::vector<std::shared_ptr<Job>> take_batch(const std::shared_ptr<Job>& first, bool alone);
  // Tells stderr, once per service, that a length limit lowered min_len or left an output empty
  // (every answer carries its own in the JSON's "warnings").
  void warn_about_limits(const ServedModel& model, const std::vector<Translation>& translations);

  std::vector<ServedModel> models_;
  std::chrono::duration<double, std::milli> max_wait_;
  int64_t max_queue_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  int64_t queued_sentences_ = 0;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  ServiceStats stats_;
  const int64_t worker_count_;
  int64_t idle_workers_ = 0;  // waiting for a request
  std::atomic<bool> warned_about_limits_{false};
  std::vector<std::thread> workers_;
};

}  // namespace nmtzoo
