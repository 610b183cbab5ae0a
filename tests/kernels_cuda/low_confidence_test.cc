// Device greedy choice + confidence against the rule of decode::ChooseGreedy.
#include "kernels/cuda/low_confidence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kernels/kernel_test_util.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using kernels::testing::RandomVector;
using testing::CudaTest;
using testing::ToDevice;

constexpr float kInf = std::numeric_limits<float>::infinity();

// decode::ChooseGreedy (decode/sampling.cc) with the mask logit at -inf: the kernels layer's
// tests cannot link decode, so its rule is restated here. Strict `>` keeps the lowest id of the
// maximum and never picks NaN or -inf; the probability sums exp(double(l) - max) over the
// entries above -inf.
std::pair<int32_t, double> ExpectedChoice(const float* l, int64_t n, int32_t mask_id) {
  int32_t best = -1;
  float best_logit = -kInf;
  for (int64_t i = 0; i < n; ++i)
    if (i != mask_id && l[i] > best_logit) best_logit = l[i], best = static_cast<int32_t>(i);
  if (best < 0) return {-1, 0.0};
  double z = 0.0;
  for (int64_t i = 0; i < n; ++i)
    if (i != mask_id && l[i] > -kInf) z += std::exp(double{l[i]} - best_logit);
  return {best, 1.0 / z};
}

struct ChoiceCase {
  int64_t n_rows, n_valid;
  int32_t mask_id;
};

std::string Name(const ChoiceCase& c) {
  return "rows" + std::to_string(c.n_rows) + "_vocab" + std::to_string(c.n_valid) + "_mask" +
         (c.mask_id < 0 ? "none" : std::to_string(c.mask_id));
}
void PrintTo(const ChoiceCase& c, std::ostream* os) { *os << Name(c); }

// Vocabularies from 1 to Qwen3.6's 248320 (not a multiple of the block), with and without a mask
// id; 32 rows is a preview block.
const ChoiceCase kChoiceCases[] = {
    {1, 1, -1}, {3, 7, 3}, {32, 1000, 999}, {5, 4099, 0}, {3, 248320, 248077}, {4, 151669, -1},
};

using GreedyConfidenceTest = CudaTest<ChoiceCase>;

TEST_P(GreedyConfidenceTest, MatchesChooseGreedy) {
  const auto [n_rows, n_valid, mask_id] = GetParam();
  const int64_t stride = n_valid + 5;  // padding columns, never read: they hold the largest value
  std::vector<float> logits = RandomVector(n_rows * stride, n_valid + n_rows, 8.0f);
  for (int64_t r = 0; r < n_rows; ++r) {
    float* l = &logits[r * stride];
    for (int64_t i = n_valid; i < stride; ++i) l[i] = 1e30f;
    // Row patterns: 0 the mask id is the raw maximum; 1 a tie for the maximum (the lowest id
    // wins) with NaN and -inf entries around; 2 nothing but the mask to choose; others plain.
    if (r % 4 == 0 && mask_id >= 0) l[mask_id] = 100.0f;
    if (r % 4 == 1 && n_valid >= 4) {
      l[n_valid - 1] = l[n_valid / 2] = l[n_valid / 3] = 50.0f;
      l[n_valid / 4] = std::nanf("");
      l[0] = -kInf;
    }
    if (r % 4 == 2 && mask_id >= 0)
      for (int64_t i = 0; i < n_valid; ++i) l[i] = i == mask_id ? 1.0f : -kInf;
  }
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer logits_d, ToDevice(device(), logits));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer token_d,
                              ToDevice(device(), std::vector<int32_t>(n_rows, -7)));
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer conf_d,
                              ToDevice(device(), std::vector<double>(n_rows, -7.0)));
  CLOVER_ASSERT_OK(GreedyConfidence(device(), logits_d.as<float>(), n_rows, stride, n_valid,
                                    mask_id, token_d.as<int32_t>(), conf_d.as<double>()));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> tokens,
                              DownloadVector<int32_t>(device(), token_d, n_rows));
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<double> confidences,
                              DownloadVector<double>(device(), conf_d, n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    SCOPED_TRACE(::testing::Message() << "row " << r);
    const auto [token, prob] = ExpectedChoice(&logits[r * stride], n_valid, mask_id);
    EXPECT_EQ(tokens[r], token);
    // The same f64 terms summed in another order: n_valid roundings of 2^-53 at most, plus
    // exp's last-bit differences between CUDA and glibc.
    EXPECT_NEAR(confidences[r], prob, (n_valid + 8) * std::ldexp(1.0, -52) * prob);
  }
}

INSTANTIATE_TEST_SUITE_P(cuda, GreedyConfidenceTest, ::testing::ValuesIn(kChoiceCases),
                         testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
