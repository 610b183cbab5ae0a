// Element types of tensors (plain and GGUF block-quantized) and scalar conversions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace clover {

// Every tensor element type the engine can name. Quantized types are GGUF block formats:
// `DTypeBlockSize` elements are stored in `DTypeBlockBytes` bytes.
enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kF8E4M3,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kBool,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2_K,
  kQ3_K,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kQ8_K,
};
inline constexpr int kDTypeCount = 22;

// Returns the canonical upper-case name ("F32", "BF16", "Q4_K", ...).
const char* DTypeName(DType dtype);
// Returns the dtype named `name` in safetensors spelling ("F32", "BF16", "F8_E4M3", ...).
std::optional<DType> DTypeFromSafetensorsName(std::string_view name);
// Returns the number of elements in one storage block (1 for plain types, 32 or 256 for quants).
int64_t DTypeBlockSize(DType dtype);
// Returns the number of bytes of one storage block.
int64_t DTypeBlockBytes(DType dtype);
// Returns true for GGUF block-quantized types.
bool DTypeIsQuantized(DType dtype);
// Returns the bytes taken by `n_elements` of `dtype`, or nullopt when `n_elements` is not a
// multiple of the block size or the product overflows.
std::optional<uint64_t> DTypeBytes(DType dtype, uint64_t n_elements);

// Scalar conversions. BF16/F16 rounding is round-to-nearest-even; NaN stays NaN.
inline float BF16ToF32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t F32ToBF16(float f);
float F16ToF32(uint16_t h);
uint16_t F32ToF16(float f);
float F8E4M3ToF32(uint8_t v);

}  // namespace clover
