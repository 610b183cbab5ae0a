// Reference matmul: plain loops, one double accumulator per output.
#include "kernels/ref/matmul.h"

#include <cstring>
#include <vector>

#include "core/check.h"
#include "core/dtype.h"
#include "kernels/ref/dequantize.h"

namespace clover::kernels::ref {
namespace {

template <typename Convert>
void MatMulImpl(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride, Convert convert) {
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * x_stride;
    for (int64_t o = o_begin; o < o_end; ++o) {
      const uint8_t* wr = wb + o * w_row_bytes;
      double acc = 0.0;
      for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(xr[i]) * convert(wr, i);
      y[r * y_stride + o] = static_cast<float>(acc);
    }
  }
}

// Weight rows are decoded once each, so the loop runs over outputs first.
void MatMulDequantized(DType dtype, const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                       int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                       int64_t y_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(in));
  for (int64_t o = o_begin; o < o_end; ++o) {
    const Status s = DequantizeRow(dtype, wb + o * w_row_bytes, in, row.data());
    CLOVER_CHECK(s.ok());  // in is a multiple of the block size (CheckMatMulWeight)
    for (int64_t r = 0; r < n_rows; ++r) {
      const float* xr = x + r * x_stride;
      double acc = 0.0;
      for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(xr[i]) * row[i];
      y[r * y_stride + o] = static_cast<float>(acc);
    }
  }
}

}  // namespace

void MatMulQ8_0(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMulDequantized(DType::kQ8_0, x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y,
                    y_stride);
}

void MatMulQ4_K(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMulDequantized(DType::kQ4_K, x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y,
                    y_stride);
}

void MatMulQ6_K(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMulDequantized(DType::kQ6_K, x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y,
                    y_stride);
}

void MatMulF32(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMulImpl(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride,
             [](const uint8_t* row, int64_t i) {
               float v;
               std::memcpy(&v, row + 4 * i, 4);
               return static_cast<double>(v);
             });
}

void MatMulBF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMulImpl(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride,
             [](const uint8_t* row, int64_t i) {
               uint16_t h;
               std::memcpy(&h, row + 2 * i, 2);
               return static_cast<double>(BF16ToF32(h));
             });
}

void MatMulF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMulImpl(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride,
             [](const uint8_t* row, int64_t i) {
               uint16_t h;
               std::memcpy(&h, row + 2 * i, 2);
               return static_cast<double>(F16ToF32(h));
             });
}

}  // namespace clover::kernels::ref
