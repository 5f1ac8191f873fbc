// SPDX-License-Identifier: MIT
#include "libtorch/kernels/step_attention.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <tuple>
#include <vector>

#include "libtorch/kernels/deferred_gradients.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/mask_view.h"
#include "libtorch/kernels/vector_clones.h"
#include "libtorch/kernels/vector_math.h"

namespace nmtzoo {
namespace {

// Raw pointers and element strides of step_attention's operands.
struct Operands {
  const float* q;
  int64_t q_row, q_head;
  const float* keys;
  int64_t k_row, k_head, k_position;
  const float* values;
  int64_t v_row, v_head, v_position;
  const int64_t* key_rows;    // null: row b
  const int64_t* value_rows;  // null: row b
  MaskView mask;
  const float* relative_keys;  // null: no relative positions
  const float* relative_values;
  int64_t max_distance, query_offset;
  int64_t heads, positions, dim;
  float* out;  // (B, H, D) contiguous
};

// scores[0..n) -> their softmax, -inf where mask[s * mask_stride] (mask may be null). Inlined into
// the vectorised callers. All keys masked: max is -inf and every weight NaN (-inf - -inf), as
// LibTorch's softmax gives.
inline void masked_softmax(float* scores, int64_t n, const bool* mask, int64_t mask_stride) {
  if (mask != nullptr) {
    for (int64_t s = 0; s < n; ++s) {
      if (mask[s * mask_stride]) scores[s] = -std::numeric_limits<float>::infinity();
    }
  }
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t s = 0; s < n; ++s) max = scores[s] > max ? scores[s] : max;
  const float total = exp_shifted(scores, max, n, scores);
  for (int64_t s = 0; s < n; ++s) scores[s] /= total;
}

// out[0..width) = sum over s < n of weights[s] rows[s * row_stride + 0..width), in order of s.
inline void weighted_sum(const float* weights, int64_t n, const float* rows, int64_t row_stride,
                         int64_t width, float* out) {
#pragma omp simd
  for (int64_t d = 0; d < width; ++d) out[d] = 0.0f;
  for (int64_t s = 0; s < n; ++s) {
    const float weight = weights[s];
    const float* row = rows + s * row_stride;
#pragma omp simd
    for (int64_t d = 0; d < width; ++d) out[d] += weight * row[d];
  }
}

// Per-thread buffers of one (row, head).
struct Scratch {
  explicit Scratch(const Operands& o)
      : scores(static_cast<size_t>(o.positions)),
        table_scores(static_cast<size_t>(2 * o.max_distance + 1)),
        table_weights(table_scores.size()),
        sum(static_cast<size_t>(o.dim)),
        table_sum(sum.size()) {}
  std::vector<float> scores, table_scores, table_weights, sum, table_sum;
};

// The (row, head) pairs [begin, end) of the flattened (B, H), one function per ISA so that every
// inner loop below is vectorised at the CPU's width.
NMTZOO_VECTOR_CLONES
void attend_range(const Operands& o, int64_t begin, int64_t end, Scratch& scratch) {
  const int64_t d_size = o.dim, s_size = o.positions;
  float* scores = scratch.scores.data();
  float* sum = scratch.sum.data();
  const int64_t tables = 2 * o.max_distance + 1;
  for (int64_t pair = begin; pair < end; ++pair) {
    const int64_t b = pair / o.heads, h = pair % o.heads;
    const float* q = o.q + b * o.q_row + h * o.q_head;
    const int64_t key_row = o.key_rows != nullptr ? o.key_rows[b] : b;
    const int64_t value_row = o.value_rows != nullptr ? o.value_rows[b] : b;
    const float* keys = o.keys + key_row * o.k_row + h * o.k_head;
    const float* values = o.values + value_row * o.v_row + h * o.v_head;
    for (int64_t s = 0; s < s_size; ++s) {
      const float* key = keys + s * o.k_position;
      float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
      for (int64_t d = 0; d < d_size; ++d) dot += q[d] * key[d];
      scores[s] = dot;
    }
    if (o.relative_keys != nullptr) {
      float* table_scores = scratch.table_scores.data();
      for (int64_t c = 0; c < tables; ++c) {
        const float* key = o.relative_keys + c * d_size;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t d = 0; d < d_size; ++d) dot += q[d] * key[d];
        table_scores[c] = dot;
      }
      for (int64_t s = 0; s < s_size; ++s) {
        const int64_t c =
            std::clamp(s - o.query_offset, -o.max_distance, o.max_distance) + o.max_distance;
        scores[s] += table_scores[c];
      }
    }
    masked_softmax(scores, s_size, o.mask.row_of(b), o.mask.column);
    weighted_sum(scores, s_size, values, o.v_position, d_size, sum);
    if (o.relative_values != nullptr) {
      float* table_weights = scratch.table_weights.data();
      float* table_sum = scratch.table_sum.data();
      std::fill(table_weights, table_weights + tables, 0.0f);
      for (int64_t s = 0; s < s_size; ++s) {
        const int64_t c =
            std::clamp(s - o.query_offset, -o.max_distance, o.max_distance) + o.max_distance;
        table_weights[c] += scores[s];
      }
      weighted_sum(table_weights, tables, o.relative_values, d_size, d_size, table_sum);
#pragma omp simd
      for (int64_t d = 0; d < d_size; ++d) sum[d] += table_sum[d];
    }
    float* out = o.out + pair * d_size;
#pragma omp simd
    for (int64_t d = 0; d < d_size; ++d) out[d] = sum[d];
  }
}

