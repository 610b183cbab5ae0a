// AVX2 quantized matmul: u8 x s8 products by maddubs (pairs to int16, cannot saturate here:
// |u| <= 128 and |s| <= 127) then madd against ones or the K formats' scales (int16 pairs to
// int32).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/quantize.h"

namespace clover::kernels::avx2 {
namespace {

inline __m256i DotU8S8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

}  // namespace

#include "kernels/cpu/quant_matmul-inl.h"

}  // namespace clover::kernels::avx2
