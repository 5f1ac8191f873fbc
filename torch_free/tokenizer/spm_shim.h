// SPDX-License-Identifier: MIT
// C ABI of the SentencePiece shim (libnmtzoo_spm.so).
//
// Debian's libsentencepiece bundles protobuf 3.14 and LibTorch loads protobuf 3.21; in one link
// namespace they crash at start-up. The shim is the only object linked against SentencePiece and
// is loaded into its own namespace with dlmopen(LM_ID_NEWLM), so nothing but this C ABI crosses.
// The namespaces also have separate heaps: the shim never returns memory for the caller to free;
// every variable-size result is passed to a caller-supplied callback instead.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NmtzooSpm NmtzooSpm;

// No C++ exception may cross this interface in either direction: the shim and its caller have
// separate C++ runtimes and unwinders, and an exception unwinding through the other side's frames
// finds no unwind information there and ends in std::terminate (SIGABRT, no message). The shim
// turns its exceptions into return values and messages; the callbacks below must not throw (the
// caller keeps what went wrong and reports it once the shim has returned).

// Receives bytes (a piece, a decoded text) or ids; called once per item.
typedef void (*NmtzooSpmTextSink)(void* context, const char* data, size_t size);
typedef void (*NmtzooSpmIdSink)(void* context, const int* ids, size_t count);
// Supplies one training sentence per call: returns 1 with the sentence in *data and *size (valid
// until the next call), 0 at the end of the corpus, or a negative value when it failed (a corpus
// that cannot be read, bad data): training then stops at once and nmtzoo_spm_train fails.
typedef int (*NmtzooSpmSentenceSource)(void* context, const char** data, size_t* size);

// Every function reporting failure writes a NUL-terminated message into `error` (capacity
// `error_size`) and returns NULL or a negative value.
// Loads a model from the bytes of its .model file (a serialized ModelProto).
NmtzooSpm* nmtzoo_spm_load(const char* model, size_t size, char* error, size_t error_size);
void nmtzoo_spm_free(NmtzooSpm* model);
int nmtzoo_spm_vocab_size(const NmtzooSpm* model);
// which: 0 = pad, 1 = unk, 2 = bos, 3 = eos. Returns -1 when the model defines none.
int nmtzoo_spm_special_id(const NmtzooSpm* model, int which);
int nmtzoo_spm_encode_ids(const NmtzooSpm* model, const char* text, size_t size,
                          NmtzooSpmIdSink sink, void* context, char* error, size_t error_size);
// Subword sampling (SentencePiece's SampleEncode with nbest_size -1): BPE-dropout with merge-drop
// probability `alpha` for BPE models, forward-filtering backward-sampling with smoothing `alpha`
// for unigram models. The result depends only on (model, text, alpha, seed): SentencePiece's own
// generator is one per thread, seeded once, so the shim reseeds the calling thread's generator
// with `seed` before each call.
int nmtzoo_spm_sample_encode_ids(const NmtzooSpm* model, const char* text, size_t size, float alpha,
                                 unsigned long long seed, NmtzooSpmIdSink sink, void* context,
                                 char* error, size_t error_size);
int nmtzoo_spm_encode_pieces(const NmtzooSpm* model, const char* text, size_t size,
                             NmtzooSpmTextSink sink, void* context, char* error, size_t error_size);
int nmtzoo_spm_decode_ids(const NmtzooSpm* model, const int* ids, size_t count,
                          NmtzooSpmTextSink sink, void* context, char* error, size_t error_size);
int nmtzoo_spm_id_to_piece(const NmtzooSpm* model, int id, NmtzooSpmTextSink sink, void* context);

// Trains a model from SentencePiece's command-line style `args` (without --input), reading the
// sentences from `source`. `seed` drives sentence sampling and unigram EM; `quiet` silences
// SentencePiece's own progress log. Fails, writing no model, when `source` reports a failure.
int nmtzoo_spm_train(const char* args, NmtzooSpmSentenceSource source, void* context,
                     unsigned int seed, int quiet, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif
