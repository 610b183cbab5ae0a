// Matmul and vector kernels of every available ISA against a double-precision reference.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/dtype.h"
#include "kernels/kernel_table.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ref/vector_ops.h"

namespace clover::kernels {
namespace {

using testing::AvailableIsas;
using testing::MaxRelError;
using testing::RandomVector;

struct Weight {
  TensorView view;
  std::vector<uint8_t> bytes;
  std::vector<double> values;  // exact values after rounding to the dtype
};

Weight MakeWeight(DType dtype, int64_t out, int64_t in, uint64_t seed) {
  std::vector<float> f = RandomVector(out * in, seed);
  Weight w;
  const int64_t esize = dtype == DType::kF32 ? 4 : 2;
  w.bytes.resize(out * in * esize);
  w.values.resize(out * in);
  for (int64_t i = 0; i < out * in; ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(&w.bytes[i * 4], &f[i], 4);
      w.values[i] = f[i];
    } else {
      const uint16_t h = dtype == DType::kBF16 ? F32ToBF16(f[i]) : F32ToF16(f[i]);
      std::memcpy(&w.bytes[i * 2], &h, 2);
      w.values[i] = dtype == DType::kBF16 ? BF16ToF32(h) : F16ToF32(h);
    }
  }
  w.view.dtype = dtype;
  w.view.shape = {out, in};
  w.view.data = w.bytes.data();
  w.view.nbytes = w.bytes.size();
  return w;
}

// f32 accumulation over `in` terms of products of magnitude <= 1: the relative error versus
// the double result grows like sqrt(in) * 2^-24 for random signs; 1e-5 leaves a wide margin
// for in <= 4096 (weights are rounded first, so BF16/F16 share the bound).
constexpr double kMatMulTolerance = 1e-5;

TEST(MatMulTest, EveryIsaMatchesDoubleReference) {
  for (Isa isa : AvailableIsas()) {
    ThreadPool pool(3);
    KernelContext ctx{pool, GetKernelTable(isa)};
    for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (int64_t rows : {1, 3, 4, 7, 9}) {
        for (int64_t in : {1, 7, 16, 63, 64, 65, 1031}) {
          for (int64_t out : {1, 5, 64, 67}) {
            const uint64_t seed = rows * 1000003 + in * 1009 + out;
            SCOPED_TRACE(::testing::Message()
                         << IsaName(isa) << " " << DTypeName(dtype) << " rows " << rows << " in "
                         << in << " out " << out << " seed " << seed);
            Weight w = MakeWeight(dtype, out, in, seed);
            std::vector<float> x = RandomVector(rows * in, seed + 1);
            std::vector<float> y(rows * out);
            MatMul(ctx, x.data(), rows, in, w.view, y.data(), out);
            std::vector<double> want(rows * out);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t o = 0; o < out; ++o) {
                double acc = 0;
                for (int64_t i = 0; i < in; ++i)
                  acc += double{x[r * in + i]} * w.values[o * in + i];
                want[r * out + o] = acc;
              }
            double max_err = 0;
            for (size_t i = 0; i < y.size(); ++i) {
              // Per-output scale: the sum of |terms| bounds the rounding error.
              max_err = std::max(max_err, std::abs(y[i] - want[i]) / std::sqrt(double(in)));
            }
            ASSERT_LE(max_err, kMatMulTolerance);
          }
        }
      }
    }
  }
}

TEST(VectorOpsTest, EveryIsaMatchesReference) {
  for (Isa isa : AvailableIsas()) {
    const KernelTable& kt = GetKernelTable(isa);
    for (int64_t n : {1, 7, 15, 16, 17, 63, 64, 65, 1000, 1031}) {
      SCOPED_TRACE(::testing::Message() << IsaName(isa) << " n " << n);
      std::vector<float> a = RandomVector(n, n), b = RandomVector(n, n + 7);
      double dot = 0;
      for (int64_t i = 0; i < n; ++i) dot += double{a[i]} * b[i];
      EXPECT_NEAR(kt.dot(a.data(), b.data(), n), dot, 1e-5 * std::sqrt(double(n)));
      std::vector<float> y = b;
      kt.axpy(0.37f, a.data(), y.data(), n);
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i) want[i] = b[i] + 0.37 * a[i];
      EXPECT_LE(MaxRelError(y, want), 1e-6);
      y = b;
      kt.scale(-1.25f, y.data(), n);
      for (int64_t i = 0; i < n; ++i) want[i] = -1.25 * b[i];
      EXPECT_LE(MaxRelError(y, want), 1e-7);
    }
  }
}

