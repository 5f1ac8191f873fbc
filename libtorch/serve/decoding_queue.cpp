// SPDX-License-Identifier: MIT
#include "libtorch/serve/decoding_queue.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <iostream>

#include "torch_free/config/schema.h"

namespace nmtzoo {
namespace {

using Clock = std::chrono::steady_clock;

// Requests decode together only with the same options: every decoding key of the schema and the
// attention recorded. Sampling requests never share a call: each sentence's generator is seeded
// from its line within the request, which batching must not shift.
std::string options_key(const SearchOptions& options) {
  RunConfig config;
  config.decoding = options;
  const AttentionChoice& a = options.attention;
  return section_fingerprint(config, "decoding") +
         fmt::format("record_attention={} attention={},{},{},{}", options.record_attention, a.layer,
                     a.head, a.heads, a.alignment);
}

// A call takes queued requests up to this many decoding batches: the Translator sorts a call's
// sentences by length, so a call of several batches pads less (the offline speed comes from
// that), while the first request waits for a bounded number of batches.
constexpr int64_t kBatchesPerCall = 4;

// A source sentence's cost against decoding.batch_tokens before it is tokenized: ~4 bytes a
// subword in these languages.
int64_t estimated_tokens(const TranslationRequest& request) {
  return 1 + static_cast<int64_t>(request.source.size()) / 4;
}

}  // namespace

struct DecodingQueue::Job {
  const ServedModel* model;
  SearchOptions options;
  std::string key;
  std::vector<TranslationRequest> sentences;
  std::promise<std::vector<Translation>> result;
  Clock::time_point queued;
  int64_t tokens = 0;
  uint64_t id = 0;
  bool claimed = false;  // a worker waits for company on its behalf
};

std::string ServedModel::arch() const {
  std::string archs;
  for (const auto& member : translator->members())
    archs += (archs.empty() ? "" : "+") + member.config.model.arch;
  return archs;
}

DecodingQueue::DecodingQueue(std::vector<ServedModel> models,
                             std::chrono::duration<double, std::milli> max_wait, int64_t max_queue,
                             DecodeWorkers workers)
    : models_(std::move(models)),
      max_wait_(max_wait),
      max_queue_(max_queue),
      worker_count_(std::max<int64_t>(1, workers.count)) {
  for (int64_t i = 0; i < worker_count_; ++i) {
    workers_.emplace_back([this, threads = workers.threads_each] {
      if (threads > 0) {
        at::init_num_threads();
        at::set_num_threads(
            static_cast<int>(threads));  // this thread's decoding, in OpenMP's per-thread setting
      }
      decode_loop();
    });
  }
}

DecodingQueue::~DecodingQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

const ServedModel* DecodingQueue::find(const std::string& name) const {
  for (const auto& model : models_) {
    if (model.name == name) return &model;
  }
  return nullptr;
}

bool ServedModel::translates(const std::string& src_lang, const std::string& tgt_lang) const {
  for (const auto& pair : pairs()) {
    if (pair.src == src_lang && pair.tgt == tgt_lang) return true;
  }
  return false;
}

std::string ServedModel::directions() const {
  std::string text;
  for (const auto& pair : pairs()) text += (text.empty() ? "" : ", ") + pair.src + "->" + pair.tgt;
  return text;
}

const ServedModel* DecodingQueue::find(const std::string& src_lang,
                                       const std::string& tgt_lang) const {
  for (const auto& model : models_) {
    if (model.translates(src_lang, tgt_lang)) return &model;
  }
  return nullptr;
}

PendingTranslation DecodingQueue::submit(const ServedModel& model, const SearchOptions& options,
                                         std::vector<TranslationRequest> sentences) {
  auto job = std::make_shared<Job>();
  job->model = &model;
  job->options = options;
  job->key = options_key(options);
  job->sentences = std::move(sentences);
  for (const auto& sentence : job->sentences) job->tokens += estimated_tokens(sentence);
  job->queued = Clock::now();
  PendingTranslation pending{job->result.get_future(), 0};
  const auto count = static_cast<int64_t>(job->sentences.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw QueueFull("the server is shutting down");
    if (queued_sentences_ + count > max_queue_) {
      throw QueueFull(
          fmt::format("the decoding queue is full ({} sentences waiting, serve.max_queue "
                      "is {}); retry later",
                      queued_sentences_, max_queue_));
    }
    queued_sentences_ += count;
    job->id = pending.id = next_id_++;
    queue_.push_back(std::move(job));
  }
  wake_.notify_all();
  return pending;
}

bool DecodingQueue::withdraw(uint64_t id) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(queue_.begin(), queue_.end(),
                           [id](const auto& queued) { return queued->id == id; });
    if (it == queue_.end()) return false;
    job = *it;
    queue_.erase(it);
    const auto count = static_cast<int64_t>(job->sentences.size());
    queued_sentences_ -= count;
    ++stats_.withdrawn_requests;
    stats_.withdrawn_sentences += count;
  }
  wake_.notify_all();  // the decoder may be waiting for company on this request's behalf
  job->result.set_exception(std::make_exception_ptr(Withdrawn()));
  return true;
}

