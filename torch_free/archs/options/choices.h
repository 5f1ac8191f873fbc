// SPDX-License-Identifier: MIT
// The choices the architectures' own model keys take (their names in a config are declared with
// the keys, in libtorch/models/*_arch.cpp). No LibTorch here.
#pragma once

namespace nmtzoo {

enum class Activation { kRelu, kGelu };
enum class NormPosition { kPost, kPre };  // post-LN as in Vaswani et al.; pre-LN as an option
// Absolute encodings added to the embeddings (sinusoids of Vaswani et al., or a learned table),
// or Shaw et al.'s (2018) learned embeddings of clipped relative distances inside self-attention.
enum class PositionEncoding { kSinusoidal, kLearned, kRelative };
enum class RnnCell { kGru, kLstm };
// Which decoder state queries the attention: s_{i-1} before the step (Bahdanau et al.), the
// new state h_t followed by the attentional hidden layer tanh(W_c [c_t; h_t]) (Luong et al.), or
// the intermediate state of a conditional GRU, whose second cell then reads the context
// (Sennrich et al. 2017, Nematus; Marian's s2s decoder).
enum class AttentionQuery { kPrevious, kCurrent, kConditional };
// What feeds the softmax: a maxout layer over state, previous embedding and context (Bahdanau et
// al.'s deep output), or one linear layer of the same inputs followed by tanh.
enum class Readout { kMaxout, kTanh };
// How a query is scored against each key (Bahdanau et al. 2015; Luong et al. 2015).
enum class AttentionScore {
  kAdditive,   // v^T tanh(W q + U k)
  kDot,        // q^T k
  kGeneral,    // q^T W k
  kScaledDot,  // q^T k / sqrt(d)
};

}  // namespace nmtzoo
