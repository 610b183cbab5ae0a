// MoE layer: route every row, gather rows per expert, SwiGLU expert matmuls, weighted scatter.
#include "model/moe_layer.h"

#include <algorithm>
#include <numeric>
#include <span>

#include "core/check.h"
#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/softmax.h"
#include "model/coreset.h"

namespace clover::model {
namespace {

// Does act[i] = SiLU(gate[i]) * up[i].
void SwiGlu(const float* gate, const float* up, int64_t n, float* act) {
  for (int64_t i = 0; i < n; ++i) act[i] = kernels::ref::Silu(gate[i]) * up[i];
}

}  // namespace

RowRoute RouteTopK(const float* logits, int n_experts, int k) {
  std::vector<float> p(logits, logits + n_experts);
  kernels::ref::Softmax(p.data(), n_experts);
  std::vector<int> order(n_experts);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  RowRoute route;
  route.experts.assign(order.begin(), order.begin() + k);
  double sum = 0.0;
  for (int e : route.experts) sum += p[e];
  for (int e : route.experts) route.weights.push_back(static_cast<float>(p[e] / sum));
  return route;
}

void MoeForward(const ForwardContext& fc, int layer, const MoeWeights& w, const float* x,
                float* out, ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const kernels::KernelContext& kc = fc.kc;
  const int64_t n = fc.n_rows;
  const int64_t hidden = cfg.hidden;
  const int64_t ffn = cfg.expert_ffn;
  const int n_experts = cfg.n_experts;

  float* logits = scratch.Get(ForwardScratch::kRouter, n * n_experts);
  kernels::MatMul(kc, x, n, hidden, w.router, logits, n_experts);
  // Per expert: the rows routed to it and their weights, rows ascending.
  std::vector<std::vector<std::pair<int64_t, float>>> assigned(n_experts);
  // Rows outside preview groups (append groups; every row when no groups are given): plain
  // top-k. Preview groups (after the appends in a pass): a block coreset per group
  // (clover-spec.md §4 Q5), rows re-pick inside the kept set.
  std::vector<char> in_preview(static_cast<size_t>(n), 0);
  for (const GroupRows& g : fc.groups)
    if (g.preview())
      std::fill(in_preview.begin() + g.begin, in_preview.begin() + g.begin + g.count, 1);
  for (int64_t r = 0; r < n; ++r) {
    if (in_preview[r]) continue;
    RowRoute route = RouteTopK(logits + r * n_experts, n_experts, cfg.top_k);
    for (int j = 0; j < cfg.top_k; ++j) assigned[route.experts[j]].push_back({r, route.weights[j]});
  }
  {
    CoresetParams params;
    params.mass = cfg.diffusion.coreset_mass;
    params.min_experts = cfg.diffusion.coreset_min_experts;
    params.vote_topk = cfg.top_k;
    params.preview_topk = cfg.effective_preview_topk();
    size_t preview_index = 0;
    for (const GroupRows& g : fc.groups) {
      if (!g.preview()) continue;
      const std::span<const float> rows(logits + g.begin * n_experts, g.count * n_experts);
      // The expert budget (clover-decoding.md §8): a pass that reuses its cache routes inside the
      // coreset of the block's last refresh, which a refresh recomputes and stores.
      CoresetRoutes routes;
      std::vector<int32_t> kept;
      if (g.reuse != nullptr && !g.reuse->refresh) {
        kept = g.reuse->cache->coreset(layer);
        Result<CoresetRoutes> r = RouteInsideCoreset(rows, static_cast<int>(g.count), n_experts,
                                                     kept, params.preview_topk);
        CLOVER_CHECK(r.ok());  // the set came from a refresh of this model
        routes = std::move(*r);
      } else {
        Result<Coreset> c = ComputeBlockCoreset(rows, static_cast<int>(g.count), n_experts, params);
        CLOVER_CHECK(c.ok());  // parameters checked by ValidateWeights
        kept = std::move(c->kept);
        routes = std::move(*c);
        if (g.reuse != nullptr) g.reuse->cache->coreset(layer) = kept;
      }
      for (int64_t t = 0; t < g.count; ++t) {
        for (int j = 0; j < routes.picked_per_row; ++j) {
          const size_t at = static_cast<size_t>(t) * routes.picked_per_row + j;
          assigned[routes.row_experts[at]].push_back({g.begin + t, routes.row_weights[at]});
        }
      }
      if (fc.stats != nullptr) fc.stats->coreset[preview_index][layer] = std::move(kept);
      ++preview_index;
    }
  }
  if (fc.stats != nullptr) {
    fc.stats->distinct_experts[layer] = static_cast<int>(
        std::count_if(assigned.begin(), assigned.end(), [](const auto& a) { return !a.empty(); }));
  }

  std::fill(out, out + n * hidden, 0.0f);
  float* xin = scratch.Get(ForwardScratch::kExpertIn, n * hidden);
  float* gate = scratch.Get(ForwardScratch::kExpertGate, n * ffn);
  float* up = scratch.Get(ForwardScratch::kExpertUp, n * ffn);
  float* eout = scratch.Get(ForwardScratch::kExpertOut, n * hidden);
  for (int e = 0; e < n_experts; ++e) {
    const auto& rows = assigned[e];
    if (rows.empty()) continue;
    const int64_t m = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < m; ++i)
      std::copy(x + rows[i].first * hidden, x + (rows[i].first + 1) * hidden, xin + i * hidden);
    kernels::MatMul(kc, xin, m, hidden, w.expert_gate[e], gate, ffn);
    kernels::MatMul(kc, xin, m, hidden, w.expert_up[e], up, ffn);
    SwiGlu(gate, up, m * ffn, gate);
    kernels::MatMul(kc, gate, m, ffn, w.expert_down[e], eout, hidden);
    for (int64_t i = 0; i < m; ++i)
      kc.table.axpy(rows[i].second, eout + i * hidden, out + rows[i].first * hidden, hidden);
  }
  fc.Dump("ffn_moe_out", layer, out, n, hidden);

  if (cfg.shared_ffn > 0 && !w.shared_gate.empty()) {
    const int64_t sffn = cfg.shared_ffn;
    float* sg = scratch.Get(ForwardScratch::kSharedGate, n * sffn);
    float* su = scratch.Get(ForwardScratch::kSharedUp, n * sffn);
    float* so = scratch.Get(ForwardScratch::kSharedOut, n * hidden);
    float* s_logit = scratch.Get(ForwardScratch::kExpertIn, n);
    kernels::MatMul(kc, x, n, hidden, w.shared_gate, sg, sffn);
    kernels::MatMul(kc, x, n, hidden, w.shared_up, su, sffn);
    SwiGlu(sg, su, n * sffn, sg);
    kernels::MatMul(kc, sg, n, sffn, w.shared_down, so, hidden);
    kernels::MatMul(kc, x, n, hidden, w.shared_router, s_logit, 1);
    for (int64_t r = 0; r < n; ++r)
      kc.table.scale(kernels::ref::Sigmoid(s_logit[r]), so + r * hidden, hidden);
    fc.Dump("ffn_shexp_gated", layer, so, n, hidden);
    for (int64_t r = 0; r < n; ++r) kc.table.axpy(1.0f, so + r * hidden, out + r * hidden, hidden);
  }
  fc.Dump("ffn_out", layer, out, n, hidden);
}

}  // namespace clover::model
