// GgufValue: one GGUF metadata value (scalar, string or nested array) and ggml type ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/dtype.h"

namespace clover::io {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint64_t kGgufDefaultAlignment = 32;

// GGUF metadata value types (gguf_type in the format definition).
enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
const char* GgufTypeName(GgufType type);

struct GgufValue {
  GgufType type = GgufType::kU32;
  GgufType array_type = GgufType::kU8;  // element type when type == kArray
  // Integers of every width live in `u64`/`i64` (signed types in i64), floats in `f64`.
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> value;

  static GgufValue U8(uint8_t v) { return Make(GgufType::kU8, uint64_t{v}); }
  static GgufValue U32(uint32_t v) { return Make(GgufType::kU32, uint64_t{v}); }
  static GgufValue U64(uint64_t v) { return Make(GgufType::kU64, v); }
  static GgufValue I8(int8_t v) { return Make(GgufType::kI8, int64_t{v}); }
  static GgufValue I16(int16_t v) { return Make(GgufType::kI16, int64_t{v}); }
  static GgufValue U16(uint16_t v) { return Make(GgufType::kU16, uint64_t{v}); }
  static GgufValue I32(int32_t v) { return Make(GgufType::kI32, int64_t{v}); }
  static GgufValue I64(int64_t v) { return Make(GgufType::kI64, v); }
  static GgufValue F32(float v) { return Make(GgufType::kF32, double{v}); }
  static GgufValue F64(double v) { return Make(GgufType::kF64, v); }
  static GgufValue Bool(bool v) { return Make(GgufType::kBool, v); }
  static GgufValue String(std::string v) { return Make(GgufType::kString, std::move(v)); }
  static GgufValue Array(GgufType element_type, std::vector<GgufValue> items);

  bool is_integer() const;
  const std::vector<GgufValue>& array() const { return std::get<std::vector<GgufValue>>(value); }
  // Returns a short rendering for diagnostics and `clover info` (arrays abbreviated).
  std::string ToString() const;

 private:
  template <typename T>
  static GgufValue Make(GgufType t, T v) {
    GgufValue g;
    g.type = t;
    g.value = std::move(v);
    return g;
  }
};

// ggml tensor type id <-> DType (nullopt for ids we do not know).
std::optional<DType> DTypeFromGgmlType(uint32_t ggml_type);
std::optional<uint32_t> GgmlTypeFromDType(DType dtype);

}  // namespace clover::io