// Raw pointers and element strides of step_context's operands.
struct ContextOperands {
  const float* query;
  int64_t query_row;
  const float* keys;
  int64_t k_row, k_position;
  const float* energy;  // null: dot-product scores times scale
  float scale;
  const float* memory;
  int64_t m_row, m_position;
  const int64_t* key_rows;     // null: row b
  const int64_t* memory_rows;  // null: row b
  MaskView mask;
  int64_t positions, width, dim;
  float* context;  // (B, M) contiguous
  float* weights;  // (B, S) contiguous
};

NMTZOO_VECTOR_CLONES
void context_range(const ContextOperands& o, int64_t begin, int64_t end) {
  const int64_t a_size = o.width, m_size = o.dim, s_size = o.positions;
  for (int64_t b = begin; b < end; ++b) {
    const float* query = o.query + b * o.query_row;
    const float* keys = o.keys + (o.key_rows != nullptr ? o.key_rows[b] : b) * o.k_row;
    const float* memory = o.memory + (o.memory_rows != nullptr ? o.memory_rows[b] : b) * o.m_row;
    float* weights = o.weights + b * s_size;
    for (int64_t s = 0; s < s_size; ++s) {
      const float* key = keys + s * o.k_position;
      float score = 0.0f;
      if (o.energy != nullptr) {
#pragma omp simd reduction(+ : score)
        for (int64_t a = 0; a < a_size; ++a) score += o.energy[a] * tanh_by_exp(query[a] + key[a]);
      } else {
#pragma omp simd reduction(+ : score)
        for (int64_t a = 0; a < a_size; ++a) score += query[a] * key[a];
        score *= o.scale;
      }
      weights[s] = score;
    }
    masked_softmax(weights, s_size, o.mask.row_of(b), o.mask.column);
    weighted_sum(weights, s_size, memory, o.m_position, m_size, o.context + b * m_size);
  }
}

// Raw pointers of a training step's backward; rows are contiguous.
struct ContextGradientOperands {
  const float* query;   // (B, A)
  const float* keys;    // (B, S, A)
  const float* energy;  // (A); null: dot-product scores times scale
  float scale;
  const float* memory;        // (B, S, M)
  const float* weights;       // (B, S), the forward's
  const float* grad_context;  // (B, M) or null
  const float* grad_weights;  // (B, S) or null
  int64_t positions, width, dim;
  float* grad_query;   // (B, A), written
  float* grad_keys;    // (B, S, A), added to
  float* grad_memory;  // (B, S, M), added to
};

