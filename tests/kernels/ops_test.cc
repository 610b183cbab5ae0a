// Element-wise and per-vector ops against naive double-precision formulas (architecture.md §3).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/causal_conv.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"
#include "kernels/ref/rope.h"
#include "kernels/ref/softmax.h"

namespace clover::kernels {
namespace {

using testing::MaxRelError;
using testing::RandomVector;

double SiluD(double x) { return x / (1.0 + std::exp(-x)); }

// Single f32 roundings on O(1) values: a few ulps.
constexpr double kOpTolerance = 2e-6;

TEST(OpsTest, RmsNormMatchesDouble) {
  for (int64_t n : {1, 7, 64, 65, 1000}) {
    std::vector<float> x = RandomVector(n, n), w = RandomVector(n, n + 1), y(n);
    ref::RmsNorm(x.data(), w.data(), n, 1e-6f, y.data());
    double ss = 0;
    for (float v : x) ss += double{v} * v;
    const double s = 1.0 / std::sqrt(ss / n + 1e-6);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = x[i] * s * w[i];
    EXPECT_LE(MaxRelError(y, want), kOpTolerance) << n;
  }
}

TEST(OpsTest, GatedRmsNormMatchesDouble) {
  for (int64_t n : {1, 16, 63, 128}) {
    std::vector<float> o = RandomVector(n, n), z = RandomVector(n, n + 1, 4.0f),
                       w = RandomVector(n, n + 2), y(n);
    ref::GatedRmsNorm(o.data(), z.data(), w.data(), n, 1e-6f, y.data());
    double ss = 0;
    for (float v : o) ss += double{v} * v;
    const double s = 1.0 / std::sqrt(ss / n + 1e-6);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = o[i] * s * w[i] * SiluD(z[i]);
    EXPECT_LE(MaxRelError(y, want), kOpTolerance) << n;
  }
}

TEST(OpsTest, L2NormMatchesHfForm) {
  for (int64_t n : {1, 16, 65, 128}) {
    std::vector<float> x = RandomVector(n, n, 3.0f);
    std::vector<float> y = x;
    ref::L2Norm(y.data(), n, 1e-6f, 0.25f);
    double ss = 0;
    for (float v : x) ss += double{v} * v;
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = 0.25 * x[i] / std::sqrt(ss + 1e-6);
    EXPECT_LE(MaxRelError(y, want), kOpTolerance) << n;
  }
}

TEST(OpsTest, ActivationsMatchDouble) {
  for (double x : {-30.0, -5.0, -0.3, 0.0, 0.7, 19.9, 20.5, 60.0}) {
    const float xf = static_cast<float>(x);
    EXPECT_NEAR(ref::Silu(xf), SiluD(x), 1e-6 * (1 + std::abs(x)));
    EXPECT_NEAR(ref::Sigmoid(xf), 1.0 / (1.0 + std::exp(-x)), 1e-7);
    const double sp = x > 20 ? x : std::log1p(std::exp(x));
    EXPECT_NEAR(ref::Softplus(xf), sp, 1e-6 * (1 + std::abs(x)));
  }
  EXPECT_TRUE(std::isfinite(ref::Softplus(1000.0f)));
}

TEST(OpsTest, SoftmaxMatchesDouble) {
  for (int64_t n : {1, 8, 65, 256}) {
    std::vector<float> x = RandomVector(n, n, 10.0f), y = x;
    ref::Softmax(y.data(), n);
    double m = -1e300, sum = 0;
    for (float v : x) m = std::max(m, double{v});
    for (float v : x) sum += std::exp(v - m);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = std::exp(x[i] - m) / sum;
    EXPECT_LE(MaxRelError(y, want), kOpTolerance) << n;
  }
}

TEST(OpsTest, RopeNeoxRotatesFirstDimsOnly) {
  const int head_dim = 32, rope_dim = 8;
  const double theta = 1e7;
  for (int64_t pos : {0, 1, 17, 4095, 200000}) {
    std::vector<float> x = RandomVector(head_dim, pos + 3), y = x;
    ref::RopeNeox(y.data(), rope_dim, pos, theta);
    std::vector<double> want(x.begin(), x.end());
    for (int i = 0; i < rope_dim / 2; ++i) {
      const double ang = pos * std::pow(theta, -2.0 * i / rope_dim);
      want[i] = x[i] * std::cos(ang) - x[i + rope_dim / 2] * std::sin(ang);
      want[i + rope_dim / 2] = x[i + rope_dim / 2] * std::cos(ang) + x[i] * std::sin(ang);
    }
    EXPECT_LE(MaxRelError(y, want), kOpTolerance) << pos;
    for (int i = rope_dim; i < head_dim; ++i) EXPECT_EQ(y[i], x[i]);
  }
}

// Conv over a sequence split in two calls (state carried) equals the direct formula with zero
// history, and the state ends as the last K-1 inputs.
TEST(OpsTest, CausalConvWithStateMatchesDirect) {
  const int K = 4;
  for (int64_t channels : {1, 7, 64}) {
    for (int64_t T : {1, 2, 3, 9}) {
      for (int64_t split = 0; split <= T; ++split) {
        std::vector<float> m = RandomVector(T * channels, T * 31 + channels);
        std::vector<float> w = RandomVector(channels * K, channels);
        std::vector<float> state((K - 1) * channels, 0.0f), out(T * channels);
        ref::CausalConvSilu(m.data(), channels, split, channels, K, w.data(), state.data(),
                            out.data(), channels);
        ref::CausalConvSilu(m.data() + split * channels, channels, T - split, channels, K, w.data(),
                            state.data(), out.data() + split * channels, channels);
        std::vector<double> want(T * channels);
        for (int64_t t = 0; t < T; ++t)
          for (int64_t c = 0; c < channels; ++c) {
            double acc = 0;
            for (int j = 0; j < K; ++j) {
              const int64_t tau = t - (K - 1) + j;
              if (tau >= 0) acc += double{w[c * K + j]} * m[tau * channels + c];
            }
            want[t * channels + c] = SiluD(acc);
          }
        ASSERT_LE(MaxRelError(out, want), kOpTolerance) << channels << " " << T << " " << split;
        for (int j = 0; j < K - 1; ++j) {
          const int64_t tau = T - (K - 1) + j;
          for (int64_t c = 0; c < channels; ++c)
            ASSERT_EQ(state[j * channels + c], tau >= 0 ? m[tau * channels + c] : 0.0f);
        }
      }
    }
  }
}

// The two-step form the GDN layer runs over the pool: any split of the output rows (each range
// reading the untouched state) gives the one-call result bit for bit, and the state update
// afterwards the same state.
TEST(OpsTest, CausalConvRowRangesEqualOneCall) {
  const int K = 4;
  const int64_t channels = 37, T = 11;
  const std::vector<float> m = RandomVector(T * channels, 5);
  const std::vector<float> w = RandomVector(channels * K, 6);
  const std::vector<float> state0 = RandomVector((K - 1) * channels, 7);
  std::vector<float> state_whole = state0, out_whole(T * channels);
  ref::CausalConvSilu(m.data(), channels, T, channels, K, w.data(), state_whole.data(),
                      out_whole.data(), channels);
  for (int64_t split : {0, 1, 3, 10, 11}) {
    std::vector<float> state = state0, out(T * channels);
    ref::CausalConvSiluRows(m.data(), channels, split, T, channels, K, w.data(), state.data(),
                            out.data(), channels);
    ref::CausalConvSiluRows(m.data(), channels, 0, split, channels, K, w.data(), state.data(),
                            out.data(), channels);
    ASSERT_EQ(state, state0) << split;
    ref::CausalConvShiftState(m.data(), channels, T, channels, K, state.data());
    EXPECT_EQ(out, out_whole) << split;
    EXPECT_EQ(state, state_whole) << split;
  }
}

}  // namespace
}  // namespace clover::kernels
