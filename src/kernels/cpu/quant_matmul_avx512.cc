// AVX-512 quantized matmul: u8 x s8 products summed in one VNNI instruction (vpdpbusd on 256-bit
// registers, AVX512-VL), with no int16 intermediate.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx512 {
namespace {

inline __m256i DotU8S8(__m256i u, __m256i s) {
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
}

}  // namespace

#include "kernels/cpu/quant_matmul-inl.h"

}  // namespace clover::kernels::avx512