// Rows [begin, end): with w the weights and e the scores, dL/dw_s = g_c . m_s (+ the weights' own
// gradient), dL/de_s = w_s (dL/dw_s - sum_r w_r dL/dw_r), and through e_s = v . tanh(q + k_s) the
// query's, the key's and the energy's (added to grad_energy, this thread's); masked positions
// (weight exactly 0) contribute nothing.
NMTZOO_VECTOR_CLONES
void context_backward_range(const ContextGradientOperands& o, int64_t begin, int64_t end,
                            float* grad_energy, float* grad_scores) {
  const int64_t a_size = o.width, m_size = o.dim, s_size = o.positions;
  for (int64_t b = begin; b < end; ++b) {
    const float* query = o.query + b * a_size;
    const float* weights = o.weights + b * s_size;
    const float* grad_context = o.grad_context != nullptr ? o.grad_context + b * m_size : nullptr;
    float* grad_query = o.grad_query + b * a_size;
#pragma omp simd
    for (int64_t a = 0; a < a_size; ++a) grad_query[a] = 0.0f;
    float expected = 0.0f;
    for (int64_t s = 0; s < s_size; ++s) {
      float g = o.grad_weights != nullptr ? o.grad_weights[b * s_size + s] : 0.0f;
      if (grad_context != nullptr) {
        const float* row = o.memory + (b * s_size + s) * m_size;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int64_t m = 0; m < m_size; ++m) dot += grad_context[m] * row[m];
        g += dot;
      }
      grad_scores[s] = g;
      expected += weights[s] * g;
    }
    for (int64_t s = 0; s < s_size; ++s) {
      const float weight = weights[s];
      if (weight == 0.0f) continue;
      const float grad_score = weight * (grad_scores[s] - expected);
      if (grad_context != nullptr) {
        float* grad_row = o.grad_memory + (b * s_size + s) * m_size;
#pragma omp simd
        for (int64_t m = 0; m < m_size; ++m) grad_row[m] += weight * grad_context[m];
      }
      const float* key = o.keys + (b * s_size + s) * a_size;
      float* grad_key = o.grad_keys + (b * s_size + s) * a_size;
      if (o.energy != nullptr) {
#pragma omp simd
        for (int64_t a = 0; a < a_size; ++a) {
          const float t = tanh_by_exp(query[a] + key[a]);
          const float grad_sum = grad_score * o.energy[a] * (1.0f - t * t);
          grad_query[a] += grad_sum;
          grad_key[a] += grad_sum;
          grad_energy[a] += grad_score * t;
        }
      } else {
        const float scaled = grad_score * o.scale;
#pragma omp simd
        for (int64_t a = 0; a < a_size; ++a) {
          grad_query[a] += scaled * key[a];
          grad_key[a] += scaled * query[a];
        }
      }
    }
  }
}

bool is_float_cpu(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided &&
         t.device().is_cpu();
}

bool row_index_fits(const at::Tensor& rows, int64_t batch) {
  return !rows.defined() || (rows.scalar_type() == at::kLong && rows.device().is_cpu() &&
                             rows.dim() == 1 && rows.size(0) == batch);
}

bool mask_fits(const at::Tensor& mask, int64_t batch, int64_t positions) {
  return !mask.defined() || (mask.scalar_type() == at::kBool && mask.device().is_cpu() &&
                             mask.dim() == 2 && mask.size(0) == batch && mask.size(1) == positions);
}

bool without_gradients(std::initializer_list<const at::Tensor*> tensors) {
  if (!at::GradMode::is_enabled()) return true;
  for (const at::Tensor* t : tensors) {
    if (t->defined() && t->requires_grad()) return false;
  }
  return true;
}

const int64_t* checked_rows(const at::Tensor& rows, int64_t limit, const char* name) {
  if (!rows.defined()) return nullptr;
  const int64_t* data = rows.data_ptr<int64_t>();
  const int64_t stride = rows.stride(0);
  TORCH_CHECK(stride == 1, "step_attention: ", name, " must be contiguous");
  for (int64_t i = 0; i < rows.size(0); ++i) {
    TORCH_CHECK(data[i] >= 0 && data[i] < limit, "step_attention: ", name, "[", i, "] = ", data[i],
                " is not a row of the ", limit, " given");
  }
  return data;
}

}  // namespace

bool step_attention_applies(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& key_rows, const at::Tensor& value_rows,
                            const at::Tensor& key_pad_mask) {
  if (!fast_kernels_enabled() || !is_float_cpu(q) || !is_float_cpu(keys) || !is_float_cpu(values))
    return false;
  if (!without_gradients({&q, &keys, &values})) return false;
  if (q.dim() != 4 || keys.dim() != 4 || values.dim() != 4 || q.size(2) != 1) return false;
  const int64_t batch = q.size(0);
  if (keys.size(1) != q.size(1) || keys.size(3) != q.size(3) ||
      values.sizes().slice(1) != keys.sizes().slice(1)) {
    return false;
  }
  if (q.stride(3) != 1 || keys.stride(3) != 1 || values.stride(3) != 1 || keys.size(2) == 0)
    return false;
  if (!row_index_fits(key_rows, batch) || !row_index_fits(value_rows, batch)) return false;
  if (!key_rows.defined() && keys.size(0) != batch) return false;
  if (!value_rows.defined() && values.size(0) != batch) return false;
  return mask_fits(key_pad_mask, batch, keys.size(2));
}

