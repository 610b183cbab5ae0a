// GGUF reader: bounded parsing of header, metadata, tensor infos and data layout.
#include "io/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace clover::io {
namespace {

constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;

// Reads little-endian fields from a byte span; every read is bounds-checked.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& label) : bytes_(bytes), label_(label) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }

  Status Read(void* dst, uint64_t n, const std::string& what) {
    if (n > remaining()) {
      return DataLoss(label_ + ": truncated GGUF file: " + what + " at offset " + std::to_string(pos_) +
                      " needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left");
    }
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Result<T> Get(const std::string& what) {
    T v{};
    CLOVER_TRY(Read(&v, sizeof(T), what));
    return v;
  }
  Result<std::string> String(const std::string& what) {
    CLOVER_ASSIGN_OR_RETURN(uint64_t len, Get<uint64_t>(what + " length"));
    if (len > remaining()) {
      return DataLoss(label_ + ": " + what + " length " + std::to_string(len) + " at offset " +
                      std::to_string(pos_ - 8) + " runs past the end of the file (" +
                      std::to_string(remaining()) + " bytes left)");
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& label_;
  uint64_t pos_ = 0;
};

// Smallest encoding of one value of `type`, used to bound element counts by the bytes left.
uint64_t MinEncodedSize(GgufType type) {
  switch (type) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: case GgufType::kString: return 8;
    case GgufType::kArray: return 12;
  }
  return 1;
}

bool KnownType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kF64); }

Result<GgufValue> ReadValue(Cursor& c, GgufType type, const std::string& key, int depth,
                            const std::string& label) {
  const std::string what = "value of '" + key + "'";
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::kU8: { CLOVER_ASSIGN_OR_RETURN(uint8_t x, c.Get<uint8_t>(what)); v.value = uint64_t{x}; break; }
    case GgufType::kI8: { CLOVER_ASSIGN_OR_RETURN(int8_t x, c.Get<int8_t>(what)); v.value = int64_t{x}; break; }
    case GgufType::kU16: { CLOVER_ASSIGN_OR_RETURN(uint16_t x, c.Get<uint16_t>(what)); v.value = uint64_t{x}; break; }
    case GgufType::kI16: { CLOVER_ASSIGN_OR_RETURN(int16_t x, c.Get<int16_t>(what)); v.value = int64_t{x}; break; }
    case GgufType::kU32: { CLOVER_ASSIGN_OR_RETURN(uint32_t x, c.Get<uint32_t>(what)); v.value = uint64_t{x}; break; }
    case GgufType::kI32: { CLOVER_ASSIGN_OR_RETURN(int32_t x, c.Get<int32_t>(what)); v.value = int64_t{x}; break; }
    case GgufType::kU64: { CLOVER_ASSIGN_OR_RETURN(uint64_t x, c.Get<uint64_t>(what)); v.value = x; break; }
    case GgufType::kI64: { CLOVER_ASSIGN_OR_RETURN(int64_t x, c.Get<int64_t>(what)); v.value = x; break; }
    case GgufType::kF32: { CLOVER_ASSIGN_OR_RETURN(float x, c.Get<float>(what)); v.value = double{x}; break; }
    case GgufType::kF64: { CLOVER_ASSIGN_OR_RETURN(double x, c.Get<double>(what)); v.value = x; break; }
    case GgufType::kBool: {
      CLOVER_ASSIGN_OR_RETURN(uint8_t x, c.Get<uint8_t>(what));
      if (x > 1) return DataLoss(label + ": " + what + ": bool byte is " + std::to_string(x) + ", expected 0 or 1");
      v.value = x == 1;
      break;
    }
    case GgufType::kString: { CLOVER_ASSIGN_OR_RETURN(v.value, c.String(what)); break; }
    case GgufType::kArray: {
      if (depth >= kMaxArrayDepth) {
        return DataLoss(label + ": " + what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      }
      CLOVER_ASSIGN_OR_RETURN(uint32_t elem, c.Get<uint32_t>(what + " element type"));
      if (!KnownType(elem)) {
        return DataLoss(label + ": " + what + ": unknown array element type " + std::to_string(elem));
      }
      CLOVER_ASSIGN_OR_RETURN(uint64_t n, c.Get<uint64_t>(what + " element count"));
      const GgufType et = static_cast<GgufType>(elem);
      if (n > c.remaining() / MinEncodedSize(et)) {
        return DataLoss(label + ": " + what + ": array of " + std::to_string(n) + " " + GgufTypeName(et) +
                        " elements cannot fit in the " + std::to_string(c.remaining()) + " bytes left");
      }
      std::vector<GgufValue> items;
      items.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        CLOVER_ASSIGN_OR_RETURN(GgufValue item, ReadValue(c, et, key, depth + 1, label));
        items.push_back(std::move(item));
      }
      v.array_type = et;
      v.value = std::move(items);
      break;
    }
  }
  return v;
}

}  // namespace

