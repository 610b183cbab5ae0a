// MoE layer: route every row, gather rows per expert, SwiGLU expert matmuls, weighted scatter.
#include "model/moe_layer.h"

#include <algorithm>
#include <numeric>
#include <span>

#include "core/check.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/softmax.h"
#include "model/coreset.h"

namespace clover::model {
namespace {

// Up to this many rows per expert, a pass runs whole experts as pool tasks (MoeForward); above,
// each expert matmul is split over the pool. 16: the few-row kernels' range (quant_matmul_wide).
constexpr int64_t kMaxRowsPerExpertTask = 16;

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
  std::vector<int> active;
  int64_t max_rows = 0;
  for (int e = 0; e < n_experts; ++e) {
    if (assigned[e].empty()) continue;
    active.push_back(e);
    max_rows = std::max<int64_t>(max_rows, static_cast<int64_t>(assigned[e].size()));
  }
  // Expert e's SwiGLU FFN over its m rows (x rows gathered into xin), output rows into eout.
  const auto run_expert = [&](const kernels::KernelContext& ctx, int e, float* xin, float* gate,
                              float* up, float* eout) {
    const auto& rows = assigned[e];
    const int64_t m = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < m; ++i)
      std::copy(x + rows[i].first * hidden, x + (rows[i].first + 1) * hidden, xin + i * hidden);
    kernels::MatMul(ctx, xin, m, hidden, w.expert_gate[e], gate, ffn);
    kernels::MatMul(ctx, xin, m, hidden, w.expert_up[e], up, ffn);
    SwiGlu(gate, up, m * ffn, gate);
    kernels::MatMul(ctx, gate, m, ffn, w.expert_down[e], eout, hidden);
  };
  const auto add_expert = [&](int e, const float* eout) {
    const auto& rows = assigned[e];
    for (size_t i = 0; i < rows.size(); ++i)
      kc.table.axpy(rows[i].second, eout + i * hidden, out + rows[i].first * hidden, hidden);
  };
  const int n_threads = kc.pool.size();
  if (n_threads > 1 && static_cast<int>(active.size()) >= 2 * n_threads &&
      max_rows <= kMaxRowsPerExpertTask) {
    // Few rows per expert (decode, diffusion passes): one expert per task instead of every
    // matmul split over the pool. A split of a one-row expert matmul is ~1M multiply-adds, so
    // the 3 pool wake-ups per expert (8 experts x 40 layers per decoded token) cost more than
    // the load imbalance of whole experts. Each task's matmuls run on the calling thread; the
    // outputs are added in expert order afterwards, so the sums equal the split path's.
    std::vector<int64_t> first_row(active.size() + 1, 0);
    for (size_t i = 0; i < active.size(); ++i)
      first_row[i + 1] = first_row[i] + static_cast<int64_t>(assigned[active[i]].size());
    float* eouts = scratch.Get(ForwardScratch::kExpertOut, first_row.back() * hidden);
    static ThreadPool serial(1);  // inline on each calling thread (thread_pool.h)
    const kernels::KernelContext one_thread{serial, kc.table};
    kc.pool.ParallelTasks(static_cast<int64_t>(active.size()), [&](int64_t b, int64_t end) {
      thread_local std::vector<float> buf;
      buf.resize(static_cast<size_t>(max_rows * (hidden + 2 * ffn)));
      for (int64_t i = b; i < end; ++i) {
        run_expert(one_thread, active[i], buf.data(), buf.data() + max_rows * hidden,
                   buf.data() + max_rows * (hidden + ffn), eouts + first_row[i] * hidden);
      }
    });
    for (size_t i = 0; i < active.size(); ++i) add_expert(active[i], eouts + first_row[i] * hidden);
  } else {
    float* xin = scratch.Get(ForwardScratch::kExpertIn, n * hidden);
    float* gate = scratch.Get(ForwardScratch::kExpertGate, n * ffn);
    float* up = scratch.Get(ForwardScratch::kExpertUp, n * ffn);
    float* eout = scratch.Get(ForwardScratch::kExpertOut, n * hidden);
    for (int e : active) {
      run_expert(kc, e, xin, gate, up, eout);
      add_expert(e, eout);
    }
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