at::Tensor step_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                          const at::Tensor& key_rows, const at::Tensor& value_rows,
                          const at::Tensor& key_pad_mask, const StepRelativePositions* relative) {
  RECORD_FUNCTION("nmtzoo::step_attention", std::vector<c10::IValue>({q, keys, values}));
  TORCH_CHECK(
      step_attention_applies(q, keys, values, key_rows, value_rows, key_pad_mask),
      "step_attention takes q (B, H, 1, D), keys and values (B', H, S, D) float32 on the CPU "
      "outside autograd, got q ",
      q.sizes(), ", keys ", keys.sizes(), ", values ", values.sizes());
  const int64_t batch = q.size(0), heads = q.size(1), dim = q.size(3);
  Operands o{};
  o.q = q.data_ptr<float>();
  o.q_row = q.stride(0);
  o.q_head = q.stride(1);
  o.keys = keys.data_ptr<float>();
  o.k_row = keys.stride(0);
  o.k_head = keys.stride(1);
  o.k_position = keys.stride(2);
  o.values = values.data_ptr<float>();
  o.v_row = values.stride(0);
  o.v_head = values.stride(1);
  o.v_position = values.stride(2);
  o.key_rows = checked_rows(key_rows, keys.size(0), "key_rows");
  o.value_rows = checked_rows(value_rows, values.size(0), "value_rows");
  o.mask = MaskView::of(key_pad_mask);
  at::Tensor relative_keys, relative_values;
  if (relative != nullptr) {
    const int64_t tables = 2 * relative->max_distance + 1;
    relative_keys = relative->keys.contiguous();
    relative_values = relative->values.contiguous();
    for (const at::Tensor* table : {&relative_keys, &relative_values}) {
      TORCH_CHECK(relative->max_distance >= 0 && is_float_cpu(*table) && table->dim() == 2 &&
                      table->size(0) == tables && table->size(1) == dim,
                  "step_attention: relative position tables must be (", tables, ", ", dim,
                  ") float32 on the CPU, got ", table->sizes(), " ", table->scalar_type());
    }
    o.relative_keys = relative_keys.data_ptr<float>();
    o.relative_values = relative_values.data_ptr<float>();
    o.max_distance = relative->max_distance;
    o.query_offset = relative->query_offset;
  }
  o.heads = heads;
  o.positions = keys.size(2);
  o.dim = dim;
  at::Tensor out = at::empty({batch, heads, 1, dim}, q.options());
  o.out = out.data_ptr<float>();
  // A parallel region costs a few microseconds: at least ~64k multiply-adds per task.
  const int64_t work = std::max<int64_t>(1, 2 * o.positions * dim);
  at::parallel_for(0, batch * heads, std::max<int64_t>(1, (int64_t{1} << 16) / work),
                   [&](int64_t begin, int64_t end) {
                     Scratch scratch(o);
                     attend_range(o, begin, end, scratch);
                   });
  return out;
}

bool step_context_applies(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& energy,
                          const at::Tensor& memory, const at::Tensor& key_rows,
                          const at::Tensor& memory_rows, const at::Tensor& key_pad_mask) {
  if (!fast_kernels_enabled() || !is_float_cpu(query) || !is_float_cpu(keys) ||
      !is_float_cpu(memory))
    return false;
  if (energy.defined() && !is_float_cpu(energy)) return false;
  if (!without_gradients({&query, &keys, &energy, &memory})) return false;
  if (query.dim() != 2 || keys.dim() != 3 || memory.dim() != 3) return false;
  const int64_t batch = query.size(0);
  if (keys.size(2) != query.size(1) || memory.size(1) != keys.size(1) || keys.size(1) == 0)
    return false;
  if (energy.defined() && (energy.dim() != 1 || energy.size(0) != query.size(1))) return false;
  if (query.stride(1) != 1 || keys.stride(2) != 1 || memory.stride(2) != 1) return false;
  if (!row_index_fits(key_rows, batch) || !row_index_fits(memory_rows, batch)) return false;
  if (!key_rows.defined() && keys.size(0) != batch) return false;
  if (!memory_rows.defined() && memory.size(0) != batch) return false;
  return mask_fits(key_pad_mask, batch, keys.size(1));
}

