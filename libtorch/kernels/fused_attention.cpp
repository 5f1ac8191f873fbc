// SPDX-License-Identifier: MIT
#include "libtorch/kernels/fused_attention.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <vector>

#include "libtorch/kernels/counter_rng.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/mask_view.h"
#include "libtorch/kernels/onednn_matmul.h"
#include "libtorch/kernels/small_sgemm.h"
#include "libtorch/kernels/vector_clones.h"
#include "libtorch/kernels/vector_math.h"

namespace nmtzoo {
namespace {

// The operands of one call, as raw pointers: q of sentence b, head h at position t is
// q + (b T + t) q_row + h D; k and v likewise with kv_row over S positions.
//
// Relative positions: a head's table terms are products of all its B T query rows (rows at a
// uniform stride q_row) with the shared (2K + 1) x D tables, so they run as H large products per
// call, not B H small ones; the per-row matrices of the tables ("table rows", (H, B, T, 2K + 1))
// go between those products and the pairs' loop.
struct Operands {
  int64_t batch, heads, queries, keys, dim, tables, max_distance;
  float scale;
  const float* q;
  const float* k;
  const float* v;
  int64_t q_row, kv_row;
  MaskView attn_mask, pad_mask;
  const float* relative_keys;  // null: no relative positions
  const float* relative_values;
  bool dropout;
  // Training (a graph recorded): the pairs' products by small_sgemm. Otherwise (validation,
  // scoring, the encoder in decoding) by oneDNN, so outputs stay those of the builds before it.
  bool small_products;
  uint64_t seed;
  uint32_t keep_threshold;
  float keep_scale;
  float* weights;             // (B, H, T, S): the softmax, before dropout
  float* table_scores;        // table rows: forward, q . relative_keys; backward, their gradient
  float* table_weights;       // table rows: the (dropped) weights summed per table row
  float* grad_table_weights;  // backward: their gradient
  int64_t width() const { return heads * dim; }
  // Offset of the table rows of (sentence b, head h).
  int64_t table_rows(int64_t b, int64_t h) const { return (h * batch + b) * queries * tables; }
  // Offset of a head's table rows, a (B T) x (2K + 1) matrix.
  int64_t head_table_rows(int64_t h) const { return h * batch * queries * tables; }
};

// The products, timed: what they add to matmul_seconds().
struct ProductClock {
  double seconds = 0;
  void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc) {
    const auto start = std::chrono::steady_clock::now();
    onednn_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // A (sentence, head) pair's product (Operands::small_products), C overwritten.
  void pair_product(bool small, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                    int64_t ldc) {
    if (!small) return gemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc);
    const auto start = std::chrono::steady_clock::now();
    small_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, c, ldc, transposed);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::vector<float> transposed;  // small_sgemm's copy of a transposed right operand
};

// Per-thread buffers: one head's T x S matrices.
struct Scratch {
  explicit Scratch(const Operands& o)
      : multipliers(static_cast<size_t>(o.queries * o.keys)),
        dropped(multipliers.size()),
        grad_scores(multipliers.size()) {}
  std::vector<float> multipliers, dropped, grad_scores;
};

// The pair's weights after dropout, into scratch.dropped, and their multipliers (keep_scale or
// 0) into scratch.multipliers: chunked_dropout's masks (libtorch/kernels/dropout.cpp), as element f
// of the (B, H, T, S) weights takes the low or high 32 bits of counter_rng::pair_bits.
inline const float* drop(const Operands& o, int64_t pair, const float* weights, Scratch& scratch) {
  const int64_t n = o.queries * o.keys, first = pair * n;
  float* multipliers = scratch.multipliers.data();
  float* dropped = scratch.dropped.data();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t f = first + e;
    const uint64_t bits = counter_rng::pair_bits(o.seed, f & ~int64_t{1}) >> ((f & 1) * 32);
    multipliers[e] =
        counter_rng::kept(static_cast<uint32_t>(bits), o.keep_threshold) ? o.keep_scale : 0.0f;
  }
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) dropped[e] = weights[e] * multipliers[e];
  return dropped;
}

