// Quantizers: quantize -> dequantize error within each format's bound, activation blocks exact.
#include "kernels/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ref/dequantize.h"

namespace clover::kernels {
namespace {

using testing::RandomVector;

std::vector<float> RoundTrip(DType dtype, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(*DTypeBytes(dtype, x.size()));
  Status s = QuantizeRow(dtype, x.data(), static_cast<int64_t>(x.size()), bytes.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<float> y(x.size());
  s = ref::DequantizeRow(dtype, bytes.data(), static_cast<int64_t>(x.size()), y.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return y;
}

// Returns rms(y - x) / rms(x).
double RelativeRmsError(const std::vector<float>& x, const std::vector<float>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (double{y[i]} - x[i]) * (double{y[i]} - x[i]);
    den += double{x[i]} * x[i];
  }
  return std::sqrt(num / den);
}

std::vector<float> Gaussian(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(QuantizeTest, Q8_0ElementErrorIsHalfAStep) {
  const std::vector<float> x = RandomVector(32 * 40, 3, 5.0f);
  const std::vector<float> y = RoundTrip(DType::kQ8_0, x);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[b * 32 + i]));
    // d = amax / 127 rounded to f16 (relative error 2^-11), levels round to nearest.
    const double half_step = amax / 127.0 / 2 * (1 + 1.0 / 1024);
    for (int i = 0; i < 32; ++i) ASSERT_LE(std::abs(y[b * 32 + i] - x[b * 32 + i]), half_step);
  }
}

// Round to nearest on a grid of step s has rms error s / sqrt(12). Uniform data on +-[0.05, 1]
// (rms 0.59) with the step set by a block's extremes, without any scale search: Q8_0 s = 2/254
// -> 0.39% of rms(x); Q6_K s = 1/32 -> 1.5%; Q4_K s = 2/15 -> 6.5%. The quantizers' search must
// do at least that well (measured: 0.37%, 1.3%, 5.4%). Gaussian data: the largest |x| of 32
// is ~2.5 sigma, of 16 ~2.2 sigma, so Q8_0 s = 5/254 -> 0.57%, Q6_K s = 2.2/32 -> 2%, Q4_K
// s = 4.4/15 -> 8.5% (measured: 0.54%, 1.7%, 7.2%). A wrong scale, offset or packing costs
// errors of order 100%.
struct RmsCase {
  DType dtype;
  double uniform_bound;
  double gaussian_bound;
};

TEST(QuantizeTest, RoundTripRmsErrorWithinFormatBound) {
  for (const RmsCase& c :
       {RmsCase{DType::kQ8_0, 0.0039, 0.0057}, RmsCase{DType::kQ6_K, 0.015, 0.02},
        RmsCase{DType::kQ4_K, 0.065, 0.085}}) {
    SCOPED_TRACE(DTypeName(c.dtype));
    const std::vector<float> u = RandomVector(256 * 64, 11);
    const std::vector<float> g = Gaussian(256 * 64, 12);
    const double eu = RelativeRmsError(u, RoundTrip(c.dtype, u));
    const double eg = RelativeRmsError(g, RoundTrip(c.dtype, g));
    RecordProperty(std::string(DTypeName(c.dtype)) + "_uniform", std::to_string(eu));
    RecordProperty(std::string(DTypeName(c.dtype)) + "_gaussian", std::to_string(eg));
    EXPECT_LE(eu, c.uniform_bound);
    EXPECT_LE(eg, c.gaussian_bound);
    EXPECT_GT(eu, 0.0);  // the data is not on the grid by accident
  }
}

TEST(QuantizeTest, ZeroBlocksStayZero) {
  for (DType dtype : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
    const std::vector<float> x(256, 0.0f);
    EXPECT_EQ(RoundTrip(dtype, x), x) << DTypeName(dtype);
  }
}

TEST(QuantizeTest, PlainTypesRoundOnce) {
  const std::vector<float> x = RandomVector(64, 5);
  const std::vector<float> f32 = RoundTrip(DType::kF32, x);
  EXPECT_EQ(f32, x);
  const std::vector<float> bf16 = RoundTrip(DType::kBF16, x);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bf16[i], BF16ToF32(F32ToBF16(x[i])));
}