Result<GgufFile> GgufFile::Parse(std::span<const uint8_t> bytes, const std::string& label) {
  GgufFile f;
  f.label_ = label;
  Cursor c(bytes, f.label_);
  CLOVER_ASSIGN_OR_RETURN(uint32_t magic, c.Get<uint32_t>("magic"));
  if (magic != kGgufMagic) {
    char found[16];
    std::snprintf(found, sizeof found, "0x%08x", magic);
    return DataLoss(label + ": bad GGUF magic " + found + ", expected 0x46554747 (\"GGUF\")");
  }
  CLOVER_ASSIGN_OR_RETURN(f.version_, c.Get<uint32_t>("version"));
  if (f.version_ != 2 && f.version_ != 3) {
    return Unimplemented(label + ": unsupported GGUF version " + std::to_string(f.version_) +
                         ", expected 2 or 3");
  }
  CLOVER_ASSIGN_OR_RETURN(uint64_t n_tensors, c.Get<uint64_t>("tensor count"));
  CLOVER_ASSIGN_OR_RETURN(uint64_t n_kv, c.Get<uint64_t>("metadata count"));
  // A key/value needs >= 13 bytes (key length, type, 1-byte value), a tensor info >= 24.
  if (n_kv > c.remaining() / 13) {
    return DataLoss(label + ": metadata count " + std::to_string(n_kv) + " cannot fit in a file of " +
                    std::to_string(bytes.size()) + " bytes");
  }
  if (n_tensors > c.remaining() / 24) {
    return DataLoss(label + ": tensor count " + std::to_string(n_tensors) + " cannot fit in a file of " +
                    std::to_string(bytes.size()) + " bytes");
  }
  for (uint64_t i = 0; i < n_kv; ++i) {
    CLOVER_ASSIGN_OR_RETURN(std::string key, c.String("metadata key #" + std::to_string(i)));
    CLOVER_ASSIGN_OR_RETURN(uint32_t type, c.Get<uint32_t>("type of '" + key + "'"));
    if (!KnownType(type)) {
      return DataLoss(label + ": metadata '" + key + "' has unknown value type " + std::to_string(type));
    }
    CLOVER_ASSIGN_OR_RETURN(GgufValue value, ReadValue(c, static_cast<GgufType>(type), key, 0, label));
    if (!f.kv_index_.emplace(key, f.kv_.size()).second) {
      return DataLoss(label + ": duplicate metadata key '" + key + "'");
    }
    f.kv_.emplace_back(std::move(key), std::move(value));
  }
  if (const GgufValue* a = f.Find("general.alignment")) {
    const uint64_t* u = std::get_if<uint64_t>(&a->value);
    if (u == nullptr || *u == 0 || (*u & (*u - 1)) != 0 || *u > (1u << 30)) {
      return DataLoss(label + ": general.alignment must be a power of two, found " + a->ToString() + " (" +
                      GgufTypeName(a->type) + ")");
    }
    f.alignment_ = *u;
  }

  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    CLOVER_ASSIGN_OR_RETURN(t.name, c.String("tensor name #" + std::to_string(i)));
    const std::string where = label + ": tensor '" + t.name + "'";
    CLOVER_ASSIGN_OR_RETURN(uint32_t n_dims, c.Get<uint32_t>("n_dims of '" + t.name + "'"));
    if (n_dims > kMaxDims) {
      return DataLoss(where + ": " + std::to_string(n_dims) + " dimensions, at most 4 allowed");
    }
    uint64_t ne[kMaxDims] = {1, 1, 1, 1};
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      CLOVER_ASSIGN_OR_RETURN(ne[d], c.Get<uint64_t>("dims of '" + t.name + "'"));
      if (ne[d] == 0 || ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return DataLoss(where + ": dimension " + std::to_string(d) + " is " + std::to_string(ne[d]) +
                        ", expected > 0");
      }
      if (numel > std::numeric_limits<uint64_t>::max() / ne[d]) {
        return DataLoss(where + ": element count overflows");
      }
      numel *= ne[d];
    }
    CLOVER_ASSIGN_OR_RETURN(t.ggml_type, c.Get<uint32_t>("type of '" + t.name + "'"));
    CLOVER_ASSIGN_OR_RETURN(t.offset, c.Get<uint64_t>("offset of '" + t.name + "'"));
    const std::optional<DType> dtype = DTypeFromGgmlType(t.ggml_type);
    if (!dtype) return Unimplemented(where + ": unknown ggml tensor type " + std::to_string(t.ggml_type));
    if (ne[0] % static_cast<uint64_t>(DTypeBlockSize(*dtype)) != 0) {
      return DataLoss(where + ": row length " + std::to_string(ne[0]) + " is not a multiple of the " +
                      DTypeName(*dtype) + " block size " + std::to_string(DTypeBlockSize(*dtype)));
    }
    const std::optional<uint64_t> nbytes = DTypeBytes(*dtype, numel);
    if (!nbytes) return DataLoss(where + ": byte size overflows");
    t.view.dtype = *dtype;
    t.view.nbytes = *nbytes;
    for (int d = static_cast<int>(n_dims) - 1; d >= 0; --d) t.view.shape.push_back(static_cast<int64_t>(ne[d]));
    if (!f.tensor_index_.emplace(t.name, f.tensors_.size()).second) {
      return DataLoss(label + ": duplicate tensor '" + t.name + "'");
    }
    f.tensors_.push_back(std::move(t));
  }

  const uint64_t end_of_infos = c.pos();
  f.data_offset_ = (end_of_infos + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  const uint64_t data_size = bytes.size() > f.data_offset_ ? bytes.size() - f.data_offset_ : 0;
  for (GgufTensor& t : f.tensors_) {
    const std::string where = label + ": tensor '" + t.name + "'";
    if (t.offset % f.alignment_ != 0) {
      return DataLoss(where + ": data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                      std::to_string(f.alignment_));
    }
    if (t.offset > data_size || t.view.nbytes > data_size - t.offset) {
      return OutOfRange(where + ": data [" + std::to_string(t.offset) + ", +" + std::to_string(t.view.nbytes) +
                        ") runs past the end of the file (data section holds " + std::to_string(data_size) +
                        " bytes)");
    }
    t.view.data = bytes.data() + f.data_offset_ + t.offset;
  }
  std::vector<const GgufTensor*> by_offset;
  for (const GgufTensor& t : f.tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensor* prev = by_offset[i - 1];
    if (by_offset[i]->offset < prev->offset + prev->view.nbytes) {
      return DataLoss(label + ": tensors '" + prev->name + "' and '" + by_offset[i]->name + "' overlap (offsets " +
                      std::to_string(prev->offset) + "+" + std::to_string(prev->view.nbytes) + " and " +
                      std::to_string(by_offset[i]->offset) + ")");
    }
  }
  return f;
}

Result<std::shared_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> mapped, MappedFile::Open(path));
  CLOVER_ASSIGN_OR_RETURN(GgufFile parsed, Parse(mapped->bytes(), path));
  auto file = std::make_shared<GgufFile>(std::move(parsed));
  file->file_ = std::move(mapped);
  return file;
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensor* GgufFile::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Status GgufFile::TypeError(const std::string& key, const char* expected, const GgufValue& v) const {
  std::string found = GgufTypeName(v.type);
  if (v.type == GgufType::kArray) found += std::string(" of ") + GgufTypeName(v.array_type);
  return InvalidArgument(label_ + ": metadata '" + key + "': expected " + expected + ", found " + found);
}

