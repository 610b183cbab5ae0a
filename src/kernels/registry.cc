// KernelTable registry: one table per ISA, optimized entries over the reference fallbacks.
#include <optional>
#include <string>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/kernel_table.h"
#include "kernels/quantize.h"
#include "kernels/ref/gemm.h"
#include "kernels/ref/matmul.h"
#include "kernels/ref/vector_ops.h"

namespace clover::kernels {
namespace {

KernelTable MakeRefTable() {
  KernelTable t;
  t.isa = Isa::kRef;
  t.matmul[static_cast<int>(WeightType::kF32)] = ref::MatMulF32;
  t.matmul[static_cast<int>(WeightType::kBF16)] = ref::MatMulBF16;
  t.matmul[static_cast<int>(WeightType::kF16)] = ref::MatMulF16;
  t.matmul[static_cast<int>(WeightType::kQ8_0)] = ref::MatMulQ8_0;
  t.matmul[static_cast<int>(WeightType::kQ4_K)] = ref::MatMulQ4_K;
  t.matmul[static_cast<int>(WeightType::kQ6_K)] = ref::MatMulQ6_K;
  t.quantize_activations = QuantizeActivations;
  t.dot = ref::Dot;
  t.axpy = ref::Axpy;
  t.scale = ref::Scale;
  t.delta_step = ref::DeltaStep;
  t.gemm = ref::Gemm;
  return t;
}

KernelTable MakeAvx2Table() {
  KernelTable t = MakeRefTable();
  t.isa = Isa::kAvx2;
  t.matmul[static_cast<int>(WeightType::kF32)] = avx2::MatMulF32;
  t.matmul[static_cast<int>(WeightType::kBF16)] = avx2::MatMulBF16;
  t.matmul[static_cast<int>(WeightType::kF16)] = avx2::MatMulF16;
  t.quant_matmul[static_cast<int>(WeightType::kQ8_0)] = avx2::QuantMatMulQ8_0;
  t.quant_matmul[static_cast<int>(WeightType::kQ4_K)] = avx2::QuantMatMulQ4_K;
  t.quant_matmul[static_cast<int>(WeightType::kQ6_K)] = avx2::QuantMatMulQ6_K;
  t.quant_gemm[static_cast<int>(WeightType::kQ4_K)] = avx2::QuantGemmQ4_K;
  t.quant_gemm[static_cast<int>(WeightType::kQ6_K)] = avx2::QuantGemmQ6_K;
  t.quantize_activations = avx2::QuantizeActivations;
  t.dot = avx2::Dot;
  t.axpy = avx2::Axpy;
  t.scale = avx2::Scale;
  t.delta_step = avx2::DeltaStep;
  t.gemm = avx2::Gemm;
  return t;
}

KernelTable MakeAvx512Table() {
  KernelTable t = MakeAvx2Table();
  t.isa = Isa::kAvx512;
  t.matmul[static_cast<int>(WeightType::kF32)] = avx512::MatMulF32;
  t.matmul[static_cast<int>(WeightType::kBF16)] = avx512::MatMulBF16;
  t.matmul[static_cast<int>(WeightType::kF16)] = avx512::MatMulF16;
  t.quant_matmul[static_cast<int>(WeightType::kQ8_0)] = avx512::QuantMatMulQ8_0;
  t.quant_matmul[static_cast<int>(WeightType::kQ4_K)] = avx512::QuantMatMulQ4_K;
  t.quant_matmul[static_cast<int>(WeightType::kQ6_K)] = avx512::QuantMatMulQ6_K;
  t.quant_gemm[static_cast<int>(WeightType::kQ8_0)] = avx512::QuantGemmQ8_0;
  t.quant_gemm[static_cast<int>(WeightType::kQ4_K)] = avx512::QuantGemmQ4_K;
  t.quant_gemm[static_cast<int>(WeightType::kQ6_K)] = avx512::QuantGemmQ6_K;
  t.quantize_activations = avx512::QuantizeActivations;
  t.dot = avx512::Dot;
  t.axpy = avx512::Axpy;
  t.scale = avx512::Scale;
  t.delta_step = avx512::DeltaStep;
  t.gemm = avx512::Gemm;
  return t;
}

KernelTable MakeAmxTable() {
  KernelTable t = MakeAvx512Table();
  t.isa = Isa::kAmx;
  t.quant_gemm[static_cast<int>(WeightType::kQ8_0)] = amx::QuantGemmQ8_0;
  t.quant_gemm[static_cast<int>(WeightType::kQ4_K)] = amx::QuantGemmQ4_K;
  t.quant_gemm[static_cast<int>(WeightType::kQ6_K)] = amx::QuantGemmQ6_K;
  return t;
}

}  // namespace

const KernelTable& GetKernelTable(Isa isa) {
  static const KernelTable ref_table = MakeRefTable();
  static const KernelTable avx2_table = MakeAvx2Table();
  static const KernelTable avx512_table = MakeAvx512Table();
  static const KernelTable amx_table = MakeAmxTable();
  switch (isa) {
    case Isa::kAvx2:
      return avx2_table;
    case Isa::kAvx512:
      return avx512_table;
    case Isa::kAmx:
      return amx_table;
    case Isa::kRef:
      break;
  }
  return ref_table;
}

Result<const KernelTable*> SelectKernelTable() {
  CLOVER_ASSIGN_OR_RETURN(Isa isa, SelectIsa());
  return &GetKernelTable(isa);
}

Result<WeightType> WeightTypeOf(DType dtype, const char* what) {
  switch (dtype) {
    case DType::kF32:
      return WeightType::kF32;
    case DType::kBF16:
      return WeightType::kBF16;
    case DType::kF16:
      return WeightType::kF16;
    case DType::kQ8_0:
      return WeightType::kQ8_0;
    case DType::kQ4_K:
      return WeightType::kQ4_K;
    case DType::kQ6_K:
      return WeightType::kQ6_K;
    default:
      break;
  }
  return Unimplemented(
      std::string(what) + ": weight dtype " + DTypeName(dtype) +
      " is not supported by the CPU matmul (expected F32, BF16, F16, Q8_0, Q4_K or Q6_K)");
}

Status CheckMatMulWeight(const TensorView& w, const std::string& what) {
  CLOVER_TRY(WeightTypeOf(w.dtype, what.c_str()).status());
  if (w.shape.size() != 2) {
    return InvalidArgument(what + ": shape " + ShapeToString(w.shape) + ", expected a matrix");
  }
  const int64_t block = DTypeBlockSize(w.dtype);
  if (w.shape[1] % block != 0) {
    return InvalidArgument(
        what + ": " + DTypeName(w.dtype) + " rows of " + std::to_string(w.shape[1]) +
        " elements, expected a multiple of the block size " + std::to_string(block));
  }
  const std::optional<uint64_t> bytes =
      DTypeBytes(w.dtype, static_cast<uint64_t>(w.shape[0]) * w.shape[1]);
  if (!bytes || *bytes != w.nbytes) {
    return InvalidArgument(what + ": " + std::to_string(w.nbytes) + " bytes of " +
                           DTypeName(w.dtype) + " for shape " + ShapeToString(w.shape) +
                           ", expected " +
                           (bytes ? std::to_string(*bytes) : "a whole block count"));
  }
  return Status::Ok();
}

}  // namespace clover::kernels
