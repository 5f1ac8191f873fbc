// SPDX-License-Identifier: MIT
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
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "torch_free/config/config.h"

namespace nmtzoo {

class DecoderState;
class EncoderDecoder;
class SearchStrategy;

// Which cross-attention a search records: one decoder layer's heads (one head, the mean of the
// first N, or all) or the mean of all layers and heads.
struct AttentionChoice {
  static constexpr int64_t kPenultimateLayer = -2;  // resolved per model (Translator)
  int64_t layer = -1;                               // -1 = the mean of all layers and heads
  int64_t head = -1;                                // one head of that layer; -1 = a mean of heads
  int64_t heads = 0;  // with head -1: the mean of the first N heads; 0 = all
  // For word alignments (--alignment-*): a model without cross-attention is then an error, not a
  // warning, and errors name those flags instead of the heatmap's --attention-*.
  bool alignment = false;
  std::string describe() const;  // "mean of layers and heads", "layer 2, head 1", ...
};

// What one search call does: the schema's decoding section itself (every key declared once, in
// torch_free/config/schema.cpp, read here directly), plus what only a caller can ask for: the
// cross-attention to record. A new decoding key is one schema entry plus its use.
struct SearchOptions : DecodeConfig {
  SearchOptions();  // the schema's defaults
  // `decoding` as given; its older `bf16: true` becomes dtype bf16. std::invalid_argument naming
  // the key when decoding.validate() finds a problem.
  explicit SearchOptions(const DecodeConfig& decoding);

  bool record_attention = false;  // keep each returned hypothesis's cross-attention
  AttentionChoice attention;      // which of the model's cross-attention to keep

  // Hypotheses kept per sentence: the beam, or the number of samples.
  int64_t width() const { return sampling ? nbest : beam; }
  bool needs_attention() const { return record_attention || coverage_penalty > 0; }
};

// What a caller imposes on one sentence's output, in target token ids.
struct SentenceGuide {
  std::vector<int64_t> prefix;  // forced first tokens, then the search goes on
  std::vector<std::vector<int64_t>>
      constraints;   // phrases the output must contain (constrained search)
  int64_t line = 0;  // the sentence's input line: seeds its sampling
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // without BOS and EOS
  double score = 0;             // log-probability after the length penalty (what ranks)
  double log_prob = 0;          // sum of token log-probabilities, EOS included
  at::Tensor attention;         // (tokens + 1, S) when recorded: one row per output incl. EOS
  bool complete = true;         // false: the length limit ended it before its constraints were met
};

// The model's scores stopped being numbers (NaN or +infinity: activations that overflowed, e.g.
// in bf16 or with corrupt weights) while searching. The search stops rather than rank or extend
// them: a hypothesis scored NaN never ends (its limit never applies) and one scored +infinity
// beats every real one. `where` names the sentences ("line 7", "sentences 0, 3 of the batch").
struct NonFiniteScores : std::runtime_error {
  NonFiniteScores(const std::string& where, int64_t step, std::vector<int64_t> sentences);
  int64_t step;  // the output token being chosen, from 0
  // The sentences affected, ascending: batch rows from search(), input lines from
  // TranslationPipeline and the Translator.
  std::vector<int64_t> sentences;
};

// n-best lists (up to options.nbest, at most the strategy's width), best first, one per source
// row. src_tokens (B, S), src_pad_mask (B, S). `guides`, empty or one per row: each row's prefix
// is forced, and its length limit grows by its prefix and constraint tokens (output_length_limits;
// a prefix longer than the model's max_positions - 1 is an error). A min_len above a row's limit
// is lowered to it (effective_min_len). A row whose every hypothesis was ruled out (its model
// gives EOS no probability at the limit) has an empty list. `vocabulary`, when
// defined, is the batch's shortlist (DecoderState::vocabulary: sorted target ids starting with
// 0..3, holding every prefix token): the model scores only those tokens and the strategy sees
// (N, K, V') log-probabilities; tokens it returns are mapped back to ids. A strategy that looks
// tokens up by id in the log-probabilities (constrained beam) or needs the whole distribution
// (sampling) must be given none: the Translator gives it only to greedy and beam search. Throws
// NonFiniteScores when a live hypothesis's best continuations are scored NaN or +infinity.
// `between_steps`, when given, is called before each step; what it throws stops the search.
std::vector<std::vector<Hypothesis>> search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                            const at::Tensor& src_pad_mask,
                                            const SearchOptions& options, SearchStrategy& strategy,
                                            const std::vector<SentenceGuide>& guides = {},
                                            const at::Tensor& vocabulary = {},
                                            const std::function<void()>& between_steps = {});

// The cross-attention of the last step (R, S) that `choice` selects from the model's state.
at::Tensor selected_attention(const DecoderState& state, const AttentionChoice& choice);

// search() with a BeamStrategy of options.beam.
std::vector<std::vector<Hypothesis>> beam_search(EncoderDecoder& model,
                                                 const at::Tensor& src_tokens,
                                                 const at::Tensor& src_pad_mask,
                                                 const SearchOptions& options);

// One hypothesis per row, picking the most probable token each step (search() with a
// GreedyStrategy). Gives the tokens of beam_search with beam 1.
std::vector<Hypothesis> greedy_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                      const at::Tensor& src_pad_mask, const SearchOptions& options);

// Each sentence's output length limit in tokens (EOS excluded), as search() applies it:
// a * source length + b (decoding.max_len_a/b; `source_lengths` count EOS, which is not part of
// the length), plus the guide's prefix and constraint tokens, at most what the model's positions
// hold beside BOS (max_positions - 1), at least 1. `guides`: empty, or one per sentence.
std::vector<int64_t> output_length_limits(int64_t max_positions,
                                          const std::vector<int64_t>& source_lengths,
                                          const SearchOptions& options,
                                          const std::vector<SentenceGuide>& guides = {});

// The shortest output search() asks of a sentence whose length limit is `limit`: decoding.min_len,
// lowered to the limit when it is more (the limit ends every hypothesis, so a longer minimum
// would forbid every ending and leave the output empty).
inline int64_t effective_min_len(int64_t min_len, int64_t limit) {
  return min_len < limit ? min_len : limit;
}

// Length-penalised score of a hypothesis of `length` tokens (EOS included).
double penalized_score(double log_prob, int64_t length, LengthPenalty penalty, double alpha);

}  // namespace nmtzoo
