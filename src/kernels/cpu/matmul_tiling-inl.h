// The ISA-independent half of the CPU matmuls: tiling over weight blocks and activation rows.
// Textually included by each matmul_<isa>.cc inside its ISA namespace (no include guard, like
// gemma.cpp's -inl.h files), after the file defines `Tile<Load, R, O>` (R activation rows x O
// weight rows in registers), the weight loaders `LoadF32`/`LoadBF16`/`LoadF16`, and
// `kTileRows`, the most activation rows its registers hold.

namespace {

// The n_rows (1..R) activation rows at `x` against the O weight rows at `w`.
template <typename Load, int O, int R>
inline void RowTile(const float* x, int64_t n_rows, int64_t x_stride, const uint8_t* w,
                    int64_t w_row_bytes, int64_t in, float* y, int64_t y_stride) {
  if constexpr (R > 1) {
    if (n_rows < R) {
      RowTile<Load, O, R - 1>(x, n_rows, x_stride, w, w_row_bytes, in, y, y_stride);
      return;
    }
  }
  Tile<Load, R, O>(x, x_stride, w, w_row_bytes, in, y, y_stride);
}

// Weight rows in L2-sized blocks of kWeightBlock: within a block, each activation tile is
// loaded once into L1 and meets every weight row of the block, so activations stream from
// memory once per block and weights once per call.
constexpr int64_t kWeightBlock = 64;

template <typename Load>
void MatMul(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
            int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int64_t ob = o_begin; ob < o_end; ob += kWeightBlock) {
    const int64_t oe = std::min(o_end, ob + kWeightBlock);
    for (int64_t r0 = 0; r0 < n_rows; r0 += kTileRows) {
      const int64_t nr = std::min<int64_t>(kTileRows, n_rows - r0);
      const float* xr = x + r0 * x_stride;
      float* yr = y + r0 * y_stride;
      int64_t o = ob;
      for (; o + 4 <= oe; o += 4)
        RowTile<Load, 4, kTileRows>(xr, nr, x_stride, wb + o * w_row_bytes, w_row_bytes, in,
                                    yr + o, y_stride);
      for (; o < oe; ++o)
        RowTile<Load, 1, kTileRows>(xr, nr, x_stride, wb + o * w_row_bytes, w_row_bytes, in,
                                    yr + o, y_stride);
    }
  }
}

}  // namespace

void MatMulF32(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMul<LoadF32>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void MatMulBF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                int64_t y_stride) {
  MatMul<LoadBF16>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}

void MatMulF16(const float* x, int64_t n_rows, int64_t x_stride, const void* w, int64_t w_row_bytes,
               int64_t in, int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  MatMul<LoadF16>(x, n_rows, x_stride, w, w_row_bytes, in, o_begin, o_end, y, y_stride);
}
