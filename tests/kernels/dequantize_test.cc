// Reference dequantization: hand-built blocks whose decoded values are known element by element.
#include "kernels/ref/dequantize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace clover::kernels::ref {
namespace {

void PutHalf(uint8_t* p, float v) {
  const uint16_t h = F32ToF16(v);
  std::memcpy(p, &h, 2);
}

std::vector<float> Decode(DType dtype, const std::vector<uint8_t>& block, int64_t n) {
  std::vector<float> out(n);
  Status s = DequantizeRow(dtype, block.data(), n, out.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// A value in [0, 2^bits) for element k, varied so that every bit position gets exercised.
int Code(int k, int bits) { return (k * 7 + 3) % (1 << bits); }

TEST(DequantizeTest, PlainFloats) {
  const std::vector<uint8_t> f16 = {0x00, 0x3C, 0x00, 0xC0};  // 1.0, -2.0
  EXPECT_EQ(Decode(DType::kF16, f16, 2), (std::vector<float>{1.0f, -2.0f}));
  const std::vector<uint8_t> bf16 = {0x80, 0x3F, 0x40, 0xC0};  // 1.0, -3.0
  EXPECT_EQ(Decode(DType::kBF16, bf16, 2), (std::vector<float>{1.0f, -3.0f}));
  const std::vector<uint8_t> f8 = {0x38, 0x40, 0xB8, 0x00};  // 1, 2, -1, 0
  EXPECT_EQ(Decode(DType::kF8E4M3, f8, 4), (std::vector<float>{1.0f, 2.0f, -1.0f, 0.0f}));
  std::vector<uint8_t> f32(8);
  const float vals[2] = {0.5f, -7.25f};
  std::memcpy(f32.data(), vals, 8);
  EXPECT_EQ(Decode(DType::kF32, f32, 2), (std::vector<float>{0.5f, -7.25f}));
}

TEST(DequantizeTest, Q8_0) {
  std::vector<uint8_t> b(34);
  PutHalf(b.data(), 0.5f);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  const auto y = Decode(DType::kQ8_0, b, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * (j - 16)) << j;
}

// Q4_0/Q4_1 element k < 16 is the low nibble of byte k, element k + 16 the high nibble.
void PutNibble32(uint8_t* qs, int k, int v) {
  if (k < 16) qs[k] = static_cast<uint8_t>((qs[k] & 0xF0) | v);
  else qs[k - 16] = static_cast<uint8_t>((qs[k - 16] & 0x0F) | (v << 4));
}

TEST(DequantizeTest, Q4_0AndQ4_1) {
  std::vector<uint8_t> b0(18), b1(20);
  PutHalf(b0.data(), 2.0f);
  PutHalf(b1.data(), 1.0f);
  PutHalf(b1.data() + 2, -3.0f);
  for (int k = 0; k < 32; ++k) {
    PutNibble32(b0.data() + 2, k, Code(k, 4));
    PutNibble32(b1.data() + 4, k, Code(k, 4));
  }
  const auto y0 = Decode(DType::kQ4_0, b0, 32);
  const auto y1 = Decode(DType::kQ4_1, b1, 32);
  for (int k = 0; k < 32; ++k) {
    EXPECT_EQ(y0[k], 2.0f * (Code(k, 4) - 8)) << k;
    EXPECT_EQ(y1[k], Code(k, 4) - 3.0f) << k;
  }
}

TEST(DequantizeTest, Q5_0AndQ5_1) {
  std::vector<uint8_t> b0(22), b1(24);
  PutHalf(b0.data(), 1.0f);
  PutHalf(b1.data(), 0.5f);
  PutHalf(b1.data() + 2, 1.0f);
  uint32_t qh = 0;
  for (int k = 0; k < 32; ++k) {
    const int v = Code(k, 5);
    PutNibble32(b0.data() + 6, k, v & 0xF);
    PutNibble32(b1.data() + 8, k, v & 0xF);
    qh |= static_cast<uint32_t>(v >> 4) << k;  // bit k holds bit 4 of element k
  }
  std::memcpy(b0.data() + 2, &qh, 4);
  std::memcpy(b1.data() + 4, &qh, 4);
  const auto y0 = Decode(DType::kQ5_0, b0, 32);
  const auto y1 = Decode(DType::kQ5_1, b1, 32);
  for (int k = 0; k < 32; ++k) {
    EXPECT_EQ(y0[k], static_cast<float>(Code(k, 5) - 16)) << k;
    EXPECT_EQ(y1[k], 0.5f * Code(k, 5) + 1.0f) << k;
  }
}

// Packs 6-bit scale/min of the 8 sub-blocks into the 12 bytes of Q4_K/Q5_K: sub-blocks 0..3 in
// the low 6 bits of bytes 0..3 (scale) and 4..7 (min); 4..7 split into a low nibble in bytes
// 8..11 and their top 2 bits in the high 2 bits of bytes 0..3 (scale) and 4..7 (min).
void PackScales(uint8_t* q, const int* sc, const int* mn) {
  std::memset(q, 0, 12);
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>(sc[j]);
    q[j + 4] = static_cast<uint8_t>(mn[j]);
  }
  for (int j = 4; j < 8; ++j) {
    q[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((mn[j] & 0xF) << 4));
    q[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
    q[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
  }
}

const int kSc[8] = {1, 63, 17, 40, 33, 5, 60, 48};
const int kMn[8] = {0, 2, 63, 16, 47, 31, 1, 50};

TEST(DequantizeTest, Q4_K) {
  std::vector<uint8_t> b(144);
  PutHalf(b.data(), 0.25f);
  PutHalf(b.data() + 2, 0.5f);
  PackScales(b.data() + 4, kSc, kMn);
  for (int k = 0; k < 256; ++k) {
    // 64-element chunk c: first 32 elements = low nibbles of bytes 32c.., next 32 = high nibbles.
    const int c = k / 64, w = k % 64, byte = 16 + 32 * c + w % 32;
    b[byte] |= static_cast<uint8_t>(w < 32 ? Code(k, 4) : Code(k, 4) << 4);
  }
  const auto y = Decode(DType::kQ4_K, b, 256);
  for (int k = 0; k < 256; ++k) {
    const int sub = k / 32;
    EXPECT_EQ(y[k], 0.25f * kSc[sub] * Code(k, 4) - 0.5f * kMn[sub]) << k;
  }
}

TEST(DequantizeTest, Q5_K) {
  std::vector<uint8_t> b(176);
  PutHalf(b.data(), 0.25f);
  PutHalf(b.data() + 2, 0.5f);
  PackScales(b.data() + 4, kSc, kMn);
  for (int k = 0; k < 256; ++k) {
    const int v = Code(k, 5), c = k / 64, w = k % 64, l = w % 32;
    b[48 + 32 * c + l] |= static_cast<uint8_t>(w < 32 ? (v & 0xF) : (v & 0xF) << 4);
    b[16 + l] |= static_cast<uint8_t>((v >> 4) << (2 * c + (w >= 32)));  // bit 4 of the element
  }
  const auto y = Decode(DType::kQ5_K, b, 256);
  for (int k = 0; k < 256; ++k) {
    const int sub = k / 32;
    EXPECT_EQ(y[k], 0.25f * kSc[sub] * Code(k, 5) - 0.5f * kMn[sub]) << k;
  }
}

TEST(DequantizeTest, Q6_K) {
  std::vector<uint8_t> b(210);
  int8_t scales[16];
  for (int i = 0; i < 16; ++i) scales[i] = static_cast<int8_t>(i * 9 - 70);
  std::memcpy(b.data() + 192, scales, 16);
  PutHalf(b.data() + 208, 0.125f);
  for (int k = 0; k < 256; ++k) {
    // 128-element halves; in each, group g of 32: low/high nibble of ql bytes (g & 1 selects the
    // second 32 bytes, g >= 2 the high nibble), 2 high bits at bit 2g of qh; 16-element scales.
    const int v = Code(k, 6), half = k / 128, g = (k % 128) / 32, l = k % 32;
    const int ql = half * 64 + l + ((g & 1) ? 32 : 0);
    b[ql] |= static_cast<uint8_t>(g < 2 ? (v & 0xF) : (v & 0xF) << 4);
    b[128 + half * 32 + l] |= static_cast<uint8_t>((v >> 4) << (2 * g));
  }
  const auto y = Decode(DType::kQ6_K, b, 256);
  for (int k = 0; k < 256; ++k) {
    const int half = k / 128, g = (k % 128) / 32, l = k % 32;
    const int sc = scales[half * 8 + l / 16 + 2 * g];
    EXPECT_EQ(y[k], 0.125f * sc * (Code(k, 6) - 32)) << k;
  }
}

TEST(DequantizeTest, Q8_K) {
  std::vector<uint8_t> b(292);
  const float d = 0.75f;
  std::memcpy(b.data(), &d, 4);
  for (int k = 0; k < 256; ++k) b[4 + k] = static_cast<uint8_t>(static_cast<int8_t>(k - 128));
  const auto y = Decode(DType::kQ8_K, b, 256);
  for (int k = 0; k < 256; ++k) EXPECT_EQ(y[k], 0.75f * (k - 128)) << k;
}

TEST(DequantizeTest, MultipleBlocksAndErrors) {
  std::vector<uint8_t> b(68, 0);
  PutHalf(b.data(), 1.0f);
  PutHalf(b.data() + 34, 2.0f);
  b[2] = 5;
  b[36] = 5;
  const auto y = Decode(DType::kQ8_0, b, 64);
  EXPECT_EQ(y[0], 5.0f);
  EXPECT_EQ(y[32], 10.0f);
  float out[256];
  EXPECT_EQ(DequantizeRow(DType::kQ8_0, b.data(), 31, out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DequantizeRow(DType::kQ2_K, b.data(), 256, out).code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(DequantizeSupported(DType::kI32));
  EXPECT_TRUE(DequantizeSupported(DType::kQ6_K));
}

}  // namespace
}  // namespace clover::kernels::ref