// The keys j of query i fall in three runs: j - i <= -K (table 0), |j - i| < K (table j - i + K,
// one key each) and j - i >= K (table 2K). In [begin, end) of row i, the middle run.
struct MiddleRun {
  int64_t begin, end;
  MiddleRun(const Operands& o, int64_t i)
      : begin(std::clamp(i - o.max_distance + 1, int64_t{0}, o.keys)),
        end(std::clamp(i + o.max_distance, begin, o.keys)) {}
};

// square (T x S) += the table rows' entries, square[i, j] += rows[i, c(i, j)].
NMTZOO_VECTOR_CLONES
void add_table_entries(const Operands& o, const float* rows, float* square) {
  const int64_t k = o.max_distance;
  for (int64_t i = 0; i < o.queries; ++i) {
    const float* row_tables = rows + i * o.tables;
    float* row = square + i * o.keys;
    const MiddleRun middle(o, i);
    const float first = row_tables[0], last = row_tables[2 * k];
    for (int64_t j = 0; j < middle.begin; ++j) row[j] += first;
#pragma omp simd
    for (int64_t j = middle.begin; j < middle.end; ++j) row[j] += row_tables[j - i + k];
    for (int64_t j = middle.end; j < o.keys; ++j) row[j] += last;
  }
}

// rows[i, c] = sum of square[i, j] over the j with c(i, j) = c, j ascending.
NMTZOO_VECTOR_CLONES
void sum_into_table_rows(const Operands& o, const float* square, float* rows) {
  const int64_t k = o.max_distance;
  std::fill(rows, rows + o.queries * o.tables, 0.0f);
  for (int64_t i = 0; i < o.queries; ++i) {
    float* row_tables = rows + i * o.tables;
    const float* row = square + i * o.keys;
    const MiddleRun middle(o, i);
    for (int64_t j = 0; j < middle.begin; ++j) row_tables[0] += row[j];
#pragma omp simd
    for (int64_t j = middle.begin; j < middle.end; ++j) row_tables[j - i + k] = row[j];
    for (int64_t j = middle.end; j < o.keys; ++j) row_tables[2 * k] += row[j];
  }
}

NMTZOO_VECTOR_CLONES
void forward_pairs(const Operands& o, float* out, int64_t begin, int64_t end, Scratch& scratch,
                   ProductClock& clock) {
  const int64_t t_size = o.queries, s_size = o.keys, d = o.dim, e = o.width();
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (int64_t pair = begin; pair < end; ++pair) {
    const int64_t b = pair / o.heads, h = pair % o.heads;
    const float* q = o.q + b * t_size * o.q_row + h * d;
    const float* k = o.k + b * s_size * o.kv_row + h * d;
    const float* v = o.v + b * s_size * o.kv_row + h * d;
    float* p = o.weights + pair * t_size * s_size;
    clock.pair_product(o.small_products, false, true, t_size, s_size, d, o.scale, q, o.q_row, k,
                       o.kv_row, p, s_size);
    if (o.tables > 0) add_table_entries(o, o.table_scores + o.table_rows(b, h), p);
    for (int64_t i = 0; i < t_size; ++i) {
      float* row = p + i * s_size;
      for (int64_t j = 0; j < s_size; ++j) {
        if (o.attn_mask.forbids(i, j) || o.pad_mask.forbids(b, j)) row[j] = kMinusInf;
      }
      float max = kMinusInf;
      for (int64_t j = 0; j < s_size; ++j) max = row[j] > max ? row[j] : max;
      if (max == kMinusInf) {
        std::fill(row, row + s_size, 0.0f);
        continue;
      }
      const float inverse = 1.0f / exp_shifted(row, max, s_size, row);
#pragma omp simd
      for (int64_t j = 0; j < s_size; ++j) row[j] *= inverse;
    }
    const float* used = o.dropout ? drop(o, pair, p, scratch) : p;
    clock.pair_product(o.small_products, false, false, t_size, d, s_size, 1.0f, used, s_size, v,
                       o.kv_row, out + b * t_size * e + h * d, e);
    if (o.tables > 0) sum_into_table_rows(o, used, o.table_weights + o.table_rows(b, h));
  }
}