Result<int64_t> GgufFile::GetInt(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFound(label_ + ": metadata '" + key + "' is missing");
  if (auto* i = std::get_if<int64_t>(&v->value)) return *i;
  if (auto* u = std::get_if<uint64_t>(&v->value)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidArgument(label_ + ": metadata '" + key + "' = " + std::to_string(*u) + " is out of range");
    }
    return static_cast<int64_t>(*u);
  }
  return TypeError(key, "an integer", *v);
}

Result<double> GgufFile::GetFloat(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFound(label_ + ": metadata '" + key + "' is missing");
  if (auto* d = std::get_if<double>(&v->value)) return *d;
  if (auto* i = std::get_if<int64_t>(&v->value)) return static_cast<double>(*i);
  if (auto* u = std::get_if<uint64_t>(&v->value)) return static_cast<double>(*u);
  return TypeError(key, "a number", *v);
}

Result<bool> GgufFile::GetBool(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFound(label_ + ": metadata '" + key + "' is missing");
  if (auto* b = std::get_if<bool>(&v->value)) return *b;
  return TypeError(key, "bool", *v);
}

Result<std::string> GgufFile::GetString(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFound(label_ + ": metadata '" + key + "' is missing");
  if (auto* s = std::get_if<std::string>(&v->value)) return *s;
  return TypeError(key, "string", *v);
}

Result<std::vector<int64_t>> GgufFile::GetIntArray(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFound(label_ + ": metadata '" + key + "' is missing");
  if (v->type != GgufType::kArray) return TypeError(key, "array of integers", *v);
  std::vector<int64_t> out;
  for (const GgufValue& item : v->array()) {
    if (auto* i = std::get_if<int64_t>(&item.value)) {
      out.push_back(*i);
    } else if (auto* u = std::get_if<uint64_t>(&item.value)) {
      out.push_back(static_cast<int64_t>(*u));
    } else if (auto* b = std::get_if<bool>(&item.value)) {
      out.push_back(*b ? 1 : 0);
    } else {
      return TypeError(key, "array of integers", *v);
    }
  }
  return out;
}

}  // namespace clover::io
