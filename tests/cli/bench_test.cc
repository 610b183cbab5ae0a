// `clover bench`: the bytes a pass is counted to read (hand-computed for the tiny random model),
// and the JSON fields that set decode and the N-row passes against the measured bandwidth.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "cli/pass_bytes.h"
#include "model/random_weights.h"

namespace clover::cli {
namespace {

using testing::RunClover;
using testing::RunResult;

model::ModelWeights TinyBf16() {
  return model::MakeRandomWeights(model::RandomModelConfig("tiny").value(), 1, DType::kBF16);
}

// The tiny shapes (hidden 64, vocab 512; layers GDN, GDN, GDN, attention; 8 experts of ffn 32,
// shared ffn 32) with BF16 matrices (2 bytes) and F32 norms, conv, gates and router (4 bytes).
TEST(PassBytesTest, MatchesAHandCountOfTheTinyModel) {
  const model::ModelWeights w = TinyBf16();
  const uint64_t norms = 2 * 64 * 4;              // attn_norm, post_norm
  const uint64_t gdn = 128 * 64 * 2               // qkv: conv_dim 2*2*16 + 4*16 = 128
                       + 64 * 64 * 2              // z: value_dim 64
                       + 2 * (4 * 64 * 2)         // beta, alpha: hv 4
                       + 128 * 4 * 4              // conv [conv_dim, 4]
                       + 2 * (4 * 4)              // dt_bias, a
                       + 16 * 4                   // norm [dv]
                       + 64 * 64 * 2;             // out
  const uint64_t attention = 256 * 64 * 2         // q: 4 heads * 32 * 2 (query | gate)
                             + 2 * (64 * 64 * 2)  // k, v: 2 kv heads * 32
                             + 64 * 128 * 2       // o
                             + 2 * (32 * 4);      // q_norm, k_norm
  const uint64_t moe_fixed = 8 * 64 * 4           // router
                             + 3 * (32 * 64 * 2)  // shared gate, up, down
                             + 64 * 4;            // shared-expert gate
  const uint64_t expert = 3 * (32 * 64 * 2);      // gate, up, down
  const uint64_t head = 64 * 4 + 512 * 64 * 2;    // output_norm, output
  const uint64_t embed_row = 64 * 2;
  const uint64_t gdn_state = 2 * (3 * 128 * 4  // conv state: 3 rows of conv_dim, read + written
                                  + 4 * 16 * 16 * 4);  // recurrent: hv x dk x dv, read + written
  const uint64_t kv_row = 2 * 64 * 4;                  // K and V rows of kv_dim 64

  // One decode step at position 10: top-2 in every layer.
  const std::vector<int> decode = {2, 2, 2, 2};
  const PassBytes step = CountPassBytes(w, decode, 10, 1, 1);
  EXPECT_EQ(step.weights, embed_row + 3 * (norms + gdn + moe_fixed + 2 * expert) +
                              (norms + attention + moe_fixed + 2 * expert) + head);
  EXPECT_EQ(step.state, 3 * gdn_state + (10 + 1) * kv_row + kv_row);
  EXPECT_EQ(step.total(), step.weights + step.state);

  // A 32-row pass after 64 positions that ran 5, 8, 6 and 7 distinct experts, every row's logits.
  const std::vector<int> pass = {5, 8, 6, 7};
  const PassBytes rows = CountPassBytes(w, pass, 64, 32, 32);
  EXPECT_EQ(rows.weights, 32 * embed_row + 3 * (norms + gdn + moe_fixed) +
                              (norms + attention + moe_fixed) + (5 + 8 + 6 + 7) * expert + head);
  EXPECT_EQ(rows.state, 3 * gdn_state + (64 + 32) * kv_row + 32 * kv_row);
}

TEST(PassBytesTest, GrowsByOneExpertPerDistinctExpertAndDropsTheUnusedHead) {
  const model::ModelWeights w = TinyBf16();
  const uint64_t expert = w.layers[1].moe.expert_gate[0].nbytes +
                          w.layers[1].moe.expert_up[0].nbytes +
                          w.layers[1].moe.expert_down[0].nbytes;
  const std::vector<int> fewer = {2, 2, 2, 2}, more = {2, 5, 2, 2};
  const PassBytes a = CountPassBytes(w, fewer, 0, 4, 1);
  const PassBytes b = CountPassBytes(w, more, 0, 4, 1);
  EXPECT_EQ(b.weights - a.weights, 3 * expert);
  EXPECT_EQ(b.state, a.state);
  const PassBytes no_logits = CountPassBytes(w, fewer, 0, 4, 0);
  EXPECT_EQ(a.weights - no_logits.weights, w.output_norm.nbytes + w.output.nbytes);
}

// A bidirectional preview also reads each GDN layer's preview tensors (clover-spec.md §3).
TEST(PassBytesTest, BidirectionalPreviewAddsTheGdnPreviewTensors) {
  const model::ModelWeights w =
      model::MakeRandomWeights(model::RandomModelConfig("clover-tiny").value(), 1, DType::kBF16);
  const uint64_t per_gdn_layer = 128 * 4 * 4         // conv_bwd [conv_dim, 4] F32
                                 + 2 * (4 * 64 * 2)  // beta_bwd, alpha_bwd [hv, hidden] BF16
                                 + 3 * (4 * 4);      // a_bwd, dt_bwd, mix_bwd [hv] F32
  const std::vector<int> distinct = {3, 3, 3, 3};
  const PassBytes causal = CountPassBytes(w, distinct, 8, 8, 8);
  const PassBytes bidirectional = CountPassBytes(w, distinct, 8, 8, 8, true);
  EXPECT_EQ(bidirectional.weights - causal.weights, 3 * per_gdn_layer);
  EXPECT_EQ(bidirectional.state, causal.state);
}

// The command reports the bandwidth, the bytes and the ratios; its byte counts are those of the
// random model it runs (seed 1) with the distinct experts it reports.
TEST(BenchCommandTest, JsonSetsDecodeAndThePassAgainstTheBandwidth) {
  const RunResult r =
      RunClover("bench --random tiny --threads 2 --reps 1 --rows 16 --triad-mib 8 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["triad_array_bytes"].get<uint64_t>(), uint64_t{8} << 20);
  EXPECT_GT(j["triad_gb_s"].get<double>(), 0.0);
  EXPECT_EQ(j["tg32_distinct_experts_per_layer"].get<double>(), 2.0);  // top-2, one row

  const model::ModelWeights w = TinyBf16();
  const std::vector<int> distinct = j["append_distinct_experts"].get<std::vector<int>>();
  ASSERT_EQ(distinct.size(), 4u);
  for (int d : distinct) {
    EXPECT_GE(d, 2);
    EXPECT_LE(d, 8);
  }
  const PassBytes pass = CountPassBytes(w, distinct, 64, 16, 16);
  EXPECT_EQ(j["append_bytes"].get<uint64_t>(), pass.total());
  const std::vector<int> preview = j["preview_distinct_experts"].get<std::vector<int>>();
  ASSERT_EQ(preview.size(), 4u);
  EXPECT_EQ(j["preview_bytes"].get<uint64_t>(), CountPassBytes(w, preview, 64, 16, 16).total());
  EXPECT_EQ(j["append_weight_bytes"].get<uint64_t>(), pass.weights);
  const double bw = j["triad_gb_s"].get<double>() * 1e9;
  EXPECT_NEAR(j["append_limit_ms"].get<double>(), pass.total() / bw * 1e3, 1e-9);
  EXPECT_NEAR(j["append_of_limit"].get<double>(),
              j["append_limit_ms"].get<double>() / j["append_ms"].get<double>(), 1e-9);

  // Decode: 32 steps after 64 positions, top-2 everywhere, so the mean step is the middle one's
  // weights plus the mean state.
  const std::vector<int> top2 = {2, 2, 2, 2};
  double state = 0;
  for (int i = 0; i < 32; ++i) state += CountPassBytes(w, top2, 64 + i, 1, 1).state;
  const double step = CountPassBytes(w, top2, 64, 1, 1).weights + state / 32;
  EXPECT_DOUBLE_EQ(j["tg32_bytes_per_step"].get<double>(), step);
  EXPECT_NEAR(j["tg32_limit_tok_s"].get<double>(), bw / step, 1e-6 * bw / step);
  EXPECT_NEAR(j["tg32_of_limit"].get<double>(),
              j["tg32_tok_s"].get<double>() / j["tg32_limit_tok_s"].get<double>(), 1e-9);

  // One repetition: its pair is the one decode time and the triad taken just before it.
  const double paired_triad = j["tg32_paired_triad_gb_s_low"].get<double>() * 1e9;
  EXPECT_EQ(j["tg32_paired_triad_gb_s_high"].get<double>(),
            j["tg32_paired_triad_gb_s_low"].get<double>());
  EXPECT_GT(paired_triad, 0.0);
  EXPECT_NEAR(j["tg32_paired_of_limit"].get<double>(),
              j["tg32_tok_s"].get<double>() * step / paired_triad,
              1e-9 * j["tg32_paired_of_limit"].get<double>());
  EXPECT_EQ(j["tg32_paired_of_limit_low"].get<double>(), j["tg32_paired_of_limit"].get<double>());
  EXPECT_EQ(j["tg32_paired_of_limit_high"].get<double>(), j["tg32_paired_of_limit"].get<double>());
}

// With several repetitions the paired shares are ordered low <= median <= high, and the best
// repetition's speed is at least the paired median's over the paired triads' range.
TEST(BenchCommandTest, PairedDecodeRepetitionsAreSummarised) {
  const RunResult r =
      RunClover("bench --random tiny --threads 2 --reps 3 --rows 4 --triad-mib 8 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double low = j["tg32_paired_of_limit_low"].get<double>();
  const double median = j["tg32_paired_of_limit"].get<double>();
  const double high = j["tg32_paired_of_limit_high"].get<double>();
  EXPECT_GT(low, 0.0);
  EXPECT_LE(low, median);
  EXPECT_LE(median, high);
  const double triad_low = j["tg32_paired_triad_gb_s_low"].get<double>();
  const double triad_high = j["tg32_paired_triad_gb_s_high"].get<double>();
  EXPECT_GT(triad_low, 0.0);
  EXPECT_LE(triad_low, triad_high);
  // The fastest repetition against the slowest paired triad bounds every paired share.
  const double step = j["tg32_bytes_per_step"].get<double>();
  EXPECT_LE(high, j["tg32_tok_s"].get<double>() * step / (triad_low * 1e9) * (1 + 1e-9));
}

// Loading maps the file: neither the load nor the first token reads the experts that token is
// not routed to. A file that is mostly experts (256 of them, top-2) shows it in the resident set.
TEST(BenchCommandTest, LoadAndFirstTokenTouchOnlyWhatTheyUse) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "clover_bench_test_experts.gguf";
  const RunResult synth = RunClover("synth -o " + file.string() +
                                    " --preset tiny --set n_experts=256 --set expert_ffn=256 "
                                    "--type q8_0");
  ASSERT_EQ(synth.rc, 0) << synth.err;
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(file));
  const RunResult r =
      RunClover("bench " + file.string() + " --threads 1 --reps 1 --rows 4 --triad-mib 8 --json");
  std::filesystem::remove(file);
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["load_ms"].get<double>(), 0.0);
  EXPECT_GT(j["first_token_ms"].get<double>(), 0.0);
  EXPECT_LT(j["load_resident_bytes"].get<int64_t>(), file_bytes / 10) << file_bytes;
  EXPECT_LT(j["first_token_resident_bytes"].get<int64_t>(), file_bytes / 2) << file_bytes;
  // The file's own mapping: resident after the whole run, never more than the file, and its
  // huge-page part within it.
  const auto weights_resident = j["weights_resident_bytes"].get<int64_t>();
  EXPECT_GT(weights_resident, 0);
  EXPECT_LE(weights_resident, file_bytes + (int64_t{2} << 20));
  EXPECT_GE(j["weights_huge_page_bytes"].get<int64_t>(), 0);
  EXPECT_LE(j["weights_huge_page_bytes"].get<int64_t>(), weights_resident);
}

TEST(BenchCommandTest, RejectsAnEmptyTriad) {
  const RunResult r = RunClover("bench --random tiny --triad-mib 0");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--triad-mib"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clover::cli
