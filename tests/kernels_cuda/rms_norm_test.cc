// RmsNorm, GatedRmsNorm and SiluMul on the device against the CPU references.
#include "kernels/cuda/rms_norm.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/activations.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/rms_norm.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using kernels::testing::RandomVector;
using testing::CudaTest;
using testing::ExpectWithinBounds;
using testing::kF32Unit;
using testing::ToDevice;

struct RowsCase {
  int64_t n_rows, n, pad;  // rows of n floats, `pad` floats of gap between rows
};

std::string Name(const RowsCase& c) {
  return "rows" + std::to_string(c.n_rows) + "_n" + std::to_string(c.n) + "_pad" +
         std::to_string(c.pad);
}
void PrintTo(const RowsCase& c, std::ostream* os) { *os << Name(c); }

// 128 is a GDN head row, 2048/4099 hidden-size rows (odd: the last warp is partial).
const RowsCase kRowsCases[] = {{1, 1, 0},    {3, 7, 1},    {32, 128, 0},
                               {5, 1000, 3}, {2, 2048, 0}, {3, 4099, 5}};

using RmsNormTest = CudaTest<RowsCase>;

TEST_P(RmsNormTest, PlainAndGatedMatchReference) {
  const auto [n_rows, n, pad] = GetParam();
  const int64_t stride = n + pad;
  const float eps = 1e-6f;
  const std::vector<float> x = RandomVector(n_rows * stride, 1 + n, 3.0f);
  const std::vector<float> z = RandomVector(n_rows * stride, 2 + n, 4.0f);
  const std::vector<float> w = RandomVector(n, 3 + n);
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer x_d, ToDevice(device(), x));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer z_d, ToDevice(device(), z));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer w_d, ToDevice(device(), w));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer out_d, ToDevice(device(), x));
  // The device sums the n squares in f32 (relative error <= n u for positive terms, any order);
  // the inverse root halves that and adds a few roundings, the products a few more. The gated
  // form adds SiLU on both sides (CUDA expf <= 2 ulp, glibc's < 1 ulp, plus the division).
  const double plain_rel = (n / 2.0 + 8) * kF32Unit;
  const double gated_rel = plain_rel + 8 * kF32Unit;

  for (const bool with_weight : {true, false}) {
    SCOPED_TRACE(with_weight ? "with weight" : "no weight");
    CLOVER_ASSERT_OK(RmsNorm(device(), x_d.as<float>(), stride,
                             with_weight ? w_d.as<float>() : nullptr, n, n_rows, eps,
                             out_d.as<float>(), stride));
    CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got,
                                DownloadVector<float>(device(), out_d, x.size()));
    std::vector<float> ref = x;  // pad elements stay as uploaded
    for (int64_t r = 0; r < n_rows; ++r)
      ref::RmsNorm(&x[r * stride], with_weight ? w.data() : nullptr, n, eps, &ref[r * stride]);
    std::vector<double> want(ref.begin(), ref.end()), bound(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) bound[i] = plain_rel * std::abs(want[i]);
    ExpectWithinBounds(got, want, bound, "RmsNorm");
    CLOVER_ASSERT_OK(out_d.Upload(device(), x.data(), x.size() * sizeof(float)));
  }

  // In place (out aliases o), as the GDN layer calls it.
  CLOVER_ASSERT_OK(GatedRmsNorm(device(), out_d.as<float>(), stride, z_d.as<float>(), stride,
                                w_d.as<float>(), n, n_rows, eps, out_d.as<float>(), stride));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got,
                              DownloadVector<float>(device(), out_d, x.size()));
  std::vector<float> ref = x;
  for (int64_t r = 0; r < n_rows; ++r)
    ref::GatedRmsNorm(&x[r * stride], &z[r * stride], w.data(), n, eps, &ref[r * stride]);
  std::vector<double> want(ref.begin(), ref.end()), bound(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) bound[i] = gated_rel * std::abs(want[i]);
  ExpectWithinBounds(got, want, bound, "GatedRmsNorm");
}

INSTANTIATE_TEST_SUITE_P(cuda, RmsNormTest, ::testing::ValuesIn(kRowsCases), testing::CaseName());

using SiluMulTest = CudaTest<RowsCase>;

TEST_P(SiluMulTest, MatchesReference) {
  const auto [n_rows, n, pad] = GetParam();
  const int64_t stride = n + pad;
  // Wide enough that SiLU's tails (x large and negative or positive) are exercised.
  const std::vector<float> gate = RandomVector(n_rows * stride, 4 + n, 12.0f);
  const std::vector<float> up = RandomVector(n_rows * stride, 5 + n, 2.0f);
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer gate_d, ToDevice(device(), gate));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer up_d, ToDevice(device(), up));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer out_d, ToDevice(device(), up));
  CLOVER_ASSERT_OK(SiluMul(device(), gate_d.as<float>(), stride, up_d.as<float>(), stride, n,
                           n_rows, out_d.as<float>(), stride));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got,
                              DownloadVector<float>(device(), out_d, up.size()));
  std::vector<double> want(up.begin(), up.end()), bound(up.size(), 0.0);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = r * stride + i;
      want[at] = ref::Silu(gate[at]) * up[at];
      // SiLU: CUDA expf <= 2 ulp and glibc's < 1 ulp, scaled by e/(1+e) <= 1 in the sum, then
      // the division and the product with up: under 8 roundings between the two sides.
      bound[at] = 8 * kF32Unit * std::abs(want[at]);
    }
  ExpectWithinBounds(got, want, bound, "SiluMul");
}

INSTANTIATE_TEST_SUITE_P(cuda, SiluMulTest, ::testing::ValuesIn(kRowsCases), testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