// Where backward_pairs writes the gradients: rows laid out as the operands (q_row, kv_row).
struct Gradients {
  const float* out;  // (B, T, E)
  float* q;
  float* k;
  float* v;
};

NMTZOO_VECTOR_CLONES
void backward_pairs(const Operands& o, const Gradients& g, int64_t begin, int64_t end,
                    Scratch& scratch, ProductClock& clock) {
  const int64_t t_size = o.queries, s_size = o.keys, d = o.dim, e = o.width();
  float* ds = scratch.grad_scores.data();
  const float* multipliers = scratch.multipliers.data();
  for (int64_t pair = begin; pair < end; ++pair) {
    const int64_t b = pair / o.heads, h = pair % o.heads;
    const int64_t q_offset = b * t_size * o.q_row + h * d,
                  kv_offset = b * s_size * o.kv_row + h * d;
    const float* q = o.q + q_offset;
    const float* k = o.k + kv_offset;
    const float* v = o.v + kv_offset;
    const float* p = o.weights + pair * t_size * s_size;
    const float* grad_out = g.out + b * t_size * e + h * d;
    const float* used = o.dropout ? drop(o, pair, p, scratch) : p;
    clock.pair_product(o.small_products, true, false, s_size, d, t_size, 1.0f, used, s_size,
                       grad_out, e, g.v + kv_offset, o.kv_row);
    clock.pair_product(o.small_products, false, true, t_size, s_size, d, 1.0f, grad_out, e, v,
                       o.kv_row, ds, s_size);
    if (o.tables > 0) add_table_entries(o, o.grad_table_weights + o.table_rows(b, h), ds);
    if (o.dropout) {
#pragma omp simd
      for (int64_t f = 0; f < t_size * s_size; ++f) ds[f] *= multipliers[f];
    }
    for (int64_t i = 0; i < t_size; ++i) {
      const float* p_row = p + i * s_size;
      float* row = ds + i * s_size;
      float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < s_size; ++j) dot += p_row[j] * row[j];
#pragma omp simd
      for (int64_t j = 0; j < s_size; ++j) row[j] = p_row[j] * (row[j] - dot);
    }
    clock.pair_product(o.small_products, false, false, t_size, d, s_size, o.scale, ds, s_size, k,
                       o.kv_row, g.q + q_offset, o.q_row);
    clock.pair_product(o.small_products, true, false, s_size, d, t_size, o.scale, ds, s_size, q,
                       o.q_row, g.k + kv_offset, o.kv_row);
    if (o.tables > 0) sum_into_table_rows(o, ds, o.table_scores + o.table_rows(b, h));
  }
}

// Runs pairs(begin, end, scratch, clock) over every (sentence, head) in parallel, at least ~64k
// multiply-adds per task (a parallel region costs a few microseconds), and adds the products'
// time to matmul_seconds() as wall time: the tasks' sum over the threads that ran them.
template <class Pairs>
void for_each_pair(const Operands& o, Pairs&& pairs) {
  const int64_t work = std::max<int64_t>(1, 2 * o.queries * o.keys * o.dim);
  std::vector<double> seconds(static_cast<size_t>(at::get_num_threads()), 0.0);
  at::parallel_for(0, o.batch * o.heads, std::max<int64_t>(1, (int64_t{1} << 16) / work),
                   [&](int64_t begin, int64_t end) {
                     Scratch scratch(o);
                     ProductClock clock;
                     pairs(begin, end, scratch, clock);
                     seconds[static_cast<size_t>(at::get_thread_num())] += clock.seconds;
                   });
  double total = 0;
  int64_t busy = 0;
  for (double thread_seconds : seconds) {
    total += thread_seconds;
    busy += thread_seconds > 0 ? 1 : 0;
  }
  if (busy > 0) add_matmul_seconds(total / static_cast<double>(busy));
}

// The relative tables' products, one per head over its B T rows, each threaded by oneDNN.
struct TableProducts {
  explicit TableProducts(const Operands& operands) : o(operands) {}
  TableProducts(const TableProducts&) = delete;
  TableProducts& operator=(const TableProducts&) = delete;
  ~TableProducts() { add_matmul_seconds(clock.seconds); }

  const Operands& o;
  ProductClock clock;
  int64_t rows() const { return o.batch * o.queries; }

