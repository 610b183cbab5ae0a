// Tests of dtype tables and scalar conversions.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/status.h"

namespace clover {
namespace {

TEST(DType, BlockSizes) {
  EXPECT_EQ(DTypeBytes(DType::kF32, 10), 40u);
  EXPECT_EQ(DTypeBytes(DType::kQ8_0, 64), 68u);
  EXPECT_EQ(DTypeBytes(DType::kQ4_K, 512), 288u);
  EXPECT_EQ(DTypeBytes(DType::kQ6_K, 256), 210u);
  EXPECT_FALSE(DTypeBytes(DType::kQ4_0, 33).has_value());
  EXPECT_FALSE(DTypeBytes(DType::kF64, UINT64_MAX / 2).has_value());
  EXPECT_EQ(DTypeFromSafetensorsName("BF16"), DType::kBF16);
  EXPECT_EQ(DTypeFromSafetensorsName("F8_E4M3"), DType::kF8E4M3);
  EXPECT_FALSE(DTypeFromSafetensorsName("Q4_K").has_value());
}

TEST(DType, F16RoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(F32ToF16(f), h) << h;
  }
}

TEST(DType, F16RoundsToNearestEven) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(1e6f), 0x7c00);
  EXPECT_EQ(F32ToF16(1.0f + 1.0f / 2048), 0x3c00);  // tie -> even
  EXPECT_EQ(F32ToF16(1.0f + 3.0f / 2048), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
}

TEST(DType, BF16RoundTrip) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int i = 0; i < 10000; ++i) {
    const float f = dist(rng);
    const float back = BF16ToF32(F32ToBF16(f));
    EXPECT_LE(std::fabs(back - f), std::fabs(f) * (1.0f / 256));
    EXPECT_EQ(F32ToBF16(back), F32ToBF16(f));
  }
}

TEST(DType, F8E4M3) {
  EXPECT_EQ(F8E4M3ToF32(0x38), 1.0f);
  EXPECT_EQ(F8E4M3ToF32(0x7e), 448.0f);
  EXPECT_EQ(F8E4M3ToF32(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(F8E4M3ToF32(0x7f)));
}

TEST(Status, ResultCarriesValueOrError) {
  Result<int> ok = 3;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  Result<int> bad = NotFound("tensor 'x' in 'f.gguf'");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.status().ToString(), "not_found: tensor 'x' in 'f.gguf'");
}

}  // namespace
}  // namespace clover
