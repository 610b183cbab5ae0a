// Device matmul (F32, BF16 through cuBLAS; Q8_0 through the dequantizing kernel) against the CPU
// reference kernels.
#include "kernels/cuda/matmul.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/dtype.h"
#include "kernels/kernel_test_util.h"
#include "kernels/quantize.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/matmul.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using kernels::testing::RandomVector;
using testing::CudaTest;
using testing::ExpectWithinBounds;
using testing::kF32Unit;
using testing::ToDevice;

struct MatMulCase {
  DType dtype;
  int64_t in, out;
};

std::string Name(const MatMulCase& c) {
  return std::string(DTypeName(c.dtype)) + "_in" + std::to_string(c.in) + "_out" +
         std::to_string(c.out);
}
void PrintTo(const MatMulCase& c, std::ostream* os) { *os << Name(c); }

// Odd `in` and `out` for the cuBLAS paths (Q8_0 rows are whole 32-element blocks).
std::vector<MatMulCase> MatMulCases() {
  std::vector<MatMulCase> cases;
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kQ8_0}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{32, 1}, {96, 67}, {2048, 129}})
      cases.push_back({dtype, in, out});
    if (dtype != DType::kQ8_0) cases.push_back({dtype, 1031, 7});
  }
  return cases;
}

// The weight as stored (bytes of `dtype`, rows back to back) and the exact values it holds.
struct Weight {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
  int64_t row_bytes = 0;
};

Weight MakeWeight(DType dtype, int64_t out, int64_t in, uint64_t seed) {
  const std::vector<float> f = RandomVector(out * in, seed);
  Weight w;
  w.row_bytes = static_cast<int64_t>(*DTypeBytes(dtype, in));
  w.bytes.resize(out * w.row_bytes);
  w.values.resize(out * in);
  for (int64_t o = 0; o < out; ++o) {
    uint8_t* row = w.bytes.data() + o * w.row_bytes;
    EXPECT_TRUE(QuantizeRow(dtype, &f[o * in], in, row).ok());
    EXPECT_TRUE(ref::DequantizeRow(dtype, row, in, &w.values[o * in]).ok());
  }
  return w;
}

// One product of `n_rows` activation rows by an [out, in] weight of `dtype`, compared with the
// CPU reference kernel.
void CheckMatMul(Device& device, DType dtype, int64_t n_rows, int64_t in, int64_t out) {
  const int64_t x_stride = in + 3, y_stride = out + 2;  // strided rows, as slices of wider ones
  const uint64_t seed = n_rows * 1000003 + in * 1009 + out;
  const Weight w = MakeWeight(dtype, out, in, seed);
  std::vector<float> x = RandomVector(n_rows * x_stride, seed + 1, 2.0f);
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer x_d, ToDevice(device, x));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer w_d, ToDevice(device, w.bytes));
  const float kUntouched = 7.0f;  // gaps between output rows must keep it
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer y_d,
                              ToDevice(device, std::vector<float>(n_rows * y_stride, kUntouched)));
  const DeviceMatrix wm{dtype, w_d.data(), out, in, w.row_bytes};
  CLOVER_ASSERT_OK(
      MatMul(device, x_d.as<float>(), n_rows, x_stride, wm, y_d.as<float>(), y_stride));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<float> got,
                              DownloadVector<float>(device, y_d, n_rows * y_stride));

  // The BF16 path rounds the activations to BF16 by design (matmul.h); the reference then sees
  // the same inputs, and what is left to compare is the accumulation.
  if (dtype == DType::kBF16)
    for (float& v : x) v = BF16ToF32(F32ToBF16(v));
  std::vector<float> ref(n_rows * y_stride, kUntouched);
  const auto reference = dtype == DType::kF32    ? ref::MatMulF32
                         : dtype == DType::kBF16 ? ref::MatMulBF16
                                                 : ref::MatMulQ8_0;
  reference(x.data(), n_rows, x_stride, w.bytes.data(), w.row_bytes, in, 0, out, ref.data(),
            y_stride);
  // Any summation order of `in` f32 products is within (in + 1) u of sum |w x| (the reference
  // sums in double, then rounds once: u |y|). Tensor cores (BF16) may round their f32 adds
  // less carefully than IEEE adds, so that path gets twice the accumulation bound.
  const double accumulate = (dtype == DType::kBF16 ? 2 : 1) * (in + 2) * kF32Unit;
  std::vector<double> want(ref.begin(), ref.end()), bound(ref.size(), 0.0);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double abs_sum = 0.0;
      for (int64_t i = 0; i < in; ++i)
        abs_sum += std::abs(double{w.values[o * in + i]} * x[r * x_stride + i]);
      bound[r * y_stride + o] = accumulate * abs_sum + kF32Unit * std::abs(want[r * y_stride + o]);
    }
  ExpectWithinBounds(got, want, bound, "MatMul");
}

using MatMulTest = CudaTest<MatMulCase>;

// Rows 1 (decode), 8/9 (the Q8_0 row tile and one past it), 32/33 (a preview block).
const int64_t kRowCounts[] = {1, 3, 8, 9, 32, 33};

TEST_P(MatMulTest, MatchesReference) {
  const auto [dtype, in, out] = GetParam();
  for (const int64_t n_rows : kRowCounts) {
    SCOPED_TRACE(::testing::Message() << "rows " << n_rows);
    CheckMatMul(device(), dtype, n_rows, in, out);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(cuda, MatMulTest, ::testing::ValuesIn(MatMulCases()), testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