  // Forward, before the pairs: table_scores = scale q relative_keys^T.
  void score() {
    for (int64_t h = 0; h < o.heads; ++h) {
      clock.gemm(false, true, rows(), o.tables, o.dim, o.scale, o.q + h * o.dim, o.q_row,
                 o.relative_keys, o.dim, 0.0f, o.table_scores + o.head_table_rows(h), o.tables);
    }
  }
  // Forward, after the pairs: out += table_weights relative_values.
  void add_values(float* out) {
    for (int64_t h = 0; h < o.heads; ++h) {
      clock.gemm(false, false, rows(), o.dim, o.tables, 1.0f,
                 o.table_weights + o.head_table_rows(h), o.tables, o.relative_values, o.dim, 1.0f,
                 out + h * o.dim, o.width());
    }
  }
  // Backward, before the pairs: the table weights' gradient, and relative_values' into grad_values.
  void values_backward(const float* grad_out, float* grad_values) {
    for (int64_t h = 0; h < o.heads; ++h) {
      clock.gemm(false, true, rows(), o.tables, o.dim, 1.0f, grad_out + h * o.dim, o.width(),
                 o.relative_values, o.dim, 0.0f, o.grad_table_weights + o.head_table_rows(h),
                 o.tables);
      clock.gemm(true, false, o.tables, o.dim, rows(), 1.0f, o.table_weights + o.head_table_rows(h),
                 o.tables, grad_out + h * o.dim, o.width(), h == 0 ? 0.0f : 1.0f, grad_values,
                 o.dim);
    }
  }
  // Backward, after the pairs (table_scores holding their gradient): q's share into grad_q, and
  // relative_keys' gradient into grad_keys.
  void keys_backward(float* grad_q, float* grad_keys) {
    for (int64_t h = 0; h < o.heads; ++h) {
      clock.gemm(false, false, rows(), o.dim, o.tables, o.scale,
                 o.table_scores + o.head_table_rows(h), o.tables, o.relative_keys, o.dim, 1.0f,
                 grad_q + h * o.dim, o.q_row);
      clock.gemm(true, false, o.tables, o.dim, rows(), o.scale,
                 o.table_scores + o.head_table_rows(h), o.tables, o.q + h * o.dim, o.q_row,
                 h == 0 ? 0.0f : 1.0f, grad_keys, o.dim);
    }
  }
};

Operands prepare(const at::Tensor& q_source, const at::Tensor& kv_source,
                 const FusedAttentionOptions& options, bool draw_dropout, uint64_t seed) {
  const bool self = !kv_source.defined();
  const at::Tensor& kv = self ? q_source : kv_source;
  const int64_t width = self ? q_source.size(2) / 3 : q_source.size(2);
  Operands o{};
  o.batch = q_source.size(0);
  o.heads = options.heads;
  o.queries = q_source.size(1);
  o.keys = kv.size(1);
  o.dim = width / options.heads;
  o.max_distance = options.max_distance;
  o.tables = options.relative_keys.defined() ? 2 * options.max_distance + 1 : 0;
  o.scale = static_cast<float>(options.scale);
  o.q = q_source.data_ptr<float>();
  o.q_row = q_source.size(2);
  o.k = kv.data_ptr<float>() + (self ? width : 0);
  o.v = o.k + width;
  o.kv_row = kv.size(2);
  o.attn_mask = MaskView::of(options.attn_mask);
  o.pad_mask = MaskView::of(options.key_pad_mask);
  o.relative_keys = o.tables > 0 ? options.relative_keys.data_ptr<float>() : nullptr;
  o.relative_values = o.tables > 0 ? options.relative_values.data_ptr<float>() : nullptr;
  o.dropout = draw_dropout;
  o.seed = seed;
  o.keep_threshold = counter_rng::keep_threshold(options.dropout);
  o.keep_scale = static_cast<float>(1.0 / (1.0 - options.dropout));
  return o;
}

