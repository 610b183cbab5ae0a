// Router and expert FFN against a naive double-precision MoE (architecture.md §3.4).
#include "model/moe_layer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/thread_pool.h"
#include "kernels/kernel_table.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

TEST(RouterTest, TopKRenormalisedTiesToLowerId) {
  const float logits[6] = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 2.0f};
  RowRoute r = RouteTopK(logits, 6, 3);
  EXPECT_EQ(r.experts, (std::vector<int>{1, 3, 2}));
  const double e3 = std::exp(3.0), e2 = std::exp(2.0);
  const double sum = 2 * e3 + e2;
  EXPECT_NEAR(r.weights[0], e3 / sum, 1e-7);
  EXPECT_NEAR(r.weights[1], e3 / sum, 1e-7);
  EXPECT_NEAR(r.weights[2], e2 / sum, 1e-7);
}

double SiluD(double x) { return x / (1.0 + std::exp(-x)); }

// y = W x for an F32 [out, in] view, in double.
std::vector<double> MatVec(const TensorView& w, const std::vector<double>& x) {
  std::vector<double> y(w.shape[0]);
  for (int64_t o = 0; o < w.shape[0]; ++o)
    for (int64_t i = 0; i < w.shape[1]; ++i) y[o] += double{w.f32()[o * w.shape[1] + i]} * x[i];
  return y;
}

std::vector<double> ExpertD(const TensorView& g, const TensorView& u, const TensorView& d,
                            const std::vector<double>& x) {
  std::vector<double> gv = MatVec(g, x), uv = MatVec(u, x);
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = SiluD(gv[i]) * uv[i];
  return MatVec(d, gv);
}

TEST(MoeLayerTest, MatchesNaiveDouble) {
  for (int shared_ffn : {32, 0}) {
    ModelConfig c = RandomModelConfig("tiny").value();
    c.shared_ffn = shared_ffn;
    const ModelWeights w = MakeRandomWeights(c, 17, DType::kF32);
    const MoeWeights& m = w.layers[0].moe;
    const int64_t n = 9, h = c.hidden;
    std::vector<float> x(n * h);
    for (int64_t i = 0; i < n * h; ++i) x[i] = std::sin(0.37 * i + 1.0);
    ThreadPool pool(2);
    kernels::KernelContext kc{pool, kernels::GetKernelTable(SelectIsa().value())};
    std::vector<GroupRows> groups;
    ForwardContext fc{kc, c, groups, n};
    ForwardScratch scratch;
    std::vector<float> out(n * h);
    MoeForward(fc, 0, m, x.data(), out.data(), scratch);

    double max_err = 0, max_val = 0;
    for (int64_t r = 0; r < n; ++r) {
      std::vector<double> xr(x.begin() + r * h, x.begin() + (r + 1) * h);
      std::vector<double> p = MatVec(m.router, xr);
      const double mx = *std::max_element(p.begin(), p.end());
      double z = 0;
      for (double& v : p) z += (v = std::exp(v - mx));
      std::vector<int> order(c.n_experts);
      for (int e = 0; e < c.n_experts; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
      double top = 0;
      for (int j = 0; j < c.top_k; ++j) top += p[order[j]];
      std::vector<double> want(h);
      for (int j = 0; j < c.top_k; ++j) {
        const int e = order[j];
        std::vector<double> y = ExpertD(m.expert_gate[e], m.expert_up[e], m.expert_down[e], xr);
        for (int64_t i = 0; i < h; ++i) want[i] += p[e] / top * y[i];
      }
      if (shared_ffn > 0) {
        std::vector<double> y = ExpertD(m.shared_gate, m.shared_up, m.shared_down, xr);
        const double s = 1.0 / (1.0 + std::exp(-MatVec(m.shared_router, xr)[0]));
        for (int64_t i = 0; i < h; ++i) want[i] += s * y[i];
      }
      for (int64_t i = 0; i < h; ++i) {
        max_err = std::max(max_err, std::abs(out[r * h + i] - want[i]));
        max_val = std::max(max_val, std::abs(want[i]));
      }
    }
    // f32 matmuls over <= 64 terms per output, three in a row: a few 1e-7 relative.
    EXPECT_LE(max_err / max_val, 2e-6) << "shared_ffn " << shared_ffn;
  }
}

// With a pool of several threads and few rows per expert, whole experts run as pool tasks; on
// one thread every expert matmul runs in turn. Both add the experts in the same order, and an
// output element's sum does not depend on which thread computes it, so the results are equal.
TEST(MoeLayerTest, ExpertTasksEqualOneThreadExactly) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    ModelConfig c = RandomModelConfig("tiny").value();
    const ModelWeights w = MakeRandomWeights(c, 23, dtype);
    const int64_t n = 9, h = c.hidden;
    std::vector<float> x(n * h);
    for (int64_t i = 0; i < n * h; ++i) x[i] = std::cos(0.21 * i + 0.5);
    std::vector<std::vector<float>> outs;
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      kernels::KernelContext kc{pool, kernels::GetKernelTable(SelectIsa().value())};
      std::vector<GroupRows> groups;
      PassStats stats;
      stats.distinct_experts.resize(c.n_layers);
      ForwardContext fc{kc, c, groups, n};
      fc.stats = &stats;
      ForwardScratch scratch;
      std::vector<float> out(n * h);
      MoeForward(fc, 0, w.layers[0].moe, x.data(), out.data(), scratch);
      // 2 x threads experts at least, so the tasks path is the one taken on 2 and 3 threads.
      ASSERT_GE(stats.distinct_experts[0], 6);
      outs.push_back(std::move(out));
    }
    EXPECT_EQ(outs[1], outs[0]) << DTypeName(dtype);
    EXPECT_EQ(outs[2], outs[0]) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace clover::model
