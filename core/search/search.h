// The one search loop for any EncoderDecoder, through encode / decode_step / DecoderState, with
// the choice of continuations delegated to a SearchStrategy (greedy, beam, or a caller's own).
//
// The loop keeps B x K flat rows (row = sentence * K + hypothesis) and, each step, asks the
// strategy for candidates (the beam's 2K best, so that hypotheses ending in EOS never starve the
// beam, as in fairseq's SequenceGenerator). Candidates ending in EOS among the first K are set
// aside; a sentence is done once K are set aside or its length limit is hit, and finished
// sentences leave the batch.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "core/config/config.h"

namespace nmtzoo {

class EncoderDecoder;
class SearchStrategy;

struct SearchOptions {
  int64_t beam = 5;                                   // 1 = greedy
  int64_t nbest = 1;                                  // hypotheses returned per sentence
  LengthPenalty length_penalty = LengthPenalty::kAverage;
  double alpha = 1.0;                                 // length penalty strength
  double max_len_a = 1.5;                             // output length <= a * source_len + b
  int64_t max_len_b = 10;
  int64_t min_len = 1;                                // EOS is forbidden before this many tokens
  bool record_attention = false;  // keep each returned hypothesis's cross-attention
  int64_t attention_layer = -1;   // which decoder layer's attention to keep; -1 = mean of all
  int64_t attention_head = -1;    // which head of that layer; -1 = mean of all

  static SearchOptions from(const DecodeConfig& config);
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // without BOS and EOS
  double score = 0;             // log-probability after the length penalty (what ranks)
  double log_prob = 0;          // sum of token log-probabilities, EOS included
  at::Tensor attention;         // (tokens + 1, S) when recorded: one row per output incl. EOS
};

// n-best lists (up to options.nbest, at most the strategy's width), best first, one per source
// row. src_tokens (B, S), src_pad_mask (B, S).
std::vector<std::vector<Hypothesis>> search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                            const at::Tensor& src_pad_mask,
                                            const SearchOptions& options, SearchStrategy& strategy);

// search() with a BeamStrategy of options.beam.
std::vector<std::vector<Hypothesis>> beam_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                                 const at::Tensor& src_pad_mask,
                                                 const SearchOptions& options);

// One hypothesis per row, picking the most probable token each step (search() with a
// GreedyStrategy). Gives the tokens of beam_search with beam 1.
std::vector<Hypothesis> greedy_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                      const at::Tensor& src_pad_mask, const SearchOptions& options);

// Length-penalised score of a hypothesis of `length` tokens (EOS included).
double penalized_score(double log_prob, int64_t length, LengthPenalty penalty, double alpha);

}  // namespace nmtzoo