// LibTorch 1.13's custom functions take no undefined tensors: an absent operand travels as an
// empty one, and defined() below turns it back.
at::Tensor or_empty(const at::Tensor& t) { return t.defined() ? t : at::empty({0}); }
at::Tensor defined(const at::Tensor& t) { return t.numel() > 0 ? t : at::Tensor(); }

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class FusedAttention : public torch::autograd::Function<FusedAttention> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q_source,
                            const at::Tensor& kv_source, const at::Tensor& relative_keys,
                            const at::Tensor& relative_values, const at::Tensor& attn_mask,
                            const at::Tensor& key_pad_mask, int64_t heads, double scale,
                            double dropout, int64_t max_distance, bool training) {
    FusedAttentionOptions options{heads,
                                  scale,
                                  dropout,
                                  defined(attn_mask),
                                  defined(key_pad_mask),
                                  defined(relative_keys),
                                  defined(relative_values),
                                  max_distance};
    const bool drops = dropout > 0;
    const uint64_t seed = drops ? counter_rng::draw_seed() : 0;
    Operands o = prepare(q_source, defined(kv_source), options, drops, seed);
    o.small_products = training;
    at::Tensor weights = at::empty({o.batch, o.heads, o.queries, o.keys}, q_source.options());
    o.weights = weights.data_ptr<float>();
    at::Tensor out = at::empty({o.batch, o.queries, o.width()}, q_source.options());
    at::Tensor table_scores, table_weights = or_empty({});
    if (o.tables > 0) {
      table_scores = at::empty({o.heads, o.batch, o.queries, o.tables}, q_source.options());
      table_weights = at::empty_like(table_scores);
      o.table_scores = table_scores.data_ptr<float>();
      o.table_weights = table_weights.data_ptr<float>();
      TableProducts(o).score();
    }
    for_each_pair(o, [&](int64_t begin, int64_t end, Scratch& scratch, ProductClock& clock) {
      forward_pairs(o, out.data_ptr<float>(), begin, end, scratch, clock);
    });
    if (o.tables > 0) TableProducts(o).add_values(out.data_ptr<float>());
    ctx->save_for_backward({q_source, kv_source, relative_keys, relative_values, attn_mask,
                            key_pad_mask, weights, table_weights});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["dropout"] = dropout;
    ctx->saved_data["max_distance"] = max_distance;
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& q_source = saved[0];
    const at::Tensor kv_source = defined(saved[1]);
    const at::Tensor relative_keys = defined(saved[2]);
    const at::Tensor relative_values = defined(saved[3]);
    const double dropout = ctx->saved_data["dropout"].toDouble();
    FusedAttentionOptions options{ctx->saved_data["heads"].toInt(),
                                  ctx->saved_data["scale"].toDouble(),
                                  dropout,
                                  defined(saved[4]),
                                  defined(saved[5]),
                                  relative_keys,
                                  relative_values,
                                  ctx->saved_data["max_distance"].toInt()};
    Operands o = prepare(q_source, kv_source, options, dropout > 0,
                         static_cast<uint64_t>(ctx->saved_data["seed"].toInt()));
    o.weights = saved[6].data_ptr<float>();
    o.small_products = true;
    const at::Tensor grad_out = grads[0].contiguous();
    at::Tensor grad_q_source = at::empty_like(q_source);
    at::Tensor grad_kv_source = kv_source.defined() ? at::empty_like(kv_source) : at::Tensor();
    Gradients g{};
    g.out = grad_out.data_ptr<float>();
    g.q = grad_q_source.data_ptr<float>();
    g.k = kv_source.defined() ? grad_kv_source.data_ptr<float>() : g.q + o.width();
    g.v = g.k + o.width();
    at::Tensor grad_table_scores, grad_table_weights, grad_relative_keys, grad_relative_values;
    if (o.tables > 0) {
      o.table_weights = saved[7].data_ptr<float>();
      grad_table_scores = at::empty_like(saved[7]);
      grad_table_weights = at::empty_like(saved[7]);
      o.table_scores = grad_table_scores.data_ptr<float>();
      o.grad_table_weights = grad_table_weights.data_ptr<float>();
      grad_relative_keys = at::empty_like(relative_keys);
      grad_relative_values = at::empty_like(relative_values);
      TableProducts(o).values_backward(g.out, grad_relative_values.data_ptr<float>());
    }
    for_each_pair(o, [&](int64_t begin, int64_t end, Scratch& scratch, ProductClock& clock) {
      backward_pairs(o, g, begin, end, scratch, clock);
    });
    if (o.tables > 0) TableProducts(o).keys_backward(g.q, grad_relative_keys.data_ptr<float>());
    return {grad_q_source, grad_kv_source, grad_relative_keys, grad_relative_values,
            at::Tensor(),  at::Tensor(),   at::Tensor(),       at::Tensor(),
            at::Tensor(),  at::Tensor(),   at::Tensor()};
  }
};

