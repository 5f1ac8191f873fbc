// The model section of a run config as plain data. It sits below both the config (which parses
// YAML into it) and the models (whose registry maps it to module options), so neither includes
// the other. No LibTorch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/model_choices.h"

namespace nmtzoo {

struct ModelConfig {
  std::string arch;
  // Transformer
  int64_t d_model;
  int64_t ffn_dim;
  int64_t heads;
  double attention_dropout;
  double activation_dropout;
  Activation activation;
  NormPosition norm;
  PositionEncoding positions;
  int64_t max_positions;
  int64_t max_relative_positions;
  // RNN
  int64_t emb_dim;
  int64_t hidden_dim;
  RnnCell cell;
  std::optional<AttentionScore> attention;
  int64_t attention_dim;
  AttentionQuery attention_query;
  Readout readout;
  int64_t readout_dim;
  // Both
  int64_t encoder_layers;
  int64_t decoder_layers;
  double dropout;
  double source_word_dropout;
  double target_word_dropout;
  SharingChoice share_embeddings;
};

}  // namespace nmtzoo