TEST(QuantizeTest, RejectsPartialBlocksAndUnknownTypes) {
  std::vector<float> x(300);
  std::vector<uint8_t> out(1024);
  Status s = QuantizeRow(DType::kQ4_K, x.data(), 300, out.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Q4_K"), std::string::npos);
  EXPECT_NE(s.message().find("256"), std::string::npos);
  s = QuantizeRow(DType::kQ5_K, x.data(), 256, out.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Q5_K"), std::string::npos);
}

// Every ISA's quantizer writes the reference's blocks exactly: the same rounding mode, the same
// float operations. Odd row counts, a stride past `in`, an all-zero scale group (d = 0) and a
// group of repeated values are in the data.
TEST(QuantizeTest, IsaActivationQuantizersEqualTheReference) {
  for (int64_t scale_block : {32, 256}) {
    for (int64_t rows : {1, 3, 7}) {
      const int64_t in = 5 * scale_block, stride = in + 3, nb = in / 32;
      std::vector<float> x = RandomVector(rows * stride, 17 + rows, 4.0f);
      std::fill(x.begin(), x.begin() + scale_block, 0.0f);
      for (int64_t i = 0; i < 32; ++i) x[scale_block + i] = 0.5f * static_cast<float>(i % 7 - 3);
      std::vector<ActBlock> want(rows * nb);
      QuantizeActivations(x.data(), rows, stride, in, want.data(), scale_block);
      for (Isa isa : testing::AvailableIsas()) {
        SCOPED_TRACE(::testing::Message()
                     << IsaName(isa) << " scale_block " << scale_block << " rows " << rows);
        std::vector<ActBlock> got(rows * nb);
        GetKernelTable(isa).quantize_activations(x.data(), rows, stride, in, got.data(),
                                                 scale_block);
        for (int64_t b = 0; b < rows * nb; ++b) {
          ASSERT_EQ(got[b].d, want[b].d) << "block " << b;
          ASSERT_EQ(got[b].sum[0], want[b].sum[0]) << "block " << b;
          ASSERT_EQ(got[b].sum[1], want[b].sum[1]) << "block " << b;
          for (int i = 0; i < 32; ++i) ASSERT_EQ(got[b].q[i], want[b].q[i]) << "block " << b;
        }
      }
    }
  }
}

TEST(QuantizeTest, ActivationBlocksHoldLevelsAndSums) {
  for (int64_t scale_block : {32, 256}) {
    SCOPED_TRACE(scale_block);
    const int64_t in = 3 * scale_block, rows = 2, stride = in + 4, nb = in / 32;
    const std::vector<float> x = RandomVector(rows * stride, 9, 3.0f);
    std::vector<ActBlock> q(rows * nb);
    QuantizeActivations(x.data(), rows, stride, in, q.data(), scale_block);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t b = 0; b < nb; ++b) {
        const ActBlock& a = q[r * nb + b];
        const int64_t s0 = b * 32 / scale_block * scale_block;
        float amax = 0;
        for (int64_t i = 0; i < scale_block; ++i)
          amax = std::max(amax, std::abs(x[r * stride + s0 + i]));
        int sums[2] = {0, 0};
        for (int i = 0; i < 32; ++i) {
          const float v = x[r * stride + b * 32 + i];
          ASSERT_LE(std::abs(a.d * a.q[i] - v), a.d / 2 * (1 + 1e-5));
          sums[i / 16] += a.q[i];
        }
        EXPECT_FLOAT_EQ(a.d, amax / 127);
        EXPECT_EQ(a.sum[0], sums[0]);
        EXPECT_EQ(a.sum[1], sums[1]);
      }
    }
  }
}

}  // namespace
}  // namespace clover::kernels
