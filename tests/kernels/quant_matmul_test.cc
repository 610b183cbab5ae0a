// Quantized-weight matmuls (Q8_0, Q4_K, Q6_K) of every ISA against double references.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "kernels/kernel_table.h"
#include "kernels/kernel_test_util.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "kernels/ref/dequantize.h"

namespace clover::kernels {
namespace {

using testing::AvailableIsas;
using testing::RandomVector;

struct QuantWeight {
  TensorView view;
  std::vector<uint8_t> bytes;
  std::vector<double> values;  // the dequantized weights the kernels multiply by
};

QuantWeight MakeQuantWeight(DType dtype, int64_t out, int64_t in, uint64_t seed) {
  const std::vector<float> f = RandomVector(out * in, seed);
  const int64_t row_bytes = in / DTypeBlockSize(dtype) * DTypeBlockBytes(dtype);
  QuantWeight w;
  w.bytes.resize(out * row_bytes);
  w.values.resize(out * in);
  std::vector<float> row(in);
  for (int64_t o = 0; o < out; ++o) {
    EXPECT_TRUE(QuantizeRow(dtype, f.data() + o * in, in, w.bytes.data() + o * row_bytes).ok());
    EXPECT_TRUE(ref::DequantizeRow(dtype, w.bytes.data() + o * row_bytes, in, row.data()).ok());
    for (int64_t i = 0; i < in; ++i) w.values[o * in + i] = row[i];
  }
  w.view.dtype = dtype;
  w.view.shape = {out, in};
  w.view.data = w.bytes.data();
  w.view.nbytes = w.bytes.size();
  EXPECT_TRUE(CheckMatMulWeight(w.view, "test").ok());
  return w;
}

// An output's reference value and the sum of |terms| that scales its f32 rounding error.
struct Expected {
  double value = 0;
  double magnitude = 0;
};

// With f32 activations: sum_i x[i] * w[i] in double.
Expected DotF32(const float* x, const double* w, int64_t in) {
  Expected e;
  for (int64_t i = 0; i < in; ++i) {
    e.value += double{x[i]} * w[i];
    e.magnitude += std::abs(double{x[i]} * w[i]);
  }
  return e;
}

// With the 8-bit activation blocks the integer kernels read: sum_b d_b sum_i q[i] * w[i].
Expected DotQuantized(const ActBlock* x, const double* w, int64_t in) {
  Expected e;
  for (int64_t b = 0; b < in / kActBlockSize; ++b) {
    for (int i = 0; i < 32; ++i) {
      const double t = double{x[b].d} * x[b].q[i] * w[b * 32 + i];
      e.value += t;
      e.magnitude += std::abs(t);
    }
  }
  return e;
}

// f32 accumulation in a different order than the double reference: the error is a small
// multiple of 2^-24 times the sum of |terms| (random signs make it ~sqrt(in) smaller still);
// 2e-6 allows ~32 ulps, far below what a wrong level, scale or offset would cost (>= 1e-3).
constexpr double kRoundingTolerance = 2e-6;

TEST(QuantMatMulTest, EveryIsaMatchesDoubleReference) {
  for (Isa isa : AvailableIsas()) {
    ThreadPool pool(3);
    const KernelTable& table = GetKernelTable(isa);
    KernelContext ctx{pool, table};
    for (DType dtype : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
      const int64_t block = DTypeBlockSize(dtype);
      const bool integer_kernel =
          table.quant_matmul[static_cast<int>(*WeightTypeOf(dtype, "test"))] != nullptr;
      for (int64_t rows : {1, 3, 4, 5, 9}) {
        for (int64_t in : {block, 3 * block, 9 * block, 17 * block}) {
          for (int64_t out : {1, 5, 67}) {
            const uint64_t seed = rows * 1000003 + in * 1009 + out;
            SCOPED_TRACE(::testing::Message()
                         << IsaName(isa) << " " << DTypeName(dtype) << " rows " << rows << " in "
                         << in << " out " << out << " seed " << seed);
            const QuantWeight w = MakeQuantWeight(dtype, out, in, seed);
            const std::vector<float> x = RandomVector(rows * in, seed + 1);
            std::vector<ActBlock> xq(rows * in / kActBlockSize);
            // MatMul gives each weight block's activations one scale.
            QuantizeActivations(x.data(), rows, in, in, xq.data(), block);
            std::vector<float> y(rows * out);
            MatMul(ctx, x.data(), rows, in, w.view, y.data(), out);
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t o = 0; o < out; ++o) {
                const double* wo = w.values.data() + o * in;
                const Expected e = integer_kernel
                                       ? DotQuantized(xq.data() + r * in / kActBlockSize, wo, in)
                                       : DotF32(x.data() + r * in, wo, in);
                ASSERT_NEAR(y[r * out + o], e.value, kRoundingTolerance * e.magnitude + 1e-30)
                    << "row " << r << " output " << o;
              }
            }
          }
        }
      }
    }
  }
}

