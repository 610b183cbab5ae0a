// The forward with quantized matrices (Q8_0, Q6_K, Q4_K) against the same model in F32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "kernels/quantize.h"
#include "model/forward_test_util.h"
#include "model/loader.h"
#include "model/random_weights.h"

namespace clover::model {
namespace {

using testing::Engine;
using testing::RandomIds;
using testing::Logits;
using testing::MaxRelDiff;
using testing::MedianRowRelDiff;

// Replaces the F32 matrix `t` by its quantization to `dtype`, owned by `storage`.
void QuantizeMatrix(TensorView* t, DType dtype, WeightStorage& storage) {
  ASSERT_EQ(t->dtype, DType::kF32);
  const int64_t rows = t->rows(), cols = t->cols();
  const uint64_t bytes = *DTypeBytes(dtype, static_cast<uint64_t>(rows * cols));
  auto* out = static_cast<uint8_t*>(storage.Allocate(bytes));
  const uint64_t row_bytes = bytes / rows;
  for (int64_t r = 0; r < rows; ++r)
    ASSERT_TRUE(kernels::QuantizeRow(dtype, t->f32() + r * cols, cols, out + r * row_bytes).ok());
  t->dtype = dtype;
  t->data = out;
  t->nbytes = bytes;
}

// Quantizes what a quantized checkpoint quantizes: the projections, experts and head; norms,
// router, GDN gates (beta, alpha) and conv stay F32.
void QuantizeModel(ModelWeights* w, DType dtype) {
  WeightStorage& s = *w->storage;
  QuantizeMatrix(&w->output, dtype, s);
  for (LayerWeights& l : w->layers) {
    if (l.kind == LayerKind::kGatedDeltaNet) {
      for (TensorView* t : {&l.gdn.qkv, &l.gdn.z, &l.gdn.out}) QuantizeMatrix(t, dtype, s);
    } else {
      for (TensorView* t : {&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o})
        QuantizeMatrix(t, dtype, s);
    }
    MoeWeights& m = l.moe;
    for (auto* experts : {&m.expert_gate, &m.expert_up, &m.expert_down})
      for (TensorView& t : *experts) QuantizeMatrix(&t, dtype, s);
    for (TensorView* t : {&m.shared_gate, &m.shared_up, &m.shared_down})
      if (!t->empty()) QuantizeMatrix(t, dtype, s);
  }
}

// Returns the logits of `ids` (one batch, then the last id again as a decode step) with the
// model's matrices quantized to `dtype` (F32: unchanged).
Logits RunQuantized(ModelWeights w, DType dtype, const std::vector<int32_t>& ids) {
  if (dtype != DType::kF32) QuantizeModel(&w, dtype);
  Engine e(w);
  EXPECT_NE(e.model, nullptr);
  if (e.model == nullptr) return {};
  SequenceState seq = e.model->NewSequence();
  Logits all = e.Append(seq, ids);
  Logits step = e.Append(seq, {ids.back()});
  all.insert(all.end(), step.begin(), step.end());
  return all;
}

// How far quantized logits may move, from what moves them. The forward maps a small relative
// weight perturbation to a proportional logit perturbation whose gain depends on the model
// (these random models amplify it ~4x: BF16 weights alone move the golden model's logits by
// 1.1% of the largest, Q8_0 weights by 2.5%, Q8_0 weights and activations by 5.5%). The gain is
// measured with F16 weights (rms relative rounding 2^-11 / sqrt(3)), then a format may move the
// logits by gain x (its rms weight error + the 8-bit activation error when the ISA quantizes
// activations), with 2x margin: block-wise errors do not scale with each weight as F16 rounding
// does, which costs up to 1.4x here. The rms errors are the Gaussian bounds of
// kernels/quantize_test.cc. A wrong kernel moves logits by O(100%).
double QuantizedLogitBound(const ModelWeights& w, const std::vector<int32_t>& ids,
                           const Logits& f32, DType dtype) {
  const double f16_error = std::ldexp(1.0, -11) / std::sqrt(3.0);
  const double gain = MedianRowRelDiff(RunQuantized(w, DType::kF16, ids), f32) / f16_error;
  const double weight_error = dtype == DType::kQ8_0 ? 0.0057 : dtype == DType::kQ6_K ? 0.02 : 0.085;
  const kernels::KernelTable& table = kernels::GetKernelTable(SelectIsa().value());
  const bool int8_activations =
      table.quant_matmul[static_cast<int>(*kernels::WeightTypeOf(dtype, "test"))] != nullptr;
  // 8-bit activations with one scale per weight block: the largest |x| of 32 Gaussians is ~2.5
  // sigma, of 256 ~3.3 sigma, so the rms rounding error is 0.57% or 0.75% of rms(x).
  const double activation_error = !int8_activations ? 0.0 : dtype == DType::kQ8_0 ? 0.0057 : 0.0075;
  return 2.0 * gain * (weight_error + activation_error);
}

// Runs `w` in F32 and with its matrices in each of `dtypes`; checks each against its bound.
void ExpectQuantizedCloseToF32(const ModelWeights& w, const std::vector<DType>& dtypes) {
  const std::vector<int32_t> ids = RandomIds(24, w.config.vocab_size, 1);
  const Logits f32 = RunQuantized(w, DType::kF32, ids);
  for (DType dtype : dtypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const double rel = MedianRowRelDiff(RunQuantized(w, dtype, ids), f32);
    const double bound = QuantizedLogitBound(w, ids, f32, dtype);
    ::testing::Test::RecordProperty(std::string(DTypeName(dtype)) + "_median_row_rel_diff",
                                    std::to_string(rel));
    ::testing::Test::RecordProperty(std::string(DTypeName(dtype)) + "_bound",
                                    std::to_string(bound));
    EXPECT_LE(rel, bound);
    EXPECT_GT(rel, 0.0);  // the quantized matrices were used
  }
}

// The golden tiny model: hidden 64, so Q8_0 only (the K formats need rows of 256).
TEST(QuantizedForwardTest, GoldenTinyQ8_0CloseToF32) {
  Result<ModelWeights> w =
      LoadModel(std::string(CLOVER_SHARED_DIR) + "/golden/qwen35moe-tiny/model-f32.gguf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ExpectQuantizedCloseToF32(*w, {DType::kQ8_0});
}

// The tiny shapes widened to 256 so that every matrix takes the K formats.
ModelConfig Tiny256Config() {
  ModelConfig c = RandomModelConfig("tiny").value();
  c.hidden = 256;
  c.head_dim = 64;
  c.dk = c.dv = 64;
  c.expert_ffn = 256;
  c.shared_ffn = 256;
  return c;
}

TEST(QuantizedForwardTest, KFormatsCloseToF32) {
  ExpectQuantizedCloseToF32(MakeRandomWeights(Tiny256Config(), 3, DType::kF32),
                            {DType::kQ8_0, DType::kQ6_K, DType::kQ4_K});
}

}  // namespace
}  // namespace clover::model
