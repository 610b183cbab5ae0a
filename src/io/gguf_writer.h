// GgufWriter: writes a GGUF v3 file (metadata of every type + tensors with alignment padding),
// either streamed to disk one tensor at a time or serialized whole from views held in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "io/gguf_value.h"

namespace clover::io {

// Streaming use: AddKv and DeclareTensor for everything, Begin(path) (writes the header and every
// tensor info: sizes are known up front), WriteTensor once per tensor in declaration order, then
// Finish. Memory stays at the tensor being written, so converting a model needs about its largest
// tensor, not the file. In-memory use: AddTensor with views, then Serialize or WriteFile.
class GgufWriter {
 public:
  GgufWriter() = default;
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;
  // Closes and removes a file that was begun and not finished: no truncated GGUF stays behind.
  ~GgufWriter();

  // Adds (or, for `general.alignment`, also applies) a metadata key/value; keys keep insertion
  // order.
  void AddKv(std::string key, GgufValue value);
  // Declares a tensor whose bytes WriteTensor gives later; `shape` is outermost first (written as
  // reversed ggml ne). Errors for a dtype GGUF cannot store, 0 or more than 4 dimensions, or a
  // call after Begin.
  Status DeclareTensor(std::string name, DType dtype, std::vector<int64_t> shape);
  // Declares a tensor and keeps `view` for Serialize()/WriteFile(), so `view.data` must stay valid
  // until then; its `nbytes` must match its shape and dtype.
  Status AddTensor(std::string name, const TensorView& view);

  // Creates `path` and writes the header, the metadata and every declared tensor's info.
  Status Begin(const std::string& path);
  // Writes the data of the next declared tensor, which must be `name`, of exactly its size.
  Status WriteTensor(const std::string& name, const void* data, uint64_t nbytes);
  // Checks that every declared tensor was written and closes the file.
  Status Finish();

  // Returns the complete file from the views of AddTensor.
  Result<std::vector<uint8_t>> Serialize() const;
  // Writes the file from the views of AddTensor to `path` (Begin, WriteTensor each, Finish).
  Status WriteFile(const std::string& path);

 private:
  struct Declared {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint32_t ggml_type;
    uint64_t nbytes;
    const void* data;  // AddTensor only
  };
  std::vector<uint8_t> Header() const;
  // FailedPrecondition naming the first tensor declared without a view (in-memory use needs all).
  Status CheckHeldData() const;
  uint64_t Padded(uint64_t n) const { return (n + alignment_ - 1) / alignment_ * alignment_; }
  Status WriteBytes(const void* data, uint64_t n);

  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<Declared> tensors_;
  uint64_t alignment_ = kGgufDefaultAlignment;
  // Streaming state: the file being written and the index of the next tensor to write.
  std::FILE* file_ = nullptr;
  std::string path_;
  size_t next_ = 0;
};

}  // namespace clover::io
