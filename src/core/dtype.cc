// DType tables and scalar conversions.
#include "core/dtype.h"

#include <cmath>
#include <limits>

namespace clover {
namespace {

struct DTypeInfo {
  const char* name;
  int64_t block_size;
  int64_t block_bytes;
  bool quantized;
};

// Block layouts follow ggml's `ggml_type_traits` (block_size, type_size).
constexpr DTypeInfo kDTypeInfo[kDTypeCount] = {
    {"F32", 1, 4, false},    {"F16", 1, 2, false},    {"BF16", 1, 2, false},
    {"F64", 1, 8, false},    {"F8_E4M3", 1, 1, false}, {"I8", 1, 1, false},
    {"I16", 1, 2, false},    {"I32", 1, 4, false},    {"I64", 1, 8, false},
    {"U8", 1, 1, false},     {"BOOL", 1, 1, false},   {"Q4_0", 32, 18, true},
    {"Q4_1", 32, 20, true},  {"Q5_0", 32, 22, true},  {"Q5_1", 32, 24, true},
    {"Q8_0", 32, 34, true},  {"Q2_K", 256, 84, true}, {"Q3_K", 256, 110, true},
    {"Q4_K", 256, 144, true}, {"Q5_K", 256, 176, true}, {"Q6_K", 256, 210, true},
    {"Q8_K", 256, 292, true},
};

const DTypeInfo& Info(DType d) { return kDTypeInfo[static_cast<int>(d)]; }

}  // namespace

const char* DTypeName(DType dtype) { return Info(dtype).name; }

std::optional<DType> DTypeFromSafetensorsName(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto d = static_cast<DType>(i);
    if (Info(d).quantized) continue;
    if (name == Info(d).name) return d;
  }
  return std::nullopt;
}

int64_t DTypeBlockSize(DType dtype) { return Info(dtype).block_size; }
int64_t DTypeBlockBytes(DType dtype) { return Info(dtype).block_bytes; }
bool DTypeIsQuantized(DType dtype) { return Info(dtype).quantized; }

std::optional<uint64_t> DTypeBytes(DType dtype, uint64_t n_elements) {
  const uint64_t bs = static_cast<uint64_t>(Info(dtype).block_size);
  const uint64_t bb = static_cast<uint64_t>(Info(dtype).block_bytes);
  if (n_elements % bs != 0) return std::nullopt;
  const uint64_t blocks = n_elements / bs;
  if (blocks != 0 && bb > std::numeric_limits<uint64_t>::max() / blocks) return std::nullopt;
  return blocks * bb;
}

uint16_t F32ToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t F32ToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;           // NaN
  if (abs >= 0x47800000u) return sign | 0x7c00u;          // overflow -> inf (65520 rounds up)
  if (abs < 0x38800000u) {                                // subnormal or zero in f16
    if (abs < 0x33000000u) return sign;                   // below half the smallest subnormal
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23); // 14..24
    const uint32_t half = 1u << (shift - 1);
    uint32_t v = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    if (rem > half || (rem == half && (v & 1u))) ++v;
    return sign | static_cast<uint16_t>(v);
  }
  uint32_t v = ((abs >> 23) - 127 + 15) << 10 | (abs & 0x7fffffu) >> 13;
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;  // may carry into exponent: correct
  return sign | static_cast<uint16_t>(v);
}

float F8E4M3ToF32(uint8_t v) {
  // OCP FP8 E4M3 (as in safetensors F8_E4M3): bias 7, no infinities, S.1111.111 is NaN.
  const float sign = (v & 0x80u) ? -1.0f : 1.0f;
  const int exp = (v >> 3) & 0xf;
  const int mant = v & 0x7;
  if (exp == 0xf && mant == 0x7) return std::numeric_limits<float>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
}

}  // namespace clover
