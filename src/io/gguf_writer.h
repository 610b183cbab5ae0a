// GgufWriter: builds a GGUF v3 file (metadata of every type + tensors with alignment padding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "io/gguf_value.h"

namespace clover::io {

class GgufWriter {
 public:
  // Adds (or, for `general.alignment`, also applies) a metadata key/value; keys keep insertion order.
  void AddKv(std::string key, GgufValue value);
  // Adds a tensor; `view.shape` is outermost first (written as reversed ggml ne). The bytes are
  // copied at Serialize() time, so `view.data` must stay valid until then.
  Status AddTensor(std::string name, const TensorView& view);

  // Returns the complete file.
  Result<std::vector<uint8_t>> Serialize() const;
  // Writes the file to `path`.
  Status WriteFile(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    TensorView view;
    uint32_t ggml_type;
  };
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<PendingTensor> tensors_;
  uint64_t alignment_ = kGgufDefaultAlignment;
};

}  // namespace clover::io