// The delta-rule step against the reference on random non-zero data: dv below, at and past the
// kernels' column stripes (16/32/64 floats), and nothing written past the output's dv floats.
TEST(DeltaStepTest, EveryIsaMatchesReference) {
  constexpr int64_t kGuard = 5;
  for (Isa isa : AvailableIsas()) {
    const KernelTable& kt = GetKernelTable(isa);
    for (int64_t dk : {1, 3, 64, 128}) {
      for (int64_t dv : {1, 7, 8, 16, 31, 33, 64, 65, 100, 128, 130}) {
        SCOPED_TRACE(::testing::Message() << IsaName(isa) << " dk " << dk << " dv " << dv);
        const uint64_t seed = static_cast<uint64_t>(dk * 1000 + dv);
        std::vector<float> s_want = RandomVector(dk * dv + kGuard, seed);
        const std::vector<float> q = RandomVector(dk, seed + 1), k = RandomVector(dk, seed + 2),
                                 v = RandomVector(dv, seed + 3);
        std::vector<float> s_got = s_want;
        std::vector<float> o_want(dv + kGuard, 7.0f), o_got(dv + kGuard, 7.0f);
        ref::DeltaStep(s_want.data(), dk, dv, q.data(), k.data(), v.data(), 0.83f, 0.41f,
                       o_want.data());
        kt.delta_step(s_got.data(), dk, dv, q.data(), k.data(), v.data(), 0.83f, 0.41f,
                      o_got.data());
        EXPECT_LE(MaxRelError(s_got, s_want), 1e-5);
        EXPECT_LE(MaxRelError(o_got, o_want), 1e-5);
        for (int64_t g = 0; g < kGuard; ++g) {
          EXPECT_EQ(o_got[dv + g], 7.0f) << g;
          EXPECT_EQ(s_got[dk * dv + g], s_want[dk * dv + g]) << g;
        }
      }
    }
  }
}

// Odd row counts leave every tile height's remainder; odd column counts the masked tails of
// both column vectors; strides wider than the rows check that nothing reads past a row.
TEST(GemmTest, EveryIsaMatchesDoubleReference) {
  for (Isa isa : AvailableIsas()) {
    const KernelTable& kt = GetKernelTable(isa);
    for (int64_t n : {1, 3, 7, 8, 9, 17}) {
      for (int64_t k : {1, 5, 64, 130}) {
        for (int64_t m : {1, 7, 16, 17, 31, 33, 128}) {
          for (bool accumulate : {false, true}) {
            SCOPED_TRACE(::testing::Message() << IsaName(isa) << " n " << n << " k " << k << " m "
                                              << m << " accumulate " << accumulate);
            const int64_t as = k + 3, bs = m + 5, cs = m + 2;
            const std::vector<float> a = RandomVector(n * as, n * 131 + k);
            const std::vector<float> b = RandomVector(k * bs, k * 17 + m);
            const std::vector<float> c0 = RandomVector(n * cs, m * 7 + n);
            std::vector<float> c = c0;
            kt.gemm(a.data(), as, b.data(), bs, n, k, m, c.data(), cs, accumulate);
            std::vector<float> got;
            std::vector<double> want;
            for (int64_t r = 0; r < n; ++r) {
              for (int64_t j = 0; j < cs; ++j) {
                double v = c0[r * cs + j];  // columns from m on stay as they were
                if (j < m) {
                  v = accumulate ? v : 0.0;
                  for (int64_t i = 0; i < k; ++i) v += double{a[r * as + i]} * b[i * bs + j];
                }
                got.push_back(c[r * cs + j]);
                want.push_back(v);
              }
            }
            EXPECT_LE(MaxRelError(got, want), kMatMulTolerance);
          }
        }
      }
    }
  }
}

TEST(KernelTableTest, ForceIsaIsHonoured) {
  const char* old = std::getenv("CLOVER_FORCE_ISA");
  for (Isa isa : AvailableIsas()) {
    setenv("CLOVER_FORCE_ISA", IsaName(isa), 1);
    Result<const KernelTable*> t = SelectKernelTable();
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ((*t)->isa, isa);
  }
  setenv("CLOVER_FORCE_ISA", "sse9", 1);
  Result<const KernelTable*> bad = SelectKernelTable();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sse9"), std::string::npos);
  if (old)
    setenv("CLOVER_FORCE_ISA", old, 1);
  else
    unsetenv("CLOVER_FORCE_ISA");
}

TEST(KernelTableTest, UnsupportedWeightTypesAreRejectedByName) {
  Result<WeightType> t = WeightTypeOf(DType::kQ5_K, "blk.0.attn_qkv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(t.status().message().find("blk.0.attn_qkv"), std::string::npos);
  EXPECT_NE(t.status().message().find("Q5_K"), std::string::npos);
}

}  // namespace
}  // namespace clover::kernels
