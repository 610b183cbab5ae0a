// KernelTable: the per-ISA entry points of the hot kernels, filled once at start-up.
#pragma once

#include <cstdint>
#include <string>

#include "core/cpu_features.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace clover::kernels {

struct ActBlock;  // kernels/quantize.h

// Weight element types the matmul kernels read directly (quantized: GGUF block layouts).
enum class WeightType { kF32, kBF16, kF16, kQ8_0, kQ4_K, kQ6_K };
inline constexpr int kWeightTypeCount = 6;

// Computes `y[r * y_stride + o] = sum_i x[r * x_stride + i] * w[o][i]` for rows r in
// [0, n_rows) and outputs o in [o_begin, o_end). `w` points at row 0 of a row-major [out, in]
// matrix of the kernel's WeightType whose rows are `w_row_bytes` apart.
using MatMulFn = void (*)(const float* x, int64_t n_rows, int64_t x_stride, const void* w,
                          int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end, float* y,
                          int64_t y_stride);
// The same product for a quantized WeightType, with the activations already quantized to
// 8-bit blocks: row r of `x` is the `in / 32` ActBlocks from `x + r * in / 32`.
using QuantMatMulFn = void (*)(const ActBlock* x, int64_t n_rows, const void* w,
                               int64_t w_row_bytes, int64_t in, int64_t o_begin, int64_t o_end,
                               float* y, int64_t y_stride);
// Output rows per tile of the quant_gemm kernels: a range should start on a tile boundary and
// hold whole tiles (except at the matrix's end) so that none is decoded twice.
inline constexpr int64_t kQuantGemmTileRows = 16;
// Quantizes activation rows to the 8-bit blocks QuantMatMulFn reads (kernels/quantize.h's
// QuantizeActivations is the reference and documents the arguments).
using QuantizeActivationsFn = void (*)(const float* x, int64_t n_rows, int64_t x_stride, int64_t in,
                                       ActBlock* out, int64_t scale_block);
// Returns sum_i a[i] * b[i].
using DotFn = float (*)(const float* a, const float* b, int64_t n);
// Does y[i] += alpha * x[i].
using AxpyFn = void (*)(float alpha, const float* x, float* y, int64_t n);
// Does y[i] *= alpha.
using ScaleFn = void (*)(float alpha, float* y, int64_t n);
// One gated delta-rule step of one head on its state S [dk x dv], row-major (architecture.md
// §3.2): u = S^T k; delta = beta * (v - decay * u); S = decay * S + k delta^T; o = S^T q (the
// updated S). Decode runs it for every GDN head of every token, so it is one kernel that reads S
// twice rather than an axpy call per row.
using DeltaStepFn = void (*)(float* S, int64_t dk, int64_t dv, const float* q, const float* k,
                             const float* v, float decay, float beta, float* o);
// Computes c[r * c_stride + j] = sum_i a[r * a_stride + i] * b[i * b_stride + j] for r < n,
// j < m, i < k (adds to c instead when `accumulate`): a small f32 product of two row-major
// operands, the second one not transposed, as the delta rule's chunks need (kernels/delta_rule.cc).
using GemmFn = void (*)(const float* a, int64_t a_stride, const float* b, int64_t b_stride,
                        int64_t n, int64_t k, int64_t m, float* c, int64_t c_stride,
                        bool accumulate);

struct KernelTable {
  Isa isa = Isa::kRef;
  // Every type has a MatMulFn over f32 activations; an ISA with integer dot products sets
  // `quant_matmul` for the quantized types, which MatMul then prefers.
  MatMulFn matmul[kWeightTypeCount] = {};
  QuantMatMulFn quant_matmul[kWeightTypeCount] = {};
  // The same products for many activation rows (prefill, MoE expert batches), where decoding a
  // tile of weights once for every row pays off; MatMul prefers it from a few rows on.
  QuantMatMulFn quant_gemm[kWeightTypeCount] = {};
  QuantizeActivationsFn quantize_activations = nullptr;
  DotFn dot = nullptr;
  AxpyFn axpy = nullptr;
  ScaleFn scale = nullptr;
  DeltaStepFn delta_step = nullptr;
  GemmFn gemm = nullptr;
};

// Returns the table of `isa` (reference kernels fill whatever an ISA lacks). `isa` must be
// supported by this CPU (IsaSupported).
const KernelTable& GetKernelTable(Isa isa);
// Returns the table for SelectIsa() (honours CLOVER_FORCE_ISA).
Result<const KernelTable*> SelectKernelTable();
// Returns the WeightType of `dtype`, or an error naming `what` for types the kernels cannot read.
Result<WeightType> WeightTypeOf(DType dtype, const char* what);
// Checks that `w` is a 2-D matrix MatMul can read: a WeightType whose rows hold whole blocks
// and `nbytes` matching the shape. Errors name `what`.
Status CheckMatMulWeight(const TensorView& w, const std::string& what);

}  // namespace clover::kernels
