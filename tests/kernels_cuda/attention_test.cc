// Device attention (causal and prefix + bidirectional block masks) against kernels::Attention.
#include "kernels/cuda/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_test_util.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using kernels::testing::RandomVector;
using testing::CudaTest;
using testing::ExpectWithinBounds;
using testing::kF32Unit;
using testing::ToDevice;

struct AttentionCase {
  int n_head, n_head_kv, head_dim;
  int64_t n_rows, first_pos;
  MaskMode mask;
};

std::string Name(const AttentionCase& c) {
  return std::string(c.mask == MaskMode::kCausal ? "causal" : "prefix_block") + "_heads" +
         std::to_string(c.n_head) + "_kv" + std::to_string(c.n_head_kv) + "_dh" +
         std::to_string(c.head_dim) + "_rows" + std::to_string(c.n_rows) + "_first" +
         std::to_string(c.first_pos);
}
void PrintTo(const AttentionCase& c, std::ostream* os) { *os << Name(c); }

// Decode (one row after a long prefix), a causal prefill from position 0, and preview blocks of
// 8/32 rows over a prefix; head dims 7/33 (partial lanes), 64/128/256 (every template).
const AttentionCase kAttentionCases[] = {
    {8, 2, 128, 1, 300, MaskMode::kCausal},       {4, 2, 64, 13, 0, MaskMode::kCausal},
    {2, 2, 7, 3, 9, MaskMode::kCausal},           {6, 3, 256, 17, 40, MaskMode::kCausal},
    {8, 2, 128, 32, 100, MaskMode::kPrefixBlock}, {3, 1, 33, 8, 0, MaskMode::kPrefixBlock},
    {4, 4, 64, 5, 1000, MaskMode::kPrefixBlock},
};

using AttentionTest = CudaTest<AttentionCase>;

TEST_P(AttentionTest, MatchesReference) {
  const AttentionCase c = GetParam();
  const int64_t n_pos = c.first_pos + c.n_rows;
  const int64_t q_width = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_width = int64_t{c.n_head_kv} * c.head_dim;
  const int64_t q_stride = q_width + 1, kv_stride = kv_width + 2, out_stride = q_width + 3;
  const std::vector<float> q = RandomVector(c.n_rows * q_stride, n_pos, 2.0f);
  const std::vector<float> k = RandomVector(n_pos * kv_stride, n_pos + 1, 2.0f);
  const std::vector<float> v = RandomVector(n_pos * kv_stride, n_pos + 2);
  const float kUntouched = 7.0f;
  std::vector<float> out(c.n_rows * out_stride, kUntouched);
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer q_d, ToDevice(device(), q));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer k_d, ToDevice(device(), k));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer v_d, ToDevice(device(), v));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer out_d, ToDevice(device(), out));
  const AttentionParams params{c.n_head, c.n_head_kv, c.head_dim,
                               static_cast<float>(1.0 / std::sqrt(double(c.head_dim))), c.mask};
  CLOVER_ASSERT_OK(Attention(device(), params, q_d.as<float>(), q_stride, c.n_rows, c.first_pos,
                             DeviceKv{k_d.as<float>(), v_d.as<float>(), kv_stride, n_pos},
                             out_d.as<float>(), out_stride));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got,
                              DownloadVector<float>(device(), out_d, out.size()));

  // The CPU kernel over one page holding every position.
  const float* k_pages[] = {k.data()};
  const float* v_pages[] = {v.data()};
  ThreadPool pool(1);
  const KernelContext ctx{pool, GetKernelTable(Isa::kRef)};
  kernels::Attention(ctx, params, q.data(), q_stride, c.n_rows, c.first_pos,
                     KvPagesView{k_pages, v_pages, n_pos, kv_stride, n_pos}, out.data(),
                     out_stride);

  // A score is a dh-term f32 dot product: off by at most ds = (dh + 1) u scale sum|q k| on
  // either side. A softmax weight then moves by a relative ~2 ds, and the normaliser and the
  // weighted sum of values are n-term f32 sums of positive weights (n u relative). So an output
  // is within max|v| (2 ds + (n + 4) u) of the exact value on each side; twice that between
  // the two sides.
  double ds = 0.0, v_max = 0.0;
  for (int64_t r = 0; r < c.n_rows; ++r)
    for (int h = 0; h < c.n_head; ++h)
      for (int64_t p = 0; p < n_pos; ++p) {
        const int64_t kv_off = int64_t{h / (c.n_head / c.n_head_kv)} * c.head_dim;
        double abs_dot = 0.0;
        for (int d = 0; d < c.head_dim; ++d)
          abs_dot += std::abs(double{q[r * q_stride + int64_t{h} * c.head_dim + d]} *
                              k[p * kv_stride + kv_off + d]);
        ds = std::max(ds, (c.head_dim + 1) * kF32Unit * params.scale * abs_dot);
      }
  for (float x : v) v_max = std::max(v_max, double{std::abs(x)});
  const double tol = 2 * v_max * (2 * ds + (n_pos + 4) * kF32Unit);
  std::vector<double> bound(out.size(), tol);
  for (int64_t r = 0; r < c.n_rows; ++r)
    for (int64_t i = q_width; i < out_stride; ++i) bound[r * out_stride + i] = 0;
  ExpectWithinBounds(got, std::vector<double>(out.begin(), out.end()), bound, "Attention");
}

INSTANTIATE_TEST_SUITE_P(cuda, AttentionTest, ::testing::ValuesIn(kAttentionCases),
                         testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
