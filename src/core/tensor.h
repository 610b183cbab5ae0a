// TensorView: a non-owning typed view of tensor bytes (mmap'd file data or an owned buffer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace clover {

// `shape` is outermost first (PyTorch order): a [out, in] matrix has shape {out, in} and
// its rows are contiguous. Quantized types pack blocks along the innermost dimension.
struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  uint64_t nbytes = 0;

  // Returns the number of elements (1 for a scalar with empty shape).
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  bool empty() const { return data == nullptr; }
  int64_t rows() const { return shape.empty() ? 1 : numel() / shape.back(); }
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  // Returns the bytes of one innermost row.
  uint64_t row_bytes() const { return shape.empty() ? nbytes : nbytes / static_cast<uint64_t>(rows()); }
  const float* f32() const { return static_cast<const float*>(data); }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data); }
};

// Returns "[a, b, c]".
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace clover