std::tuple<at::Tensor, at::Tensor> step_context(const at::Tensor& query, const at::Tensor& keys,
                                                const at::Tensor& energy, double scale,
                                                const at::Tensor& memory,
                                                const at::Tensor& key_rows,
                                                const at::Tensor& memory_rows,
                                                const at::Tensor& key_pad_mask) {
  RECORD_FUNCTION("nmtzoo::step_context", std::vector<c10::IValue>({query, keys, memory}));
  TORCH_CHECK(
      step_context_applies(query, keys, energy, memory, key_rows, memory_rows, key_pad_mask),
      "step_context takes query (B, A), keys (B', S, A), memory (B'', S, M) float32 on the CPU "
      "outside autograd, got query ",
      query.sizes(), ", keys ", keys.sizes(), ", memory ", memory.sizes());
  const int64_t batch = query.size(0);
  at::Tensor energy_row = energy.defined() ? energy.contiguous() : at::Tensor();
  ContextOperands o{};
  o.query = query.data_ptr<float>();
  o.query_row = query.stride(0);
  o.keys = keys.data_ptr<float>();
  o.k_row = keys.stride(0);
  o.k_position = keys.stride(1);
  o.energy = energy_row.defined() ? energy_row.data_ptr<float>() : nullptr;
  o.scale = static_cast<float>(scale);
  o.memory = memory.data_ptr<float>();
  o.m_row = memory.stride(0);
  o.m_position = memory.stride(1);
  o.key_rows = checked_rows(key_rows, keys.size(0), "key_rows");
  o.memory_rows = checked_rows(memory_rows, memory.size(0), "memory_rows");
  o.mask = MaskView::of(key_pad_mask);
  o.positions = keys.size(1);
  o.width = keys.size(2);
  o.dim = memory.size(2);
  at::Tensor context = at::empty({batch, o.dim}, query.options());
  at::Tensor weights = at::empty({batch, o.positions}, query.options());
  o.context = context.data_ptr<float>();
  o.weights = weights.data_ptr<float>();
  const int64_t work = std::max<int64_t>(1, o.positions * (o.width + o.dim));
  at::parallel_for(0, batch, std::max<int64_t>(1, (int64_t{1} << 16) / work),
                   [&](int64_t begin, int64_t end) { context_range(o, begin, end); });
  return {context, weights};
}

// The source's node: the gradients of keys and memory, which the steps add into.
class StepSourceSums : public DeferredGradients {
 public:
  StepSourceSums(const at::Tensor& keys, const at::Tensor& memory)
      : DeferredGradients({keys, memory}) {}
  // The buffers, zero before the first step's backward adds into them.
  std::pair<at::Tensor, at::Tensor> buffers(const at::Tensor& keys, const at::Tensor& memory) {
    if (!grad_keys_.defined()) {
      grad_keys_ = at::zeros_like(keys);
      grad_memory_ = at::zeros_like(memory);
    }
    return {grad_keys_, grad_memory_};
  }
  void release_variables() override {
    grad_keys_.reset();
    grad_memory_.reset();
  }

 protected:
  torch::autograd::variable_list sums() override {
    torch::autograd::variable_list result{grad_keys_, grad_memory_};
    release_variables();
    return result;
  }

 private:
  at::Tensor grad_keys_, grad_memory_;
};

