// MatMul: splits output rows over the thread pool in blocks that keep each task worth a wake-up.
// Quantized weights on an ISA with integer dot products first quantize the activations once per
// call (not per task), so every task reads the same 8-bit blocks.
#include "kernels/matmul.h"

#include <algorithm>
#include <vector>

#include "core/check.h"
#include "kernels/quantize.h"

namespace clover::kernels {
namespace {
// Below about this many multiply-adds per task, waking a worker costs more than it saves.
constexpr int64_t kMinFlopsPerTask = 1 << 15;
// Output rows per task are a multiple of the widest register tile (4 weight rows), or of the
// quant_gemm tile.
constexpr int64_t kRowGranule = 4;
// From this many activation rows on, quant_gemm (where the ISA has it) beats quant_matmul
// (bench/kernels_bench.cc, BM_QuantGemm): decoding a weight tile costs about what the one-row
// kernel spends on 2-4 rows, more for Q6_K's 6-bit levels.
int64_t QuantGemmMinRows(WeightType type) { return type == WeightType::kQ6_K ? 8 : 4; }
// Rows of activations per quantization task (quantizing is ~10 operations per element).
constexpr int64_t kMinQuantizeElementsPerTask = 1 << 14;

// Splits `out` output rows into tasks of whole `granule`s and calls `fn(o_begin, o_end)` on the
// pool.
template <typename Fn>
void ForOutputs(const KernelContext& ctx, int64_t out, int64_t in, int64_t n_rows, int64_t granule,
                const Fn& fn) {
  const int64_t n_granules = (out + granule - 1) / granule;
  const int64_t flops_per_granule = std::max<int64_t>(1, granule * in * n_rows);
  const int64_t min_granules = std::max<int64_t>(1, kMinFlopsPerTask / flops_per_granule);
  ctx.pool.ParallelFor(
      n_granules, [&](int64_t g0, int64_t g1) { fn(g0 * granule, std::min(out, g1 * granule)); },
      min_granules);
}

}  // namespace

void MatMul(const KernelContext& ctx, const float* x, int64_t n_rows, int64_t x_stride,
            const TensorView& w, float* y, int64_t y_stride) {
  CLOVER_CHECK(w.shape.size() == 2);
  const int64_t out = w.shape[0];
  const int64_t in = w.shape[1];
  Result<WeightType> type = WeightTypeOf(w.dtype, "matmul");
  CLOVER_CHECK(type.ok());
  const int64_t row_bytes = static_cast<int64_t>(w.row_bytes());
  if (const QuantMatMulFn qfn = ctx.table.quant_matmul[static_cast<int>(*type)]) {
    // One activation scale per weight block (quant_matmul-inl.h relies on it for the K formats).
    const int64_t block = DTypeBlockSize(w.dtype);
    CLOVER_CHECK(in % block == 0);  // CheckMatMulWeight at load
    const int64_t nb = in / kActBlockSize;
    // Reused across calls: the forward calls MatMul hundreds of times per pass.
    thread_local std::vector<ActBlock> xq;
    xq.resize(static_cast<size_t>(n_rows * nb));
    ActBlock* q = xq.data();
    ctx.pool.ParallelFor(
        n_rows,
        [&](int64_t r0, int64_t r1) {
          ctx.table.quantize_activations(x + r0 * x_stride, r1 - r0, x_stride, in, q + r0 * nb,
                                         block);
        },
        std::max<int64_t>(1, kMinQuantizeElementsPerTask / std::max<int64_t>(1, in)));
    const QuantMatMulFn gemm = ctx.table.quant_gemm[static_cast<int>(*type)];
    const bool use_gemm = gemm != nullptr && n_rows >= QuantGemmMinRows(*type);
    const QuantMatMulFn product = use_gemm ? gemm : qfn;
    ForOutputs(ctx, out, in, n_rows, use_gemm ? kQuantGemmTileRows : kRowGranule,
               [&](int64_t o0, int64_t o1) {
                 product(q, n_rows, w.data, row_bytes, in, o0, o1, y, y_stride);
               });
    return;
  }
  const MatMulFn fn = ctx.table.matmul[static_cast<int>(*type)];
  ForOutputs(ctx, out, in, n_rows, kRowGranule, [&](int64_t o0, int64_t o1) {
    fn(x, n_rows, x_stride, w.data, row_bytes, in, o0, o1, y, y_stride);
  });
}

}  // namespace clover::kernels
