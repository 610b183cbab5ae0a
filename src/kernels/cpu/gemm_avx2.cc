// AVX2 small f32 GEMM (gemm-inl.h): tiles of 4 rows x 16 columns, 8 ymm accumulators; column
// tails through vmaskmov.
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx2 {
namespace {

struct GemmVec {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int64_t kLanes = 8;
  static Mask MaskOf(int64_t width) {
    const int w = width >= kLanes ? 8 : width <= 0 ? 0 : static_cast<int>(width);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(w), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Reg Load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void Store(float* p, Mask m, Reg v) { _mm256_maskstore_ps(p, m, v); }
  static Reg Zero() { return _mm256_setzero_ps(); }
  static Reg Broadcast(float x) { return _mm256_set1_ps(x); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm256_fmadd_ps(a, b, acc); }
  static Reg Mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
};

constexpr int kGemmTileRows = 4;

}  // namespace

#include "kernels/cpu/delta_step-inl.h"
#include "kernels/cpu/gemm-inl.h"

}  // namespace clover::kernels::avx2
