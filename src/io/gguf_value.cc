// GgufValue helpers and the ggml type id table.
#include "io/gguf_value.h"

#include <cstdio>

namespace clover::io {

const char* GgufTypeName(GgufType type) {
  switch (type) {
    case GgufType::kU8: return "u8";
    case GgufType::kI8: return "i8";
    case GgufType::kU16: return "u16";
    case GgufType::kI16: return "i16";
    case GgufType::kU32: return "u32";
    case GgufType::kI32: return "i32";
    case GgufType::kF32: return "f32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kU64: return "u64";
    case GgufType::kI64: return "i64";
    case GgufType::kF64: return "f64";
  }
  return "unknown";
}

GgufValue GgufValue::Array(GgufType element_type, std::vector<GgufValue> items) {
  GgufValue g;
  g.type = GgufType::kArray;
  g.array_type = element_type;
  g.value = std::move(items);
  return g;
}

bool GgufValue::is_integer() const {
  return std::holds_alternative<uint64_t>(value) || std::holds_alternative<int64_t>(value);
}

std::string GgufValue::ToString() const {
  if (auto* u = std::get_if<uint64_t>(&value)) return std::to_string(*u);
  if (auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (auto* f = std::get_if<double>(&value)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", *f);
    return buf;
  }
  if (auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (auto* s = std::get_if<std::string>(&value)) return "\"" + *s + "\"";
  const auto& items = array();
  constexpr size_t kShown = 8;
  std::string out = "[";
  for (size_t i = 0; i < items.size() && i < kShown; ++i) {
    if (i) out += ", ";
    out += items[i].ToString();
  }
  if (items.size() > kShown) out += ", ... (" + std::to_string(items.size()) + " items)";
  return out + "]";
}

namespace {
struct GgmlTypeEntry {
  uint32_t id;
  DType dtype;
};
// ggml_type ids from the GGUF format definition.
constexpr GgmlTypeEntry kGgmlTypes[] = {
    {0, DType::kF32},   {1, DType::kF16},   {2, DType::kQ4_0},  {3, DType::kQ4_1},
    {6, DType::kQ5_0},  {7, DType::kQ5_1},  {8, DType::kQ8_0},  {10, DType::kQ2_K},
    {11, DType::kQ3_K}, {12, DType::kQ4_K}, {13, DType::kQ5_K}, {14, DType::kQ6_K},
    {15, DType::kQ8_K}, {24, DType::kI8},   {25, DType::kI16},  {26, DType::kI32},
    {27, DType::kI64},  {28, DType::kF64},  {30, DType::kBF16},
};
}  // namespace

std::optional<DType> DTypeFromGgmlType(uint32_t ggml_type) {
  for (const auto& e : kGgmlTypes) {
    if (e.id == ggml_type) return e.dtype;
  }
  return std::nullopt;
}

std::optional<uint32_t> GgmlTypeFromDType(DType dtype) {
  for (const auto& e : kGgmlTypes) {
    if (e.dtype == dtype) return e.id;
  }
  return std::nullopt;
}

}  // namespace clover::io
