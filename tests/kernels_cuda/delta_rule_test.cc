// Device delta-rule scan against kernels::DeltaRuleRecurrent (reference kernel table).
#include "kernels/cuda/delta_rule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/l2_norm.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using kernels::testing::RandomVector;
using testing::CudaTest;
using testing::ExpectWithinBounds;
using testing::kF32Unit;
using testing::ToDevice;

struct DeltaCase {
  int hk, hv, dk, dv;
  int64_t n_rows;
  int64_t pad;  // extra floats at the end of every q/k, v, gate and out row
};

std::string Name(const DeltaCase& c) {
  return "hk" + std::to_string(c.hk) + "_hv" + std::to_string(c.hv) + "_dk" + std::to_string(c.dk) +
         "_dv" + std::to_string(c.dv) + "_rows" + std::to_string(c.n_rows) + "_pad" +
         std::to_string(c.pad);
}
void PrintTo(const DeltaCase& c, std::ostream* os) { *os << Name(c); }

// The Qwen3.6 decode step (16/32 heads of 128), odd head sizes (partial warps, partial column
// tiles, every register-tile template), hv not a multiple of hk, and scans over many tokens.
const DeltaCase kDeltaCases[] = {
    {16, 32, 128, 128, 1, 0}, {2, 4, 16, 8, 37, 0}, {3, 6, 33, 45, 7, 3},   {2, 3, 64, 130, 65, 1},
    {1, 2, 256, 40, 3, 0},    {1, 1, 1, 1, 5, 0},   {2, 2, 129, 33, 17, 2},
};

using DeltaRuleTest = CudaTest<DeltaCase>;

TEST_P(DeltaRuleTest, MatchesRecurrentReference) {
  const DeltaCase c = GetParam();
  const int64_t qk_stride = int64_t{c.hk} * c.dk + c.pad;
  const int64_t v_stride = int64_t{c.hv} * c.dv + c.pad;
  const int64_t gate_stride = c.hv + c.pad;
  const int64_t out_stride = int64_t{c.hv} * c.dv + c.pad;
  const uint64_t seed = c.hk * 1009 + c.dk * 31 + c.dv + c.n_rows;
  // Inputs as the GDN layer makes them: unit k, q of norm 1/sqrt(dk), decays e^g in (0.22,
  // 0.93), beta in (0, 1).
  std::vector<float> q = RandomVector(c.n_rows * qk_stride, seed);
  std::vector<float> k = RandomVector(c.n_rows * qk_stride, seed + 1);
  const std::vector<float> v = RandomVector(c.n_rows * v_stride, seed + 2);
  for (int64_t t = 0; t < c.n_rows; ++t)
    for (int h = 0; h < c.hk; ++h) {
      ref::L2Norm(&q[t * qk_stride + h * c.dk], c.dk, 1e-6f, 1.0f / std::sqrt(float(c.dk)));
      ref::L2Norm(&k[t * qk_stride + h * c.dk], c.dk, 1e-6f, 1.0f);
    }
  std::vector<float> g = RandomVector(c.n_rows * gate_stride, seed + 3);
  std::vector<float> beta = RandomVector(c.n_rows * gate_stride, seed + 4);
  for (float& x : g) x = -1.5f * std::abs(x);
  for (float& x : beta) x = 0.5f + 0.5f * x;
  const std::vector<float> state0 = RandomVector(int64_t{c.hv} * c.dk * c.dv, seed + 5, 0.5f);

  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer q_d, ToDevice(device(), q));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer k_d, ToDevice(device(), k));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer v_d, ToDevice(device(), v));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer g_d, ToDevice(device(), g));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer beta_d, ToDevice(device(), beta));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer state_d, ToDevice(device(), state0));
  const float kUntouched = 7.0f;
  std::vector<float> out(c.n_rows * out_stride, kUntouched);
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer out_d, ToDevice(device(), out));

  auto args_for = [&](const float* qp, const float* kp, const float* vp, const float* gp,
                      const float* bp, float* sp, float* op) {
    DeltaRuleArgs a;
    a.hk = c.hk, a.hv = c.hv, a.dk = c.dk, a.dv = c.dv, a.n_rows = c.n_rows;
    a.q = qp, a.k = kp, a.v = vp, a.qk_stride = qk_stride, a.v_stride = v_stride;
    a.g = gp, a.beta = bp, a.gate_stride = gate_stride;
    a.state = sp, a.out = op, a.out_stride = out_stride;
    return a;
  };
  CLOVER_ASSERT_OK(DeltaRuleRecurrent(
      device(), args_for(q_d.as<float>(), k_d.as<float>(), v_d.as<float>(), g_d.as<float>(),
                         beta_d.as<float>(), state_d.as<float>(), out_d.as<float>())));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got_out,
                              DownloadVector<float>(device(), out_d, out.size()));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got_state,
                              DownloadVector<float>(device(), state_d, state0.size()));

  std::vector<float> state = state0;
  ThreadPool pool(1);
  const KernelContext ctx{pool, GetKernelTable(Isa::kRef)};
  kernels::DeltaRuleRecurrent(
      ctx, args_for(q.data(), k.data(), v.data(), g.data(), beta.data(), state.data(), out.data()));

  // Both sides are f32 with different summation orders. One token's sums over dk terms differ
  // by at most ~dk u of the state's scale; a later token does not amplify an earlier error,
  // since e^g (I - beta k k^T) has norm <= 1 for unit k and beta in (0, 1), so the errors at
  // most add up over the tokens. The factor 4 covers the several sums per token.
  float scale = 0.0f;
  for (float x : state0) scale = std::max(scale, std::abs(x));
  for (float x : state) scale = std::max(scale, std::abs(x));
  const int64_t out_width = int64_t{c.hv} * c.dv;
  for (int64_t t = 0; t < c.n_rows; ++t)
    for (int64_t i = 0; i < out_width; ++i)
      scale = std::max(scale, std::abs(out[t * out_stride + i]));
  const double tol = 4.0 * (c.n_rows + 1) * (c.dk + 4) * kF32Unit * scale;
  std::vector<double> bound_out(out.size(), tol);  // row gaps must stay kUntouched: bound 0
  for (int64_t t = 0; t < c.n_rows; ++t)
    for (int64_t i = out_width; i < out_stride; ++i) bound_out[t * out_stride + i] = 0;
  ExpectWithinBounds(got_out, std::vector<double>(out.begin(), out.end()), bound_out, "out");
  ExpectWithinBounds(got_state, std::vector<double>(state.begin(), state.end()),
                     std::vector<double>(state.size(), tol), "state");
}

INSTANTIATE_TEST_SUITE_P(cuda, DeltaRuleTest, ::testing::ValuesIn(kDeltaCases),
                         testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
