// safetensors reader: one file or a sharded set (model.safetensors.index.json), zero-copy views.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "io/mapped_file.h"

namespace clover::io {

// Largest JSON header accepted; the format's reference implementation uses the same bound.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100ull << 20;

struct SafetensorsTensor {
  std::string name;
  TensorView view;      // points into the file bytes
  uint64_t begin = 0;   // data_offsets, relative to the data area
  uint64_t end = 0;
};

// One parsed .safetensors file. Errors name the file (`label`) and the tensor.
class SafetensorsFile {
 public:
  // Maps and parses `path`.
  static Result<std::shared_ptr<SafetensorsFile>> Open(const std::string& path);
  // Parses `bytes` (which must outlive the result); `label` names the source in errors.
  static Result<SafetensorsFile> Parse(std::span<const uint8_t> bytes, const std::string& label);

  const std::string& label() const { return label_; }
  // Tensors in ascending data offset order.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // Returns the tensor called `name` or nullptr.
  const SafetensorsTensor* Find(const std::string& name) const;
  // `__metadata__` string pairs (empty when absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The mapping behind the views (null for Parse()).
  const std::shared_ptr<MappedFile>& file() const { return file_; }

 private:
  std::string label_;
  std::vector<SafetensorsTensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
  std::shared_ptr<MappedFile> file_;
};

// All tensors of a model stored as one or more safetensors files.
class SafetensorsSet {
 public:
  // `path` is a .safetensors file or a model.safetensors.index.json. For an index, every shard
  // named in weight_map must exist and hold exactly the tensors the map assigns to it.
  static Result<SafetensorsSet> Open(const std::string& path);

  const std::vector<std::shared_ptr<SafetensorsFile>>& files() const { return files_; }
  struct Entry {
    const SafetensorsTensor* tensor;
    const SafetensorsFile* file;
  };
  // Every tensor, sorted by name.
  const std::map<std::string, Entry>& tensors() const { return tensors_; }

 private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry> tensors_;
};

}  // namespace clover::io
