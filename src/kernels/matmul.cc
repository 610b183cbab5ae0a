// MatMul: splits output rows over the thread pool in blocks that keep each task worth a wake-up.
#include "kernels/matmul.h"

#include <algorithm>

#include "core/check.h"

namespace clover::kernels {
namespace {
// Below about this many multiply-adds per task, waking a worker costs more than it saves.
constexpr int64_t kMinFlopsPerTask = 1 << 15;
// Output rows per task are a multiple of the widest register tile (4 weight rows).
constexpr int64_t kRowGranule = 4;
}  // namespace

void MatMul(const KernelContext& ctx, const float* x, int64_t n_rows, int64_t x_stride,
            const TensorView& w, float* y, int64_t y_stride) {
  CLOVER_CHECK(w.shape.size() == 2);
  const int64_t out = w.shape[0];
  const int64_t in = w.shape[1];
  Result<WeightType> type = WeightTypeOf(w.dtype, "matmul");
  CLOVER_CHECK(type.ok());
  const MatMulFn fn = ctx.table.matmul[static_cast<int>(*type)];
  const int64_t row_bytes = static_cast<int64_t>(w.row_bytes());
  const int64_t n_granules = (out + kRowGranule - 1) / kRowGranule;
  const int64_t flops_per_granule = std::max<int64_t>(1, kRowGranule * in * n_rows);
  const int64_t min_granules = std::max<int64_t>(1, kMinFlopsPerTask / flops_per_granule);
  ctx.pool.ParallelFor(
      n_granules,
      [&](int64_t g0, int64_t g1) {
        const int64_t o0 = g0 * kRowGranule;
        const int64_t o1 = std::min(out, g1 * kRowGranule);
        fn(x, n_rows, x_stride, w.data, row_bytes, in, o0, o1, y, y_stride);
      },
      min_granules);
}

}  // namespace clover::kernels