std::atomic<int64_t> calls{0};

bool is_float_cpu_contiguous(const at::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat &&
         t.layout() == at::kStrided && t.is_contiguous();
}

bool bool_mask_of(const at::Tensor& mask, int64_t rows, int64_t columns) {
  return !mask.defined() || (mask.device().is_cpu() && mask.scalar_type() == at::kBool &&
                             mask.dim() == 2 && mask.size(0) == rows && mask.size(1) == columns);
}

// Whether autograd records this call (Function::apply runs forward() without grad mode).
bool records_graph(const at::Tensor& q_source, const at::Tensor& kv_source,
                   const FusedAttentionOptions& options) {
  if (!at::GradMode::is_enabled()) return false;
  for (const at::Tensor* t :
       {&q_source, &kv_source, &options.relative_keys, &options.relative_values}) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

}  // namespace

bool fused_attention_applies(const at::Tensor& q_source, const at::Tensor& kv_source,
                             const FusedAttentionOptions& options) {
  if (!fast_kernels_enabled() || !is_float_cpu_contiguous(q_source) || q_source.dim() != 3)
    return false;
  if (options.heads <= 0 || !(options.dropout >= 0 && options.dropout < 1)) return false;
  const bool self = !kv_source.defined();
  const int64_t width = self ? q_source.size(2) / 3 : q_source.size(2);
  if (width == 0 || width % options.heads != 0 || (self && q_source.size(2) != 3 * width))
    return false;
  if (!self && (!is_float_cpu_contiguous(kv_source) || kv_source.dim() != 3 ||
                kv_source.size(0) != q_source.size(0) || kv_source.size(2) != 2 * width)) {
    return false;
  }
  const int64_t queries = q_source.size(1), keys = self ? queries : kv_source.size(1);
  if (q_source.size(0) == 0 || queries == 0 || keys == 0) return false;
  if (options.relative_keys.defined() != options.relative_values.defined()) return false;
  if (options.relative_keys.defined()) {
    const int64_t tables = 2 * options.max_distance + 1;
    for (const at::Tensor* table : {&options.relative_keys, &options.relative_values}) {
      if (options.max_distance < 0 || !is_float_cpu_contiguous(*table) || table->dim() != 2 ||
          table->size(0) != tables || table->size(1) != width / options.heads) {
        return false;
      }
    }
  }
  return bool_mask_of(options.attn_mask, queries, keys) &&
         bool_mask_of(options.key_pad_mask, q_source.size(0), keys);
}

at::Tensor fused_attention(const at::Tensor& q_source, const at::Tensor& kv_source,
                           const FusedAttentionOptions& options) {
  RECORD_FUNCTION("nmtzoo::fused_attention", std::vector<c10::IValue>({q_source}));
  calls.fetch_add(1, std::memory_order_relaxed);
  TORCH_CHECK(fused_attention_applies(q_source, kv_source, options),
              "fused_attention takes contiguous float32 CPU projections, q_source (B, T, 3E) alone "
              "or (B, T, E) "
              "with kv_source (B, S, 2E), got ",
              q_source.sizes(), " and ",
              kv_source.defined() ? kv_source.sizes() : at::IntArrayRef{});
  return FusedAttention::apply(q_source, or_empty(kv_source), or_empty(options.relative_keys),
                               or_empty(options.relative_values), or_empty(options.attn_mask),
                               or_empty(options.key_pad_mask), options.heads, options.scale,
                               options.dropout, options.max_distance,
                               records_graph(q_source, kv_source, options));
}

int64_t fused_attention_calls() { return calls.load(); }

}  // namespace nmtzoo
