// Gated delta rule, recurrent and chunked (architecture.md §3.2, §6.4).
#include "kernels/delta_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace clover::kernels {

void DeltaRuleRecurrent(const KernelContext& ctx, const DeltaRuleArgs& a) {
  const KernelTable& kt = ctx.table;
  ctx.pool.ParallelFor(a.hv, [&](int64_t h0, int64_t h1) {
    std::vector<float> u(a.dv);
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t kh = h % a.hk;
      float* S = a.state + h * a.dk * a.dv;
      for (int64_t t = 0; t < a.n_rows; ++t) {
        const float* q = a.q + t * a.qk_stride + kh * a.dk;
        const float* k = a.k + t * a.qk_stride + kh * a.dk;
        const float* v = a.v + t * a.v_stride + h * a.dv;
        const float decay = std::exp(a.g[t * a.gate_stride + h]);
        const float beta = a.beta[t * a.gate_stride + h];
        // Two passes over S instead of four: read S^T k on the undecayed state (scaled after),
        // then decay, write and read out each row while it is in L1.
        std::fill(u.begin(), u.end(), 0.0f);
        for (int64_t i = 0; i < a.dk; ++i) kt.axpy(k[i], S + i * a.dv, u.data(), a.dv);
        for (int64_t j = 0; j < a.dv; ++j) u[j] = beta * (v[j] - decay * u[j]);  // u = delta
        float* o = a.out + t * a.out_stride + h * a.dv;
        std::fill(o, o + a.dv, 0.0f);
        for (int64_t i = 0; i < a.dk; ++i) {
          float* row = S + i * a.dv;
          kt.scale(decay, row, a.dv);
          kt.axpy(k[i], u.data(), row, a.dv);
          kt.axpy(q[i], row, o, a.dv);
        }
      }
    }
  });
}

// Per chunk with incoming state S and gamma_t = sum_{s<=t} g_s (architecture.md §3.2):
//   delta = (I + A)^-1 diag(beta) (V - diag(e^gamma) K S),  A_ts = beta_t e^(gamma_t-gamma_s)
//   k_t.k_s (s < t), solved by forward substitution; O_t = e^gamma_t S^T q_t + sum_{s<=t}
//   e^(gamma_t-gamma_s) (q_t.k_s) delta_s; S  <- e^gamma_C S + sum_s e^(gamma_C-gamma_s) k_s
//   delta_s^T.
void DeltaRuleChunked(const KernelContext& ctx, const DeltaRuleArgs& a, int chunk) {
  const KernelTable& kt = ctx.table;
  const int64_t C = chunk;
  ctx.pool.ParallelFor(a.hv, [&](int64_t h0, int64_t h1) {
    std::vector<double> gamma(C);
    std::vector<float> delta(C * a.dv);
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t kh = h % a.hk;
      float* S = a.state + h * a.dk * a.dv;
      for (int64_t c0 = 0; c0 < a.n_rows; c0 += C) {
        const int64_t c = std::min(C, a.n_rows - c0);
        auto q_row = [&](int64_t t) { return a.q + (c0 + t) * a.qk_stride + kh * a.dk; };
        auto k_row = [&](int64_t t) { return a.k + (c0 + t) * a.qk_stride + kh * a.dk; };
        double cum = 0.0;
        for (int64_t t = 0; t < c; ++t) {
          cum += a.g[(c0 + t) * a.gate_stride + h];
          gamma[t] = cum;
        }
        // delta_t starts as beta_t (v_t - e^gamma_t S^T k_t).
        for (int64_t t = 0; t < c; ++t) {
          float* d = delta.data() + t * a.dv;
          std::fill(d, d + a.dv, 0.0f);
          const float* k = k_row(t);
          for (int64_t i = 0; i < a.dk; ++i) kt.axpy(k[i], S + i * a.dv, d, a.dv);
          const float eg = static_cast<float>(std::exp(gamma[t]));
          const float beta = a.beta[(c0 + t) * a.gate_stride + h];
          const float* v = a.v + (c0 + t) * a.v_stride + h * a.dv;
          for (int64_t j = 0; j < a.dv; ++j) d[j] = beta * (v[j] - eg * d[j]);
        }
        // Forward substitution through the unit lower-triangular (I + A).
        for (int64_t t = 1; t < c; ++t) {
          const float beta = a.beta[(c0 + t) * a.gate_stride + h];
          float* dt = delta.data() + t * a.dv;
          for (int64_t s = 0; s < t; ++s) {
            const float decay = static_cast<float>(std::exp(gamma[t] - gamma[s]));
            const float coef = beta * decay * kt.dot(k_row(t), k_row(s), a.dk);
            kt.axpy(-coef, delta.data() + s * a.dv, dt, a.dv);
          }
        }
        // Outputs read the incoming state, so they come before the state update.
        for (int64_t t = 0; t < c; ++t) {
          float* o = a.out + (c0 + t) * a.out_stride + h * a.dv;
          std::fill(o, o + a.dv, 0.0f);
          const float* q = q_row(t);
          for (int64_t i = 0; i < a.dk; ++i) kt.axpy(q[i], S + i * a.dv, o, a.dv);
          kt.scale(static_cast<float>(std::exp(gamma[t])), o, a.dv);
          for (int64_t s = 0; s <= t; ++s) {
            const float decay = static_cast<float>(std::exp(gamma[t] - gamma[s]));
            kt.axpy(decay * kt.dot(q, k_row(s), a.dk), delta.data() + s * a.dv, o, a.dv);
          }
        }
        const double g_last = gamma[c - 1];
        kt.scale(static_cast<float>(std::exp(g_last)), S, a.dk * a.dv);
        for (int64_t s = 0; s < c; ++s) {
          const float decay = static_cast<float>(std::exp(g_last - gamma[s]));
          const float* k = k_row(s);
          const float* d = delta.data() + s * a.dv;
          for (int64_t i = 0; i < a.dk; ++i) kt.axpy(decay * k[i], d, S + i * a.dv, a.dv);
        }
      }
    }
  });
}

}  // namespace clover::kernels