std::vector<std::shared_ptr<DecodingQueue::Job>> DecodingQueue::take_batch(
    const std::shared_ptr<Job>& first, bool alone) {
  std::vector<std::shared_ptr<Job>> batch;
  int64_t tokens = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const Job& job = **it;
    const bool joins =
        *it == first ||
        (!alone && !first->options.sampling && job.model == first->model && job.key == first->key &&
         tokens + job.tokens <= kBatchesPerCall * first->options.batch_tokens);
    if (joins) {
      tokens += job.tokens;
      batch.push_back(*it);
      queued_sentences_ -= static_cast<int64_t>(job.sentences.size());
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

void DecodingQueue::decode_loop() {
  torch::NoGradGuard no_grad;
  auto free_since = Clock::now();  // this worker's
  while (true) {
    std::vector<std::shared_ptr<Job>> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto unclaimed = [&] {
        return std::find_if(queue_.begin(), queue_.end(),
                            [](const auto& job) { return !job->claimed; });
      };
      ++idle_workers_;
      wake_.wait(lock,
                 [&] { return (stopping_ && queue_.empty()) || unclaimed() != queue_.end(); });
      --idle_workers_;
      if (unclaimed() == queue_.end()) return;  // stopping, nothing left
      const std::shared_ptr<Job> first = *unclaimed();
      first->claimed = true;
      // While another worker is idle, the next request is better decoded beside this one than
      // with it: the others are left to it. With several workers none waits for company: what
      // queued while they were all busy is the batch (a wait would only add latency, the other
      // workers giving the parallelism).
      const bool alone = idle_workers_ > 0;
      const bool wait_for_company = worker_count_ == 1;
      const auto still_queued = [&] {
        return std::find(queue_.begin(), queue_.end(), first) != queue_.end();
      };
      // The wait for company counts from when this worker could first take the request: requests
      // that queued during its previous call are joined by the clients that call just answered.
      const auto deadline = std::max(first->queued, free_since) +
                            std::chrono::duration_cast<Clock::duration>(max_wait_);
      // Wait for company until the oldest request's deadline or a full batch.
      while (wait_for_company && !stopping_ && Clock::now() < deadline && still_queued()) {
        int64_t compatible = 0;
        for (const auto& job : queue_) {
          if (job->model == first->model && job->key == first->key) compatible += job->tokens;
        }
        if (first->options.sampling || compatible >= first->options.batch_tokens) break;
        wake_.wait_until(lock, deadline);
      }
      if (!still_queued()) continue;  // withdrawn, or taken by another worker: start over
      batch = take_batch(first, alone);
      const auto now = Clock::now();
      for (const auto& job : batch) {
        stats_.queue_wait_seconds.observe(std::chrono::duration<double>(now - job->queued).count());
      }
    }
    wake_.notify_all();  // another worker may take what this one left
    std::vector<TranslationRequest> sentences;
    for (const auto& job : batch)
      sentences.insert(sentences.end(), job->sentences.begin(), job->sentences.end());
    std::vector<std::vector<Translation>> answers(batch.size());
    std::vector<std::exception_ptr> failures(batch.size());
    try {
      const ServedModel& model = *batch.front()->model;
      std::vector<Translation> translations =
          model.translator->translate_batch(sentences, batch.front()->options);
      warn_about_limits(model, translations);
      auto next = translations.begin();
      for (size_t i = 0; i < batch.size(); ++i) {
        const auto end = next + static_cast<std::ptrdiff_t>(batch[i]->sentences.size());
        answers[i].assign(std::make_move_iterator(next), std::make_move_iterator(end));
        next = end;
      }
    } catch (...) {
      // One request's bad prefix must not fail the others: decode them one by one.
      for (size_t i = 0; i < batch.size(); ++i) {
        const Job& job = *batch[i];
        try {
          answers[i] = job.model->translator->translate_batch(job.sentences, job.options);
          warn_about_limits(*job.model, answers[i]);
        } catch (const UnusableGuide& e) {
          // Decoded alone, its line is the sentence's number in the request: name the field.
          failures[i] = std::make_exception_ptr(std::invalid_argument(
              fmt::format("field '{}' item {}: {}", e.field, e.line, e.problem)));
        } catch (...) {
          failures[i] = std::current_exception();
        }
      }
    }
    {
      // Counted before any client is answered, so that a client reading /metrics after its answer
      // sees its own batch.
      std::lock_guard<std::mutex> lock(mutex_);
      free_since = Clock::now();
      ++stats_.batches;
      stats_.sentences += static_cast<int64_t>(sentences.size());
      stats_.batch_sentences.observe(static_cast<double>(sentences.size()));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (failures[i]) {
        batch[i]->result.set_exception(failures[i]);
      } else {
        batch[i]->result.set_value(std::move(answers[i]));
      }
    }
  }
}

void DecodingQueue::warn_about_limits(const ServedModel& model,
                                      const std::vector<Translation>& translations) {
  if (warned_about_limits_.load()) return;
  for (const Translation& t : translations) {
    std::string warning = min_len_warning(t);
    if (warning.empty()) warning = empty_output_warning(t);
    if (warning.empty()) continue;
    if (!warned_about_limits_.exchange(true)) {
      std::cerr << fmt::format(
          "warning: model {}: {} (said once; each answer lists its own in \"warnings\")\n",
          model.name, warning);
    }
    return;
  }
}

ServiceStats DecodingQueue::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ServiceStats copy = stats_;
  copy.queued_sentences = queued_sentences_;
  return copy;
}

}  // namespace nmtzoo
