// KernelTable registry: one table per ISA, optimized entries over the reference fallbacks.
#include <string>

#include "kernels/cpu/kernels_avx2.h"
#include "kernels/cpu/kernels_avx512.h"
#include "kernels/kernel_table.h"
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
  t.dot = ref::Dot;
  t.axpy = ref::Axpy;
  t.scale = ref::Scale;
  return t;
}

KernelTable MakeAvx2Table() {
  KernelTable t = MakeRefTable();
  t.isa = Isa::kAvx2;
  t.matmul[static_cast<int>(WeightType::kF32)] = avx2::MatMulF32;
  t.matmul[static_cast<int>(WeightType::kBF16)] = avx2::MatMulBF16;
  t.matmul[static_cast<int>(WeightType::kF16)] = avx2::MatMulF16;
  t.dot = avx2::Dot;
  t.axpy = avx2::Axpy;
  t.scale = avx2::Scale;
  return t;
}

KernelTable MakeAvx512Table() {
  KernelTable t = MakeAvx2Table();
  t.isa = Isa::kAvx512;
  t.matmul[static_cast<int>(WeightType::kF32)] = avx512::MatMulF32;
  t.matmul[static_cast<int>(WeightType::kBF16)] = avx512::MatMulBF16;
  t.matmul[static_cast<int>(WeightType::kF16)] = avx512::MatMulF16;
  t.dot = avx512::Dot;
  t.axpy = avx512::Axpy;
  t.scale = avx512::Scale;
  return t;
}

}  // namespace

const KernelTable& GetKernelTable(Isa isa) {
  static const KernelTable ref_table = MakeRefTable();
  static const KernelTable avx2_table = MakeAvx2Table();
  static const KernelTable avx512_table = MakeAvx512Table();
  switch (isa) {
    case Isa::kAvx2:
      return avx2_table;
    case Isa::kAvx512:
      return avx512_table;
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
    default:
      break;
  }
  return Unimplemented(std::string(what) + ": weight dtype " + DTypeName(dtype) +
                       " is not supported by the CPU matmul (expected F32, BF16 or F16)");
}

}  // namespace clover::kernels
