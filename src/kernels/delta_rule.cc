// Gated delta rule, recurrent and chunked (architecture.md §3.2, §6.4).
#include "kernels/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernel_table.h"

namespace clover::kernels {

void DeltaRuleRecurrent(const KernelContext& ctx, const DeltaRuleArgs& a) {
  const KernelTable& kt = ctx.table;
  ctx.pool.ParallelFor(a.hv, [&](int64_t h0, int64_t h1) {
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t kh = h % a.hk;
      float* S = a.state + h * a.dk * a.dv;
      for (int64_t t = 0; t < a.n_rows; ++t) {
        kt.delta_step(S, a.dk, a.dv, a.q + t * a.qk_stride + kh * a.dk,
                      a.k + t * a.qk_stride + kh * a.dk, a.v + t * a.v_stride + h * a.dv,
                      std::exp(a.g[t * a.gate_stride + h]), a.beta[t * a.gate_stride + h],
                      a.out + t * a.out_stride + h * a.dv);
      }
    }
  });
}

namespace {

// Rows of a chunk's forward substitution solved by row axpys before the rest of the chunk takes
// their contribution in one product.
constexpr int64_t kSolveBlock = 16;

}  // namespace

// Per chunk with incoming state S and gamma_t = sum_{s<=t} g_s (architecture.md §3.2):
//   delta = (I + A)^-1 diag(beta) (V - diag(e^gamma) K S),  A_ts = beta_t e^(gamma_t-gamma_s)
//   k_t.k_s (s < t), solved by forward substitution; O_t = e^gamma_t S^T q_t + sum_{s<=t}
//   e^(gamma_t-gamma_s) (q_t.k_s) delta_s; S  <- e^gamma_C S + sum_s e^(gamma_C-gamma_s) k_s
//   delta_s^T.
// Each term is a matrix product on the table's small GEMM (K S, K K^T, Q S, Q K^T, P delta,
// K^T delta, and the substitution's block updates): one call per product instead of a dot or
// an axpy per pair of rows, whose calls cost more than their 128 multiply-adds.
void DeltaRuleChunked(const KernelContext& ctx, const DeltaRuleArgs& a, int chunk) {
  const KernelTable& kt = ctx.table;
  const int64_t C = chunk, dk = a.dk, dv = a.dv;
  ctx.pool.ParallelFor(a.hv, [&](int64_t h0, int64_t h1) {
    std::vector<double> gamma(C);
    // k_c^T (dk x C); per row pair the decays e^(gamma_t - gamma_s), then -A, then P.
    std::vector<float> k_t(dk * C), decay(C * C), coef(C * C), delta(C * dv);
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t kh = h % a.hk;
      float* S = a.state + h * dk * dv;
      for (int64_t c0 = 0; c0 < a.n_rows; c0 += C) {
        const int64_t c = std::min(C, a.n_rows - c0);
        const float* q = a.q + c0 * a.qk_stride + kh * dk;
        const float* k = a.k + c0 * a.qk_stride + kh * dk;
        for (int64_t t = 0; t < c; ++t)
          for (int64_t i = 0; i < dk; ++i) k_t[i * C + t] = k[t * a.qk_stride + i];
        double cum = 0.0;
        for (int64_t t = 0; t < c; ++t) {
          cum += a.g[(c0 + t) * a.gate_stride + h];
          gamma[t] = cum;
          for (int64_t s = 0; s <= t; ++s)
            decay[t * C + s] = static_cast<float>(std::exp(gamma[t] - gamma[s]));
        }
        // delta_t starts as beta_t (v_t - e^gamma_t S^T k_t).
        kt.gemm(k, a.qk_stride, S, dv, c, dk, dv, delta.data(), dv, false);
        for (int64_t t = 0; t < c; ++t) {
          float* d = delta.data() + t * dv;
          const float eg = static_cast<float>(std::exp(gamma[t]));
          const float beta = a.beta[(c0 + t) * a.gate_stride + h];
          const float* v = a.v + (c0 + t) * a.v_stride + h * dv;
          for (int64_t j = 0; j < dv; ++j) d[j] = beta * (v[j] - eg * d[j]);
        }
        // Forward substitution through the unit lower-triangular (I + A), kSolveBlock rows at a
        // time: inside a block row by row, then the block's rows into every later row at once.
        kt.gemm(k, a.qk_stride, k_t.data(), C, c, dk, c, coef.data(), C, false);
        for (int64_t t = 0; t < c; ++t) {
          const float beta = a.beta[(c0 + t) * a.gate_stride + h];
          for (int64_t s = 0; s < t; ++s) coef[t * C + s] *= -beta * decay[t * C + s];
        }
        for (int64_t b0 = 0; b0 < c; b0 += kSolveBlock) {
          const int64_t b1 = std::min(c, b0 + kSolveBlock);
          for (int64_t t = b0 + 1; t < b1; ++t)
            for (int64_t s = b0; s < t; ++s)
              kt.axpy(coef[t * C + s], delta.data() + s * dv, delta.data() + t * dv, dv);
          if (b1 < c)
            kt.gemm(coef.data() + b1 * C + b0, C, delta.data() + b0 * dv, dv, c - b1, b1 - b0, dv,
                    delta.data() + b1 * dv, dv, true);
        }
        // Outputs read the incoming state, so they come before the state update.
        float* out = a.out + c0 * a.out_stride + h * dv;
        kt.gemm(q, a.qk_stride, S, dv, c, dk, dv, out, a.out_stride, false);
        for (int64_t t = 0; t < c; ++t)
          kt.scale(static_cast<float>(std::exp(gamma[t])), out + t * a.out_stride, dv);
        float* p = coef.data();  // -A is spent
        kt.gemm(q, a.qk_stride, k_t.data(), C, c, dk, c, p, C, false);
        for (int64_t t = 0; t < c; ++t)
          for (int64_t s = 0; s < c; ++s)
            p[t * C + s] = s <= t ? p[t * C + s] * decay[t * C + s] : 0.0f;
        kt.gemm(p, C, delta.data(), dv, c, c, dv, out, a.out_stride, true);
        // S <- e^gamma_C S + K^T (w delta) with w_s = e^(gamma_C - gamma_s).
        for (int64_t s = 0; s < c; ++s) kt.scale(decay[(c - 1) * C + s], delta.data() + s * dv, dv);
        kt.scale(static_cast<float>(std::exp(gamma[c - 1])), S, dk * dv);
        kt.gemm(k_t.data(), C, delta.data(), dv, dk, c, dv, S, dv, true);
      }
    }
  });
}

}  // namespace clover::kernels
