// Model::Forward: embeddings -> layers (mixer + MoE, pre-norm residual) -> final norm -> head
// on the requested rows only (architecture.md §3.0).
#include "model/model.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/check.h"
#include "kernels/matmul.h"
#include "kernels/ref/dequantize.h"
#include "kernels/ref/rms_norm.h"
#include "model/attention_layer.h"
#include "model/gdn_layer.h"
#include "model/model_validation.h"
#include "model/moe_layer.h"

namespace clover::model {

Model::Model(const ModelWeights& weights, const kernels::KernelContext& ctx, int64_t kv_page_size)
    : weights_(weights),
      ctx_(ctx),
      kv_pool_(KvPool::Create(kv_page_size, weights.config.kv_dim())) {}

Result<std::unique_ptr<Model>> Model::Create(const ModelWeights& weights,
                                             const kernels::KernelContext& ctx,
                                             int64_t kv_page_size) {
  CLOVER_TRY(ValidateWeights(weights));
  if (kv_page_size <= 0) {
    return InvalidArgument("model: KV page size " + std::to_string(kv_page_size) +
                           ", expected > 0");
  }
  return std::unique_ptr<Model>(new Model(weights, ctx, kv_page_size));
}

Status Model::ValidateBatch(const ForwardBatch& batch) const {
  const ModelConfig& cfg = weights_.config;
  if (!batch.previews.empty()) {
    return Unimplemented("forward: preview groups are not implemented on the CPU backend yet");
  }
  std::set<const SequenceState*> seen;
  for (size_t gi = 0; gi < batch.appends.size(); ++gi) {
    const AppendGroup& g = batch.appends[gi];
    const std::string where = "forward: append group " + std::to_string(gi);
    if (g.state == nullptr) return InvalidArgument(where + ": no sequence state");
    if (!seen.insert(g.state).second) {
      return InvalidArgument(where + ": the same sequence state appears in two groups");
    }
    if (g.tokens.empty()) return InvalidArgument(where + ": no tokens");
    if (g.first_pos != g.state->length()) {
      return InvalidArgument(where + ": first position " + std::to_string(g.first_pos) +
                             " != sequence length " + std::to_string(g.state->length()));
    }
    const int64_t end = g.first_pos + static_cast<int64_t>(g.tokens.size());
    if (cfg.max_context > 0 && end > cfg.max_context) {
      return OutOfRange(where + ": positions up to " + std::to_string(end) +
                        " exceed the context limit " + std::to_string(cfg.max_context));
    }
    for (size_t t = 0; t < g.tokens.size(); ++t) {
      if (g.tokens[t] < 0 || g.tokens[t] >= cfg.vocab_size) {
        return InvalidArgument(where + ": token id " + std::to_string(g.tokens[t]) + " at row " +
                               std::to_string(t) + " is outside the vocabulary [0, " +
                               std::to_string(cfg.vocab_size) + ")");
      }
    }
    int64_t prev = -1;
    for (int64_t r : g.logit_rows) {
      if (r <= prev || r >= static_cast<int64_t>(g.tokens.size())) {
        return InvalidArgument(where + ": logit row " + std::to_string(r) +
                               " is not ascending inside [0, " + std::to_string(g.tokens.size()) +
                               ")");
      }
      prev = r;
    }
  }
  return Status::Ok();
}

Result<ForwardLogits> Model::Forward(const ForwardBatch& batch, ForwardScratch& scratch) const {
  CLOVER_TRY(ValidateBatch(batch));
  const ModelConfig& cfg = weights_.config;
  const int64_t hidden = cfg.hidden;

  std::vector<GroupRows> groups;
  int64_t n = 0;
  int64_t n_logit_rows = 0;
  for (const AppendGroup& g : batch.appends) {
    const int64_t count = static_cast<int64_t>(g.tokens.size());
    groups.push_back({g.state, n, count, g.first_pos});
    g.state->PrepareAppend(g.first_pos + count);
    n += count;
    n_logit_rows += static_cast<int64_t>(g.logit_rows.size());
  }
  ForwardContext fc{ctx_, cfg, groups, n, gdn_scan_, debug_hook_ ? &debug_hook_ : nullptr};

  float* x = scratch.Get(ForwardScratch::kHidden, n * hidden);
  {
    int64_t r = 0;
    const uint64_t row_bytes = weights_.embed.row_bytes();
    for (const AppendGroup& g : batch.appends) {
      for (int32_t id : g.tokens) {
        Status s = kernels::ref::DequantizeRow(
            weights_.embed.dtype, weights_.embed.bytes() + id * row_bytes, hidden, x + r * hidden);
        CLOVER_CHECK(s.ok());  // dtype checked by ValidateWeights
        ++r;
      }
    }
  }
  fc.Dump("model.input_embed", -1, x, n, hidden);

  float* xn = scratch.Get(ForwardScratch::kNormed, n * hidden);
  float* mix = scratch.Get(ForwardScratch::kMixer, n * hidden);
  for (int il = 0; il < cfg.n_layers; ++il) {
    const LayerWeights& lw = weights_.layers[il];
    fc.ForRows(n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        kernels::ref::RmsNorm(x + r * hidden, lw.attn_norm.f32(), hidden, cfg.rms_eps,
                              xn + r * hidden);
    });
    fc.Dump("attn_norm", il, xn, n, hidden);
    if (lw.kind == LayerKind::kGatedDeltaNet) {
      GdnForward(fc, il, lw.gdn, xn, mix, scratch);
    } else {
      AttentionForward(fc, il, lw.attn, xn, mix, scratch);
    }
    for (int64_t i = 0; i < n * hidden; ++i) x[i] += mix[i];
    fc.Dump("attn_residual", il, x, n, hidden);
    fc.ForRows(n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        kernels::ref::RmsNorm(x + r * hidden, lw.post_norm.f32(), hidden, cfg.rms_eps,
                              xn + r * hidden);
    });
    fc.Dump("attn_post_norm", il, xn, n, hidden);
    MoeForward(fc, il, lw.moe, xn, mix, scratch);
    for (int64_t i = 0; i < n * hidden; ++i) x[i] += mix[i];
    fc.Dump("l_out", il, x, n, hidden);
  }

  // Final norm and head on the requested rows only: the head is the largest matmul.
  float* head_in =
      scratch.Get(ForwardScratch::kHeadIn, std::max<int64_t>(1, n_logit_rows) * hidden);
  {
    int64_t j = 0;
    for (size_t gi = 0; gi < batch.appends.size(); ++gi) {
      for (int64_t row : batch.appends[gi].logit_rows) {
        kernels::ref::RmsNorm(x + (groups[gi].begin + row) * hidden, weights_.output_norm.f32(),
                              hidden, cfg.rms_eps, head_in + j * hidden);
        ++j;
      }
    }
  }
  fc.Dump("result_norm", -1, head_in, n_logit_rows, hidden);
  ForwardLogits logits;
  logits.vocab = cfg.vocab_size;
  logits.n_rows = n_logit_rows;
  logits.data.resize(n_logit_rows * cfg.vocab_size);
  if (n_logit_rows > 0) {
    kernels::MatMul(ctx_, head_in, n_logit_rows, hidden, weights_.output, logits.data.data(),
                    cfg.vocab_size);
  }
  for (const GroupRows& g : groups) g.state->set_length(g.first_pos + g.count);
  return logits;
}

}  // namespace clover::model
