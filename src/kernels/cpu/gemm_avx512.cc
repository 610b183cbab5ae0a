// AVX-512 small f32 GEMM (gemm-inl.h): tiles of 8 rows x 32 columns, 16 zmm accumulators.
// GCC 12's avx512fintrin.h trips -Wuninitialized inside its own _mm512_undefined_* helpers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/cpu/isa_kernels.h"

namespace clover::kernels::avx512 {
namespace {

struct GemmVec {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int64_t kLanes = 16;
  static Mask MaskOf(int64_t width) {
    if (width >= kLanes) return static_cast<Mask>(0xFFFF);
    return width <= 0 ? static_cast<Mask>(0) : static_cast<Mask>((1u << width) - 1);
  }
  static Reg Load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void Store(float* p, Mask m, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  static Reg Zero() { return _mm512_setzero_ps(); }
  static Reg Broadcast(float x) { return _mm512_set1_ps(x); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
  static Reg Mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
};

constexpr int kGemmTileRows = 8;

}  // namespace

#include "kernels/cpu/delta_step-inl.h"
#include "kernels/cpu/gemm-inl.h"

}  // namespace clover::kernels::avx512
