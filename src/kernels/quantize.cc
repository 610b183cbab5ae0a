// Quantizers, written from the GGUF block layouts that ref/dequantize.cc decodes.
#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace clover::kernels {
namespace {

void StoreHalf(uint8_t* p, float v) {
  const uint16_t h = F32ToF16(v);
  std::memcpy(p, &h, 2);
}

// Returns `v` after a round trip through f16, so that later steps see the scale the file holds.
float RoundToHalf(float v) { return F16ToF32(F32ToF16(v)); }

int Clamp(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }

int RoundInt(float v) { return static_cast<int>(std::lrintf(v)); }

// Q8_0 block: f16 d = max|x| / 127 and 32 int8.
void QuantizeQ8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[i]));
  const float d = RoundToHalf(amax / 127.0f);
  const float id = d > 0.0f ? 1.0f / d : 0.0f;
  StoreHalf(b, d);
  for (int i = 0; i < 32; ++i)
    b[2 + i] = static_cast<uint8_t>(Clamp(RoundInt(x[i] * id), -127, 127));
}

// Candidate scales tried around the range-filling one (step sizes `kSteps` / 10 levels apart).
constexpr int kSteps = 6;

// The best `x ~= scale * q - min` over q in [0, 15] for one 32-element sub-block, with
// min >= 0 (the format stores it unsigned): range-filling steps and their neighbours, each
// refitted by least squares given the integer levels.
void FitScaleMin(const float* x, float* scale, float* min) {
  float lo = 0.0f, hi = -INFINITY;
  for (int i = 0; i < 32; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  *scale = 0.0f;
  *min = -lo;
  if (hi <= lo) return;
  float best_err = INFINITY;
  for (int k = -kSteps; k <= kSteps; ++k) {
    const float iscale = (15.0f + 0.1f * k) / (hi - lo);
    double sq = 0, sq2 = 0, sx = 0, sqx = 0;
    int q[32];
    for (int i = 0; i < 32; ++i) {
      q[i] = Clamp(RoundInt((x[i] - lo) * iscale), 0, 15);
      sq += q[i];
      sq2 += double(q[i]) * q[i];
      sx += x[i];
      sqx += double(q[i]) * x[i];
    }
    // Least squares of x ~= s * q + b, with b = -min <= 0.
    const double det = 32 * sq2 - sq * sq;
    double s = det > 0 ? (32 * sqx - sq * sx) / det : 0.0;
    double b = det > 0 ? (sq2 * sx - sq * sqx) / det : lo;
    if (b > 0) {
      b = 0;
      s = sq2 > 0 ? sqx / sq2 : 0.0;
    }
    if (s < 0) continue;
    double err = 0;
    for (int i = 0; i < 32; ++i) {
      const double e = s * q[i] + b - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      *scale = static_cast<float>(s);
      *min = static_cast<float>(-b);
    }
  }
}

// Q4_K super-block: f16 d, f16 dmin, 8 x (6-bit scale, 6-bit min) in 12 bytes, 128 nibble bytes.
void QuantizeQ4_K(const float* x, uint8_t* b) {
  float scales[8], mins[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    FitScaleMin(x + 32 * j, &scales[j], &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float d = RoundToHalf(max_scale / 63.0f);
  const float dmin = RoundToHalf(max_min / 63.0f);
  StoreHalf(b, d);
  StoreHalf(b + 2, dmin);
  int sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = d > 0 ? Clamp(RoundInt(scales[j] / d), 0, 63) : 0;
    mn[j] = dmin > 0 ? Clamp(RoundInt(mins[j] / dmin), 0, 63) : 0;
  }
  uint8_t* packed = b + 4;
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(mn[j] | ((mn[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0x0F) | ((mn[j + 4] & 0x0F) << 4));
  }
  uint8_t q[256];
  for (int j = 0; j < 8; ++j) {
    const float step = d * sc[j];
    const float m = dmin * mn[j];
    const float istep = step > 0 ? 1.0f / step : 0.0f;
    for (int i = 0; i < 32; ++i)
      q[32 * j + i] = static_cast<uint8_t>(Clamp(RoundInt((x[32 * j + i] + m) * istep), 0, 15));
  }
  uint8_t* nibbles = b + 16;
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      nibbles[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

// The best `x ~= scale * q` over q in [-32, 31] for one 16-element group: the largest |x| maps to
// -32 (the wider side) at the central candidate, neighbours are refitted by least squares.
float FitScaleQ6(const float* x) {
  float peak = 0.0f;
  for (int i = 0; i < 16; ++i)
    if (std::abs(x[i]) > std::abs(peak)) peak = x[i];
  if (peak == 0.0f) return 0.0f;
  float best = 0.0f, best_err = INFINITY;
  for (int k = -kSteps; k <= kSteps; ++k) {
    const float iscale = -(32.0f + 0.1f * k) / peak;
    double sqx = 0, sq2 = 0;
    int q[16];
    for (int i = 0; i < 16; ++i) {
      q[i] = Clamp(RoundInt(x[i] * iscale), -32, 31);
      sqx += double(q[i]) * x[i];
      sq2 += double(q[i]) * q[i];
    }
    if (sq2 == 0) continue;
    const double s = sqx / sq2;
    double err = 0;
    for (int i = 0; i < 16; ++i) {
      const double e = s * q[i] - x[i];
      err += e * e;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      best = static_cast<float>(s);
    }
  }
  return best;
}

// Q6_K super-block: 128 low-nibble bytes, 64 bytes of 2-bit highs, 16 int8 scales, f16 d.
void QuantizeQ6_K(const float* x, uint8_t* b) {
  float scales[16];
  float max_abs = 0.0f;
  for (int g = 0; g < 16; ++g) {
    scales[g] = FitScaleQ6(x + 16 * g);
    max_abs = std::max(max_abs, std::abs(scales[g]));
  }
  const float d = RoundToHalf(max_abs / 127.0f);
  int8_t sc[16];
  uint8_t q[256];
  for (int g = 0; g < 16; ++g) {
    sc[g] = static_cast<int8_t>(d > 0 ? Clamp(RoundInt(scales[g] / d), -127, 127) : 0);
    const float step = d * sc[g];
    const float istep = step != 0.0f ? 1.0f / step : 0.0f;
    for (int i = 0; i < 16; ++i)
      q[16 * g + i] = static_cast<uint8_t>(Clamp(RoundInt(x[16 * g + i] * istep), -32, 31) + 32);
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  for (int h = 0; h < 2; ++h) {
    const uint8_t* qq = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int q1 = qq[l], q2 = qq[l + 32], q3 = qq[l + 64], q4 = qq[l + 96];
      ql[64 * h + l] = static_cast<uint8_t>((q1 & 0x0F) | ((q3 & 0x0F) << 4));
      ql[64 * h + 32 + l] = static_cast<uint8_t>((q2 & 0x0F) | ((q4 & 0x0F) << 4));
      qh[32 * h + l] =
          static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
  std::memcpy(b + 192, sc, 16);
  StoreHalf(b + 208, d);
}

// The activation quantizer's per-ISA pieces (cpu/quantize_activations-inl.h), in scalar form.
float AbsMax(const float* v, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::abs(v[i]));
  return amax;
}

float BroadcastScale(float id) { return id; }

void QuantizeBlock(const float* v, float id, ActBlock& a) {
  int sum[2] = {0, 0};
  for (int i = 0; i < 32; ++i) {
    const int q = Clamp(RoundInt(v[i] * id), -127, 127);
    a.q[i] = static_cast<int8_t>(q);
    sum[i / 16] += q;
  }
  a.sum[0] = static_cast<int16_t>(sum[0]);
  a.sum[1] = static_cast<int16_t>(sum[1]);
}

}  // namespace

#include "kernels/cpu/quantize_activations-inl.h"

bool QuantizeSupported(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ8_0:
    case DType::kQ4_K:
    case DType::kQ6_K:
      return true;
    default:
      return false;
  }
}

Status QuantizeRow(DType dtype, const float* x, int64_t n, void* dst) {
  if (!QuantizeSupported(dtype)) {
    return Unimplemented(std::string("quantize: no quantizer for dtype ") + DTypeName(dtype) +
                         " (expected F32, F16, BF16, Q8_0, Q4_K or Q6_K)");
  }
  const int64_t block = DTypeBlockSize(dtype);
  if (n < 0 || n % block != 0) {
    return InvalidArgument("quantize " + std::string(DTypeName(dtype)) + ": " + std::to_string(n) +
                           " elements is not a multiple of the block size " +
                           std::to_string(block));
  }
  auto* p = static_cast<uint8_t*>(dst);
  const int64_t bytes = DTypeBlockBytes(dtype);
  for (int64_t i = 0; i < n / block; ++i) {
    const float* v = x + i * block;
    uint8_t* b = p + i * bytes;
    switch (dtype) {
      case DType::kF32:
        std::memcpy(b, v, 4);
        break;
      case DType::kF16: {
        const uint16_t h = F32ToF16(*v);
        std::memcpy(b, &h, 2);
        break;
      }
      case DType::kBF16: {
        const uint16_t h = F32ToBF16(*v);
        std::memcpy(b, &h, 2);
        break;
      }
      case DType::kQ8_0:
        QuantizeQ8_0(v, b);
        break;
      case DType::kQ4_K:
        QuantizeQ4_K(v, b);
        break;
      case DType::kQ6_K:
        QuantizeQ6_K(v, b);
        break;
      default:
        return Internal("quantize: unhandled dtype");
    }
  }
  return Status::Ok();
}

}  // namespace clover::kernels
