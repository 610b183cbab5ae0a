// GgufWriter: little-endian serialization of the GGUF v3 layout.
#include "io/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace clover::io {
namespace {

template <typename T>
void Put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void PutString(std::vector<uint8_t>& out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

// Writes the payload of `v` (without its type tag).
void PutValue(std::vector<uint8_t>& out, const GgufValue& v) {
  auto as_u = [&] { return std::holds_alternative<uint64_t>(v.value) ? std::get<uint64_t>(v.value)
                                                                     : static_cast<uint64_t>(std::get<int64_t>(v.value)); };
  auto as_i = [&] { return std::holds_alternative<int64_t>(v.value) ? std::get<int64_t>(v.value)
                                                                    : static_cast<int64_t>(std::get<uint64_t>(v.value)); };
  switch (v.type) {
    case GgufType::kU8: Put<uint8_t>(out, static_cast<uint8_t>(as_u())); break;
    case GgufType::kI8: Put<int8_t>(out, static_cast<int8_t>(as_i())); break;
    case GgufType::kU16: Put<uint16_t>(out, static_cast<uint16_t>(as_u())); break;
    case GgufType::kI16: Put<int16_t>(out, static_cast<int16_t>(as_i())); break;
    case GgufType::kU32: Put<uint32_t>(out, static_cast<uint32_t>(as_u())); break;
    case GgufType::kI32: Put<int32_t>(out, static_cast<int32_t>(as_i())); break;
    case GgufType::kU64: Put<uint64_t>(out, as_u()); break;
    case GgufType::kI64: Put<int64_t>(out, as_i()); break;
    case GgufType::kF32: Put<float>(out, static_cast<float>(std::get<double>(v.value))); break;
    case GgufType::kF64: Put<double>(out, std::get<double>(v.value)); break;
    case GgufType::kBool: Put<uint8_t>(out, std::get<bool>(v.value) ? 1 : 0); break;
    case GgufType::kString: PutString(out, std::get<std::string>(v.value)); break;
    case GgufType::kArray:
      Put<uint32_t>(out, static_cast<uint32_t>(v.array_type));
      Put<uint64_t>(out, v.array().size());
      for (const GgufValue& item : v.array()) PutValue(out, item);
      break;
  }
}

void PadTo(std::vector<uint8_t>& out, uint64_t alignment) {
  out.resize((out.size() + alignment - 1) / alignment * alignment, 0);
}

}  // namespace

void GgufWriter::AddKv(std::string key, GgufValue value) {
  if (key == "general.alignment") {
    if (auto* u = std::get_if<uint64_t>(&value.value); u && *u > 0 && (*u & (*u - 1)) == 0) alignment_ = *u;
  }
  kv_.emplace_back(std::move(key), std::move(value));
}

Status GgufWriter::AddTensor(std::string name, const TensorView& view) {
  const std::optional<uint32_t> type = GgmlTypeFromDType(view.dtype);
  if (!type) {
    return Unimplemented("GGUF writer: tensor '" + name + "' has dtype " + DTypeName(view.dtype) +
                         ", which GGUF cannot store");
  }
  if (view.shape.empty() || view.shape.size() > 4) {
    return InvalidArgument("GGUF writer: tensor '" + name + "' has shape " + ShapeToString(view.shape) +
                           ", expected 1 to 4 dimensions");
  }
  const std::optional<uint64_t> nbytes = DTypeBytes(view.dtype, static_cast<uint64_t>(view.numel()));
  if (!nbytes || *nbytes != view.nbytes) {
    return InvalidArgument("GGUF writer: tensor '" + name + "' shape " + ShapeToString(view.shape) + " x " +
                           DTypeName(view.dtype) + " does not match its " + std::to_string(view.nbytes) + " bytes");
  }
  tensors_.push_back({std::move(name), view, *type});
  return Status::Ok();
}

Result<std::vector<uint8_t>> GgufWriter::Serialize() const {
  std::vector<uint8_t> out;
  Put<uint32_t>(out, kGgufMagic);
  Put<uint32_t>(out, 3);
  Put<uint64_t>(out, tensors_.size());
  Put<uint64_t>(out, kv_.size());
  for (const auto& [key, value] : kv_) {
    PutString(out, key);
    Put<uint32_t>(out, static_cast<uint32_t>(value.type));
    PutValue(out, value);
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    PutString(out, t.name);
    Put<uint32_t>(out, static_cast<uint32_t>(t.view.shape.size()));
    for (auto it = t.view.shape.rbegin(); it != t.view.shape.rend(); ++it) Put<uint64_t>(out, static_cast<uint64_t>(*it));
    Put<uint32_t>(out, t.ggml_type);
    Put<uint64_t>(out, offset);
    offset = (offset + t.view.nbytes + alignment_ - 1) / alignment_ * alignment_;
  }
  PadTo(out, alignment_);
  for (const PendingTensor& t : tensors_) {
    const uint8_t* p = t.view.bytes();
    out.insert(out.end(), p, p + t.view.nbytes);
    PadTo(out, alignment_);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  CLOVER_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, Serialize());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return NotFound("cannot create '" + path + "': " + std::strerror(errno));
  const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !closed) return DataLoss("short write to '" + path + "'");
  return Status::Ok();
}

}  // namespace clover::io
