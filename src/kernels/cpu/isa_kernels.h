// The optimized CPU kernels per ISA: AVX2 (compiled with -mavx2 -mfma -mf16c) and AVX-512
// (-mavx512f/bw/vl/dq/bf16/vnni), one declaration set (isa_kernels-inl.h) in each namespace.
#pragma once

#include <type_traits>

#include "kernels/kernel_table.h"

namespace clover::kernels::avx2 {
#include "kernels/cpu/isa_kernels-inl.h"
// The many-row K-format products (quant_gemm_avx2.cc); Q8_0 keeps QuantMatMulQ8_0 for every row
// count.
std::remove_pointer_t<QuantMatMulFn> QuantGemmQ4_K, QuantGemmQ6_K;
}  // namespace clover::kernels::avx2

namespace clover::kernels::avx512 {
#include "kernels/cpu/isa_kernels-inl.h"
// The many-row quantized products (quant_gemm_avx512.cc).
std::remove_pointer_t<QuantMatMulFn> QuantGemmQ8_0, QuantGemmQ4_K, QuantGemmQ6_K;
}  // namespace clover::kernels::avx512

// The many-row quantized products on AMX int8 tiles (quant_gemm_amx.cc, the avx512 flags plus
// -mamx-tile -mamx-int8); everything else of the amx table is the avx512 kernels.
namespace clover::kernels::amx {
std::remove_pointer_t<QuantMatMulFn> QuantGemmQ8_0, QuantGemmQ4_K, QuantGemmQ6_K;
}  // namespace clover::kernels::amx
