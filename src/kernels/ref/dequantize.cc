// Reference dequantization, written from the ggml block layout definitions.
#include "kernels/ref/dequantize.h"

#include <cstring>
#include <string>

namespace clover::kernels::ref {
namespace {

uint16_t LoadU16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
float LoadHalf(const uint8_t* p) { return F16ToF32(LoadU16(p)); }

// Q8_0: f16 scale, 32 x int8.
void DequantQ8_0(const uint8_t* b, float* y) {
  const float d = LoadHalf(b);
  for (int j = 0; j < 32; ++j) y[j] = d * static_cast<int8_t>(b[2 + j]);
}

// Q4_0: f16 scale, 16 bytes; low nibbles are elements 0..15, high nibbles 16..31, offset 8.
void DequantQ4_0(const uint8_t* b, float* y) {
  const float d = LoadHalf(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * ((qs[j] & 0x0F) - 8);
    y[j + 16] = d * ((qs[j] >> 4) - 8);
  }
}

// Q4_1: f16 scale, f16 min, 16 bytes of nibbles (unsigned).
void DequantQ4_1(const uint8_t* b, float* y) {
  const float d = LoadHalf(b);
  const float m = LoadHalf(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * (qs[j] & 0x0F) + m;
    y[j + 16] = d * (qs[j] >> 4) + m;
  }
}

// Q5_0/Q5_1: nibbles plus a 32-bit mask holding bit 4 of every element (bit j for element j).
void DequantQ5(const uint8_t* qh_bytes, const uint8_t* qs, float d, float m, int offset, float* y) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    const int hi0 = ((qh >> j) & 1) << 4;
    const int hi1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = d * (((qs[j] & 0x0F) | hi0) - offset) + m;
    y[j + 16] = d * (((qs[j] >> 4) | hi1) - offset) + m;
  }
}

// 6-bit scale and min of sub-block `j` (0..7) packed in the 12 scale bytes of Q4_K/Q5_K.
void ScaleMinK4(int j, const uint8_t* q, int* sc, int* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
    *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_K: f16 d, f16 dmin, 12 scale bytes, 128 nibble bytes; 8 sub-blocks of 32, each 64-element
// chunk takes the low nibbles of 32 bytes then the high nibbles.
void DequantQ4_K(const uint8_t* b, float* y) {
  const float d = LoadHalf(b);
  const float dmin = LoadHalf(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int chunk = 0; chunk < 4; ++chunk) {
    int sc, mn;
    ScaleMinK4(2 * chunk, scales, &sc, &mn);
    const float d1 = d * sc, m1 = dmin * mn;
    ScaleMinK4(2 * chunk + 1, scales, &sc, &mn);
    const float d2 = d * sc, m2 = dmin * mn;
    for (int l = 0; l < 32; ++l) y[l] = d1 * (q[l] & 0x0F) - m1;
    for (int l = 0; l < 32; ++l) y[32 + l] = d2 * (q[l] >> 4) - m2;
    q += 32;
    y += 64;
  }
}

// Q5_K: Q4_K plus 32 bytes of high bits; chunk c uses bits 2c (low half) and 2c+1 (high half).
void DequantQ5_K(const uint8_t* b, float* y) {
  const float d = LoadHalf(b);
  const float dmin = LoadHalf(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  for (int chunk = 0; chunk < 4; ++chunk) {
    int sc, mn;
    ScaleMinK4(2 * chunk, scales, &sc, &mn);
    const float d1 = d * sc, m1 = dmin * mn;
    ScaleMinK4(2 * chunk + 1, scales, &sc, &mn);
    const float d2 = d * sc, m2 = dmin * mn;
    const uint8_t u1 = static_cast<uint8_t>(1u << (2 * chunk));
    const uint8_t u2 = static_cast<uint8_t>(2u << (2 * chunk));
    for (int l = 0; l < 32; ++l) y[l] = d1 * ((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) y[32 + l] = d2 * ((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
    y += 64;
  }
}

// Q6_K: 128 low-nibble bytes, 64 bytes of 2-bit highs, 16 int8 scales, f16 d; signed offset 32.
void DequantQ6_K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = LoadHalf(b + 208);
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * sc[is] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// Q8_K: f32 scale, 256 x int8, then 16 int16 block sums (unused for decoding).
void DequantQ8_K(const uint8_t* b, float* y) {
  float d;
  std::memcpy(&d, b, 4);
  for (int j = 0; j < 256; ++j) y[j] = d * static_cast<int8_t>(b[4 + j]);
}

}  // namespace

bool DequantizeSupported(DType dtype) {
  switch (dtype) {
    case DType::kF32: case DType::kF16: case DType::kBF16: case DType::kF8E4M3:
    case DType::kQ8_0: case DType::kQ4_0: case DType::kQ4_1: case DType::kQ5_0: case DType::kQ5_1:
    case DType::kQ4_K: case DType::kQ5_K: case DType::kQ6_K: case DType::kQ8_K:
      return true;
    default:
      return false;
  }
}

Status DequantizeRow(DType dtype, const void* src, int64_t n, float* dst) {
  if (!DequantizeSupported(dtype)) {
    return Unimplemented(std::string("no reference dequantization for dtype ") + DTypeName(dtype));
  }
  const int64_t block = DTypeBlockSize(dtype);
  if (n < 0 || n % block != 0) {
    return InvalidArgument("dequantize " + std::string(DTypeName(dtype)) + ": " + std::to_string(n) +
                           " elements is not a multiple of the block size " + std::to_string(block));
  }
  const auto* p = static_cast<const uint8_t*>(src);
  switch (dtype) {
    case DType::kF32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return Status::Ok();
    case DType::kF16: for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(LoadU16(p + 2 * i)); return Status::Ok();
    case DType::kBF16: for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToF32(LoadU16(p + 2 * i)); return Status::Ok();
    case DType::kF8E4M3: for (int64_t i = 0; i < n; ++i) dst[i] = F8E4M3ToF32(p[i]); return Status::Ok();
    default: break;
  }
  const int64_t bytes = DTypeBlockBytes(dtype);
  for (int64_t b = 0; b < n / block; ++b) {
    const uint8_t* blk = p + b * bytes;
    float* y = dst + b * block;
    switch (dtype) {
      case DType::kQ8_0: DequantQ8_0(blk, y); break;
      case DType::kQ4_0: DequantQ4_0(blk, y); break;
      case DType::kQ4_1: DequantQ4_1(blk, y); break;
      case DType::kQ5_0: DequantQ5(blk + 2, blk + 6, LoadHalf(blk), 0.0f, 16, y); break;
      case DType::kQ5_1: DequantQ5(blk + 4, blk + 8, LoadHalf(blk), LoadHalf(blk + 2), 0, y); break;
      case DType::kQ4_K: DequantQ4_K(blk, y); break;
      case DType::kQ5_K: DequantQ5_K(blk, y); break;
      case DType::kQ6_K: DequantQ6_K(blk, y); break;
      case DType::kQ8_K: DequantQ8_K(blk, y); break;
      default: return Internal("dequantize: unhandled dtype");
    }
  }
  return Status::Ok();
}

}  // namespace clover::kernels::ref
