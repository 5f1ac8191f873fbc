// SPDX-License-Identifier: MIT
// Small functions shared by the model modules.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include <tuple>

#include <cstdint>

namespace nmtzoo {

// x W^T + b. Every linear layer of the zoo goes through here, so that inference inside an
// Int8Scope (libtorch/kernels/int8_linear.h) runs them in int8.
at::Tensor apply_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});
at::Tensor apply_linear(const at::Tensor& x, const torch::nn::LinearImpl& layer);

// One step of a GRU / LSTM cell, as the module's forward gives it; inside an Int8Scope its two
// products go through apply_linear() (the modules' own forward would keep them in float32).
at::Tensor gru_cell(const at::Tensor& input, const at::Tensor& h, torch::nn::GRUCellImpl& cell);
std::tuple<at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input, const at::Tensor& h,
                                             const at::Tensor& c, torch::nn::LSTMCellImpl& cell);
// The same steps from the input's gate pre-activations, input_gates = x W_ih^T + b_ih ((B, 3n) for
// a GRU, (B, 4n) for an LSTM), computed by the caller: the RNN decoder adds the context's share
// from projections of the source made once per sentence (libtorch/models/rnn_seq2seq.cpp).
at::Tensor gru_cell_from_input_gates(const at::Tensor& input_gates, const at::Tensor& h,
                                     torch::nn::GRUCellImpl& cell);
std::tuple<at::Tensor, at::Tensor> lstm_cell_from_input_gates(const at::Tensor& input_gates,
                                                              const at::Tensor& h,
                                                              const at::Tensor& c,
                                                              torch::nn::LSTMCellImpl& cell);
// The cells' elementwise part from both products' gate pre-activations, biases included: a GRU's
// input and hidden gates (each (B, 3n)), an LSTM's summed gates (B, 4n) and its cell c.
at::Tensor gru_cell_from_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                               const at::Tensor& h);
std::tuple<at::Tensor, at::Tensor> lstm_cell_from_gates(const at::Tensor& gates,
                                                        const at::Tensor& c);

// Dropout with probability p when training, the identity otherwise (no copy).
at::Tensor apply_dropout(const at::Tensor& x, double p, bool training);

// Word dropout on embeddings x (..., m) when training: each token's whole vector is zeroed with
// probability p, the others scaled by 1 / (1 - p), as Marian's --dropout-src/--dropout-trg do;
// the identity otherwise. Unlike apply_dropout, the model cannot rebuild a token from the
// surviving units of its vector: it must translate from the context (Sennrich & Zhang 2019).
at::Tensor apply_word_dropout(const at::Tensor& x, double p, bool training);

// The one masking rule of every attention: softmax over the last dimension of `scores`
// (B, ..., T, S) where keys with key_pad_mask (B, S) true, and positions with attn_mask (T, S)
// true, get exactly zero weight. Both masks are bool, true = forbidden, and optional. With
// `in_place`, `scores` itself is filled (a temporary the caller just computed: multi-head
// attention's large score tensors), else a copy (the RNN attention's small per-step scores, a
// view whose in-place fill would put a CopySlices node into autograd's graph at every step).
at::Tensor masked_softmax(at::Tensor scores, const at::Tensor& key_pad_mask,
                          const at::Tensor& attn_mask = {}, bool in_place = true);

// (T, T) bool mask, true above the diagonal: position t may not attend to positions after t.
at::Tensor causal_mask(int64_t length, const c10::Device& device);

}  // namespace nmtzoo