namespace {

class TrainingStepContextNode : public torch::autograd::Node {
 public:
  TrainingStepContextNode(const at::Tensor& query, const at::Tensor& energy, double scale,
                          const at::Tensor& keys, const at::Tensor& memory,
                          std::shared_ptr<StepSourceSums> sums)
      : query_(query, false),
        energy_(energy, false),
        scale_(scale),
        keys_(keys),
        memory_(memory),
        sums_(std::move(sums)) {
    add_next_edge(torch::autograd::impl::gradient_edge(query));
    add_next_edge(energy.defined() ? torch::autograd::impl::gradient_edge(energy)
                                   : torch::autograd::Edge());
    add_next_edge(sums_->edge_to(0));
    add_next_edge(sums_->edge_to(1));
  }
  void save_weights(const at::Tensor& weights) {
    weights_ = torch::autograd::SavedVariable(weights, true);
  }
  std::string name() const override { return "nmtzoo::TrainingStepContext"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    refuse_double_backward("nmtzoo::TrainingStepContext");
    torch::autograd::variable_list result(num_outputs());
    if (!grads[0].defined() && !grads[1].defined()) return result;
    const at::Tensor query = query_.unpack(), energy = energy_.unpack(),
                     weights = weights_.unpack(shared_from_this());
    const at::Tensor grad_context = grads[0].defined() ? grads[0].contiguous() : at::Tensor();
    const at::Tensor grad_weights = grads[1].defined() ? grads[1].contiguous() : at::Tensor();
    const int64_t batch = query.size(0), width = query.size(1);
    at::Tensor grad_query = at::empty_like(query);
    auto [grad_keys, grad_memory] = sums_->buffers(keys_, memory_);
    const int64_t threads = at::get_num_threads();
    at::Tensor grad_energy = at::zeros({threads, width}, query.options());

    ContextGradientOperands o{};
    o.query = query.data_ptr<float>();
    o.keys = keys_.data_ptr<float>();
    o.energy = energy.defined() ? energy.data_ptr<float>() : nullptr;
    o.scale = static_cast<float>(scale_);
    o.memory = memory_.data_ptr<float>();
    o.weights = weights.data_ptr<float>();
    o.grad_context = grad_context.defined() ? grad_context.data_ptr<float>() : nullptr;
    o.grad_weights = grad_weights.defined() ? grad_weights.data_ptr<float>() : nullptr;
    o.positions = keys_.size(1);
    o.width = width;
    o.dim = memory_.size(2);
    o.grad_query = grad_query.data_ptr<float>();
    o.grad_keys = grad_keys.data_ptr<float>();
    o.grad_memory = grad_memory.data_ptr<float>();
    float* grad_energy_rows = grad_energy.data_ptr<float>();
    const int64_t work = std::max<int64_t>(1, o.positions * (2 * o.width + o.dim));
    at::parallel_for(
        0, batch, std::max<int64_t>(1, (int64_t{1} << 16) / work), [&](int64_t begin, int64_t end) {
          std::vector<float> grad_scores(static_cast<size_t>(o.positions));
          context_backward_range(o, begin, end, grad_energy_rows + at::get_thread_num() * width,
                                 grad_scores.data());
        });
    result[0] = should_compute_output(0) ? grad_query : at::Tensor();
    if (energy.defined() && should_compute_output(1))
      result[1] = grad_energy.sum(0).view_as(energy);
    return result;
  }
  void release_variables() override {
    query_.reset_data();
    energy_.reset_data();
    weights_.reset_data();
  }

 private:
  torch::autograd::SavedVariable query_, energy_, weights_;
  double scale_;
  at::Tensor keys_, memory_;
  std::shared_ptr<StepSourceSums> sums_;
};

}  // namespace

bool TrainingStepContext::applies(const at::Tensor& keys, const at::Tensor& memory,
                                  const at::Tensor& key_pad_mask) {
  if (!fast_kernels_enabled() || !at::GradMode::is_enabled() || at::autocast::is_cpu_enabled() ||
      !is_float_cpu(keys) || !is_float_cpu(memory)) {
    return false;
  }
  if (keys.dim() != 3 || memory.dim() != 3 || !keys.requires_grad() || !memory.requires_grad())
    return false;
  if (memory.size(0) != keys.size(0) || memory.size(1) != keys.size(1) || keys.size(1) == 0)
    return false;
  return mask_fits(key_pad_mask, keys.size(0), keys.size(1));
}

TrainingStepContext::TrainingStepContext(const at::Tensor& keys, const at::Tensor& memory,
                                         const at::Tensor& key_pad_mask)
    : keys_(keys.contiguous()), memory_(memory.contiguous()), key_pad_mask_(key_pad_mask) {
  TORCH_CHECK(applies(keys, memory, key_pad_mask),
              "TrainingStepContext takes keys (B, S, A) and memory (B, S, M) ",
              "float32 on the CPU requiring gradients, under autograd, got keys ", keys.sizes(),
              " and memory ", memory.sizes());
  sums_ = std::make_shared<StepSourceSums>(keys_, memory_);
}

std::tuple<at::Tensor, at::Tensor> TrainingStepContext::operator()(const at::Tensor& query,
                                                                   const at::Tensor& energy,
                                                                   double scale) const {
  RECORD_FUNCTION("nmtzoo::training_step_context", std::vector<c10::IValue>({query}));
  const at::Tensor rows = query.contiguous();
  at::Tensor context, weights;
  {
    at::AutoGradMode no_grad(false);
    std::tie(context, weights) =
        step_context(rows, keys_, energy, scale, memory_, {}, {}, key_pad_mask_);
  }
  if (!at::GradMode::is_enabled()) return {context, weights};
  auto node = std::make_shared<TrainingStepContextNode>(rows, energy, scale, keys_, memory_, sums_);
  torch::autograd::set_history(context, node);
  torch::autograd::set_history(weights, node);
  node->save_weights(weights);
  return {context, weights};
}

}  // namespace nmtzoo
