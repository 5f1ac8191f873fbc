// SPDX-License-Identifier: MIT
// The only translation unit that includes SentencePiece; see spm_shim.h for why.
#include "torch_free/tokenizer/spm_shim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <pthread.h>

#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace sentencepiece::logging {
void SetMinLogLevel(int level);  // exported by libsentencepiece, absent from its public headers
}
namespace sentencepiece::random {
// The calling thread's generator, which SampleEncode draws from (exported, in no public header).
std::mt19937* GetRandomGenerator();
}  // namespace sentencepiece::random

struct NmtzooSpm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

int fail(char* error, size_t error_size, const std::string& message) {
  if (error != nullptr && error_size > 0) {
    size_t n = std::min(message.size(), error_size - 1);
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return -1;
}

// A failing source ends the iteration with an error status, which SentencePiece's trainer checks
// once the iteration is done (TrainerInterface::LoadSentences), so it stops before training.
class CallbackSentences : public sentencepiece::SentenceIterator {
 public:
  CallbackSentences(NmtzooSpmSentenceSource source, void* context)
      : source_(source), context_(context) {
    Next();
  }
  bool done() const override { return done_; }
  void Next() override {
    if (failed_) return;
    const char* data = nullptr;
    size_t size = 0;
    const int got = source_(context_, &data, &size);
    failed_ = got < 0;
    done_ = got <= 0;
    if (!done_) value_.assign(data, size);
  }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override {
    if (!failed_) return {};
    return {sentencepiece::util::StatusCode::kCancelled, "the sentence source failed"};
  }
  bool failed() const { return failed_; }

 private:
  NmtzooSpmSentenceSource source_;
  void* context_;
  std::string value_;
  bool done_ = false;
  bool failed_ = false;
};

// glibc 2.36 frees a reused thread stack's dynamic TLS blocks with the free() of the libc that
// creates the thread (allocatestack.c, get_cached_stack), but ld.so allocated them with the main
// namespace's malloc. The trainer's threads live in this dlmopen'd namespace, whose libc is a
// second copy: reusing a stack of the first training's threads in a second training handed a
// foreign block to this copy's free (an abort under AddressSanitizer, a silent cross-heap free
// otherwise). A default stack larger than glibc's stack cache (40 MiB unless the
// glibc.pthread.stack_cache_size tunable raises it) is never cached, so its TLS is freed by ld.so
// with the malloc that made it. The size is address space only: pages are touched as used.
void never_cache_thread_stacks() {
  constexpr size_t kStackBytes = size_t{256} << 20;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  size_t current = 0;
  if (pthread_attr_getstacksize(&attr, &current) == 0 && current < kStackBytes &&
      pthread_attr_setstacksize(&attr, kStackBytes) == 0) {
    pthread_setattr_default_np(&attr);
  }
  pthread_attr_destroy(&attr);
}

}  // namespace

extern "C" {

NmtzooSpm* nmtzoo_spm_load(const char* model, size_t size, char* error, size_t error_size) {
  try {
    auto loaded = std::make_unique<NmtzooSpm>();
    auto status = loaded->processor.LoadFromSerializedProto(std::string(model, size));
    if (!status.ok()) {
      fail(error, error_size, status.ToString());
      return nullptr;
    }
    return loaded.release();
  } catch (const std::exception& e) {
    fail(error, error_size, e.what());
    return nullptr;
  }
}

void nmtzoo_spm_free(NmtzooSpm* model) { delete model; }

int nmtzoo_spm_vocab_size(const NmtzooSpm* model) { return model->processor.GetPieceSize(); }

int nmtzoo_spm_special_id(const NmtzooSpm* model, int which) {
  switch (which) {
    case 0:
      return model->processor.pad_id();
    case 1:
      return model->processor.unk_id();
    case 2:
      return model->processor.bos_id();
    case 3:
      return model->processor.eos_id();
    default:
      return -1;
  }
}

int nmtzoo_spm_encode_ids(const NmtzooSpm* model, const char* text, size_t size,
                          NmtzooSpmIdSink sink, void* context, char* error, size_t error_size) {
  try {
    std::vector<int> ids;
    auto status = model->processor.Encode(std::string_view(text, size), &ids);
    if (!status.ok()) return fail(error, error_size, status.ToString());
    sink(context, ids.data(), ids.size());
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  }
}

int nmtzoo_spm_sample_encode_ids(const NmtzooSpm* model, const char* text, size_t size, float alpha,
                                 unsigned long long seed, NmtzooSpmIdSink sink, void* context,
                                 char* error, size_t error_size) {
  try {
    std::seed_seq sequence{static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32)};
    sentencepiece::random::GetRandomGenerator()->seed(sequence);
    std::vector<int> ids;
    auto status = model->processor.SampleEncode(std::string_view(text, size), -1, alpha, &ids);
    if (!status.ok()) return fail(error, error_size, status.ToString());
    sink(context, ids.data(), ids.size());
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  }
}

int nmtzoo_spm_encode_pieces(const NmtzooSpm* model, const char* text, size_t size,
                             NmtzooSpmTextSink sink, void* context, char* error,
                             size_t error_size) {
  try {
    std::vector<std::string> pieces;
    auto status = model->processor.Encode(std::string_view(text, size), &pieces);
    if (!status.ok()) return fail(error, error_size, status.ToString());
    for (const auto& piece : pieces) sink(context, piece.data(), piece.size());
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  }
}

int nmtzoo_spm_decode_ids(const NmtzooSpm* model, const int* ids, size_t count,
                          NmtzooSpmTextSink sink, void* context, char* error, size_t error_size) {
  try {
    std::string text;
    auto status = model->processor.Decode(std::vector<int>(ids, ids + count), &text);
    if (!status.ok()) return fail(error, error_size, status.ToString());
    sink(context, text.data(), text.size());
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  }
}

int nmtzoo_spm_id_to_piece(const NmtzooSpm* model, int id, NmtzooSpmTextSink sink, void* context) {
  if (id < 0 || id >= model->processor.GetPieceSize()) return -1;
  const std::string& piece = model->processor.IdToPiece(id);
  sink(context, piece.data(), piece.size());
  return 0;
}

int nmtzoo_spm_train(const char* args, NmtzooSpmSentenceSource source, void* context,
                     unsigned int seed, int quiet, char* error, size_t error_size) {
  try {
    never_cache_thread_stacks();
    sentencepiece::logging::SetMinLogLevel(quiet ? 1 : 0);
    sentencepiece::SetRandomGeneratorSeed(seed);
    CallbackSentences sentences(source, context);
    auto status = sentencepiece::SentencePieceTrainer::Train(args, &sentences);
    // A failed source fails the training whatever the trainer made of its status.
    if (sentences.failed()) return fail(error, error_size, "the sentence source failed");
    if (!status.ok()) return fail(error, error_size, status.ToString());
    return 0;
  } catch (const std::exception& e) {
    return fail(error, error_size, e.what());
  } catch (...) {
    return fail(error, error_size, "unknown exception in SentencePiece's trainer");
  }
}

}  // extern "C"