// The many-row kernels (quant_gemm) called directly on output sub-ranges: tails of the 16-row
// tile, activation row counts that leave every register-group remainder, Q8_0 rows whose block
// count is not a multiple of the 8-block decode unit. Outputs outside [o_begin, o_end) and the
// stride gap must stay untouched.
TEST(QuantMatMulTest, QuantGemmMatchesDoubleReference) {
  std::vector<int64_t> row_counts;
  for (int64_t rows = 1; rows <= 40; rows += 2) row_counts.push_back(rows);
  row_counts.push_back(97);
  for (Isa isa : AvailableIsas()) {
    const KernelTable& table = GetKernelTable(isa);
    for (DType dtype : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
      const QuantMatMulFn gemm = table.quant_gemm[static_cast<int>(*WeightTypeOf(dtype, "test"))];
      if (gemm == nullptr) continue;
      const int64_t block = DTypeBlockSize(dtype);
      // Q8_0: 1, 3, 9 and 17 blocks (whole and partial 8-block units).
      const std::vector<int64_t> ins =
          block == 32 ? std::vector<int64_t>{32, 96, 288, 544} : std::vector<int64_t>{256, 768};
      for (int64_t in : ins) {
        const int64_t out = 3 * kQuantGemmTileRows + 5;
        const uint64_t seed = in * 1009 + static_cast<uint64_t>(dtype);
        const QuantWeight w = MakeQuantWeight(dtype, out, in, seed);
        const int64_t row_bytes = static_cast<int64_t>(w.view.row_bytes());
        for (int64_t rows : row_counts) {
          // [o_begin, o_end): everything; from the second tile to the tail; one partial tile.
          for (auto [o_begin, o_end] : {std::pair<int64_t, int64_t>{0, out},
                                        {kQuantGemmTileRows, out},
                                        {kQuantGemmTileRows, kQuantGemmTileRows + 7}}) {
            SCOPED_TRACE(::testing::Message()
                         << IsaName(isa) << " " << DTypeName(dtype) << " rows " << rows << " in "
                         << in << " outputs [" << o_begin << ", " << o_end << ")");
            const std::vector<float> x = RandomVector(rows * in, seed + rows);
            std::vector<ActBlock> xq(rows * in / kActBlockSize);
            QuantizeActivations(x.data(), rows, in, in, xq.data(), block);
            const int64_t y_stride = out + 3;
            const float untouched = -12345.0f;
            std::vector<float> y(rows * y_stride, untouched);
            gemm(xq.data(), rows, w.view.data, row_bytes, in, o_begin, o_end, y.data(), y_stride);
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t o = 0; o < y_stride; ++o) {
                const float got = y[r * y_stride + o];
                if (o < o_begin || o >= o_end) {
                  ASSERT_EQ(got, untouched) << "row " << r << " output " << o;
                  continue;
                }
                const Expected e =
                    DotQuantized(xq.data() + r * in / kActBlockSize, w.values.data() + o * in, in);
                ASSERT_NEAR(got, e.value, kRoundingTolerance * e.magnitude + 1e-30)
                    << "row " << r << " output " << o;
              }
            }
          }
        }
      }
    }
  }
}

