// The ISA-independent half of the small f32 GEMM (GemmFn, kernel_table.h): register tiles of up
// to kGemmTileRows rows of `a` x two vectors of columns of `b`. Each step broadcasts one element
// of `a` per row against two column vectors of a row of `b`, so no output needs a horizontal sum
// (the matmul kernels' dot-product tiles spend as much on their final reductions as on the
// 128-long products of the delta rule's chunks). Column tails are masked loads and stores, which
// touch no masked-out lane, so a tail stays inside its operand.
//
// Textually included by gemm_<isa>.cc inside its ISA namespace (no include guard, like
// matmul_tiling-inl.h), after the file defines `GemmVec`: `Reg`, `Mask`, `kLanes`,
// `MaskOf(width)` (lanes below width; all when width >= kLanes, none when width <= 0),
// `Load(p, mask)`, `Store(p, mask, v)`, `Zero()`, `Broadcast(x)`, `Fma(a, b, acc)`, and
// `kGemmTileRows`.

namespace {

template <int R>
void GemmRowTile(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t k,
                 int64_t m, float* c, int64_t c_stride, bool accumulate) {
  using V = GemmVec;
  for (int64_t j = 0; j < m; j += 2 * V::kLanes) {
    const typename V::Mask m0 = V::MaskOf(m - j), m1 = V::MaskOf(m - j - V::kLanes);
    typename V::Reg lo[R], hi[R];
    for (int r = 0; r < R; ++r) {
      const float* cr = c + r * c_stride + j;
      lo[r] = accumulate ? V::Load(cr, m0) : V::Zero();
      hi[r] = accumulate ? V::Load(cr + V::kLanes, m1) : V::Zero();
    }
    for (int64_t i = 0; i < k; ++i) {
      const float* bi = b + i * b_stride + j;
      const typename V::Reg b0 = V::Load(bi, m0), b1 = V::Load(bi + V::kLanes, m1);
      for (int r = 0; r < R; ++r) {
        const typename V::Reg av = V::Broadcast(a[r * a_stride + i]);
        lo[r] = V::Fma(av, b0, lo[r]);
        hi[r] = V::Fma(av, b1, hi[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      float* cr = c + r * c_stride + j;
      V::Store(cr, m0, lo[r]);
      V::Store(cr + V::kLanes, m1, hi[r]);
    }
  }
}

// The last `rows` (< kGemmTileRows) rows, through the tile of exactly that height.
template <int R>
void GemmLastRows(int64_t rows, const float* a, int64_t a_stride, const float* b, int64_t b_stride,
                  int64_t k, int64_t m, float* c, int64_t c_stride, bool accumulate) {
  if constexpr (R > 0) {
    if (rows == R) {
      GemmRowTile<R>(a, a_stride, b, b_stride, k, m, c, c_stride, accumulate);
      return;
    }
    GemmLastRows<R - 1>(rows, a, a_stride, b, b_stride, k, m, c, c_stride, accumulate);
  }
}

}  // namespace

void Gemm(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t n, int64_t k,
          int64_t m, float* c, int64_t c_stride, bool accumulate) {
  int64_t r = 0;
  for (; r + kGemmTileRows <= n; r += kGemmTileRows)
    GemmRowTile<kGemmTileRows>(a + r * a_stride, a_stride, b, b_stride, k, m, c + r * c_stride,
                               c_stride, accumulate);
  GemmLastRows<kGemmTileRows - 1>(n - r, a + r * a_stride, a_stride, b, b_stride, k, m,
                                  c + r * c_stride, c_stride, accumulate);
}
