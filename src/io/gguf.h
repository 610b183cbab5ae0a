// GGUF (v2/v3) reader: metadata key/values and tensor infos, zero-copy tensor views.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "io/gguf_value.h"
#include "io/mapped_file.h"

namespace clover::io {

struct GgufTensor {
  std::string name;
  TensorView view;           // shape = reversed ggml ne (outermost first)
  uint32_t ggml_type = 0;
  uint64_t offset = 0;       // relative to the data section
};

class GgufFile {
 public:
  static Result<std::shared_ptr<GgufFile>> Open(const std::string& path);
  // Parses `bytes` (which must outlive the result); `label` names the source in errors.
  static Result<GgufFile> Parse(std::span<const uint8_t> bytes, const std::string& label);

  const std::string& label() const { return label_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  // Key/values in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  // Tensors in file order.
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufValue* Find(const std::string& key) const;
  const GgufTensor* FindTensor(const std::string& name) const;

  // Typed getters: kNotFound when absent, kInvalidArgument (expected vs found type) when mistyped.
  // GetInt accepts every integer type (and bool as 0/1 is rejected); GetFloat accepts f32/f64 and
  // integers.
  Result<int64_t> GetInt(const std::string& key) const;
  Result<double> GetFloat(const std::string& key) const;
  Result<bool> GetBool(const std::string& key) const;
  Result<std::string> GetString(const std::string& key) const;
  Result<std::vector<int64_t>> GetIntArray(const std::string& key) const;

  const std::shared_ptr<MappedFile>& file() const { return file_; }

 private:
  Status TypeError(const std::string& key, const char* expected, const GgufValue& v) const;

  std::string label_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
  std::shared_ptr<MappedFile> file_;
};

}  // namespace clover::io