// MatMul with enough rows for quant_gemm, on two threads: each task gets whole 16-row tiles.
TEST(QuantMatMulTest, ManyRowsMatchDoubleReferenceOnTwoThreads) {
  ThreadPool pool(2);
  for (Isa isa : AvailableIsas()) {
    const KernelTable& table = GetKernelTable(isa);
    KernelContext ctx{pool, table};
    for (DType dtype : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
      const int64_t block = DTypeBlockSize(dtype);
      const bool integer_kernel =
          table.quant_matmul[static_cast<int>(*WeightTypeOf(dtype, "test"))] != nullptr;
      const int64_t in = block == 32 ? 11 * block : 2 * block;
      for (int64_t out : {int64_t{8} * kQuantGemmTileRows + 5, int64_t{300}}) {
        const uint64_t seed = in * 7 + out;
        const QuantWeight w = MakeQuantWeight(dtype, out, in, seed);
        for (int64_t rows : {4, 8, 16, 33, 97}) {
          SCOPED_TRACE(::testing::Message() << IsaName(isa) << " " << DTypeName(dtype) << " rows "
                                            << rows << " out " << out);
          const std::vector<float> x = RandomVector(rows * in, seed + rows);
          std::vector<ActBlock> xq(rows * in / kActBlockSize);
          QuantizeActivations(x.data(), rows, in, in, xq.data(), block);
          std::vector<float> y(rows * out);
          MatMul(ctx, x.data(), rows, in, w.view, y.data(), out);
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t o = 0; o < out; ++o) {
              const double* wo = w.values.data() + o * in;
              const Expected e = integer_kernel
                                     ? DotQuantized(xq.data() + r * in / kActBlockSize, wo, in)
                                     : DotF32(x.data() + r * in, wo, in);
              ASSERT_NEAR(y[r * out + o], e.value, kRoundingTolerance * e.magnitude + 1e-30)
                  << "row " << r << " output " << o;
            }
          }
        }
      }
    }
  }
}

// The integer kernels against f32 activations: each activation is off by at most d/2 of its
// scale block (one per weight block: 32 or 256 elements), so
// |y - exact| <= sum_b d_b / 2 * sum_{i in b} |w[i]| (plus rounding).
TEST(QuantMatMulTest, ActivationQuantizationErrorIsBounded) {
  ThreadPool pool(2);
  for (Isa isa : AvailableIsas()) {
    KernelContext ctx{pool, GetKernelTable(isa)};
    for (DType dtype : {DType::kQ8_0, DType::kQ4_K, DType::kQ6_K}) {
      SCOPED_TRACE(::testing::Message() << IsaName(isa) << " " << DTypeName(dtype));
      const int64_t in = 2048, out = 16, rows = 2;
      const QuantWeight w = MakeQuantWeight(dtype, out, in, 7);
      const std::vector<float> x = RandomVector(rows * in, 8);
      std::vector<float> y(rows * out);
      MatMul(ctx, x.data(), rows, in, w.view, y.data(), out);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t o = 0; o < out; ++o) {
          const float* xr = x.data() + r * in;
          const double* wo = w.values.data() + o * in;
          const Expected e = DotF32(xr, wo, in);
          const int64_t block = DTypeBlockSize(dtype);
          double bound = 0;
          for (int64_t b = 0; b < in / block; ++b) {
            double amax = 0, wsum = 0;
            for (int64_t i = 0; i < block; ++i) {
              amax = std::max(amax, double{std::abs(xr[b * block + i])});
              wsum += std::abs(wo[b * block + i]);
            }
            bound += amax / 127 / 2 * wsum;
          }
          EXPECT_NEAR(y[r * out + o], e.value, bound + kRoundingTolerance * e.magnitude);
        }
      }
    }
  }
}

TEST(QuantMatMulTest, CheckMatMulWeightNamesTheTensor) {
  std::vector<uint8_t> bytes(2 * 34);
  TensorView w{DType::kQ8_0, {2, 48}, bytes.data(), bytes.size()};
  Status s = CheckMatMulWeight(w, "blk.3.ffn_up_exps");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("blk.3.ffn_up_exps"), std::string::npos);
  EXPECT_NE(s.message().find("multiple of the block size 32"), std::string::npos);
  w.shape = {2, 32};
  EXPECT_TRUE(CheckMatMulWeight(w, "x").ok());
  w.nbytes = 60;
  s = CheckMatMulWeight(w, "blk.3.ffn_up_exps");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected 68"), std::string::npos);
}

}  // namespace
}  // namespace clover::kernels
