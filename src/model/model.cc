// Model::Forward: embeddings -> layers (mixer + MoE, pre-norm residual) -> final norm -> head
// on the requested rows only (architecture.md §3.0).
#include "model/model.h"

#include <algorithm>
#include <map>
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
      kv_pool_(KvPool::Create(kv_page_size, weights.config.kv_dim())),
      preview_gdn_(weights.config.diffusion.preview_gdn.value_or(
          weights.config.has_preview_tensors ? PreviewGdn::kBidirectional : PreviewGdn::kCausal)) {
  if (!weights.config.has_preview_tensors) preview_gdn_ = PreviewGdn::kCausal;
}

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

Status Model::set_preview_gdn(PreviewGdn mode) {
  if (mode == PreviewGdn::kBidirectional && !weights_.config.has_preview_tensors) {
    return InvalidArgument(
        "model: preview_gdn \"bidirectional\" needs the preview tensors (ssm_conv1d_bwd, "
        "ssm_beta_bwd, ...), which this model does not have");
  }
  preview_gdn_ = mode;
  return Status::Ok();
}

Status Model::ValidateBatch(const ForwardBatch& batch) const {
  const ModelConfig& cfg = weights_.config;
  if (!batch.previews.empty()) {
    const DiffusionConfig& d = cfg.diffusion;
    if (!(d.coreset_mass > 0.0f && d.coreset_mass <= 1.0f) || d.coreset_min_experts < 0 ||
        cfg.effective_preview_topk() < 1) {
      return InvalidArgument(
          "forward: preview needs diffusion.coreset_mass in (0, 1], coreset_min_experts >= 0 "
          "and preview_topk >= 1, found " +
          std::to_string(d.coreset_mass) + ", " + std::to_string(d.coreset_min_experts) + ", " +
          std::to_string(cfg.effective_preview_topk()));
    }
  }
  // A state may appear in at most one append group and one preview group; a preview of a state
  // that also appends in this call starts where the append ends (the fused commit + preview).
  std::map<const SequenceState*, int64_t> append_end;
  for (const AppendGroup& a : batch.appends)
    if (a.state != nullptr) append_end[a.state] = a.first_pos + static_cast<int64_t>(a.tokens.size());
  std::set<std::pair<const SequenceState*, bool>> seen;
  const size_t n_groups = batch.appends.size() + batch.previews.size();
  for (size_t gi = 0; gi < n_groups; ++gi) {
    const bool preview = gi >= batch.appends.size();
    const size_t index = preview ? gi - batch.appends.size() : gi;
    PreviewGroup g;
    if (preview) {
      g = batch.previews[index];
    } else {
      const AppendGroup& a = batch.appends[index];
      g = {a.state, a.tokens, a.first_pos, a.logit_rows};
    }
    const std::string where = std::string("forward: ") + (preview ? "preview" : "append") +
                              " group " + std::to_string(index);
    if (g.state == nullptr) return InvalidArgument(where + ": no sequence state");
    if (!seen.insert({g.state, preview}).second) {
      return InvalidArgument(where + ": the same sequence state appears in two " +
                             (preview ? "preview" : "append") + " groups");
    }
    if (g.tokens.empty()) return InvalidArgument(where + ": no tokens");
    const auto appended = append_end.find(g.state);
    const int64_t expected_pos =
        preview && appended != append_end.end() ? appended->second : g.state->length();
    if (g.first_pos != expected_pos) {
      return InvalidArgument(where + ": first position " + std::to_string(g.first_pos) +
                             " != sequence length " + std::to_string(expected_pos) +
                             (expected_pos != g.state->length() ? " (after this call's append)" : ""));
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
  return ValidatePreviewReuse(batch, preview_gdn_ == PreviewGdn::kBidirectional);
}

Status Model::TruncateAppend(SequenceState& state, const AppendCapture& capture,
                             int64_t keep_rows) const {
  return TruncateCapturedAppend(ctx_, weights_.config, state, capture, keep_rows);
}

Result<ForwardLogits> Model::Forward(const ForwardBatch& batch, ForwardScratch& scratch) const {
  CLOVER_TRY(ValidateBatch(batch));
  const ModelConfig& cfg = weights_.config;
  ForwardLogits logits;
  logits.vocab = cfg.vocab_size;
  // One pass over the weights for every group: appends first (they write their states layer by
  // layer), then previews (which read them, the state after a same-sequence append included).
  std::vector<GroupRows> groups;
  std::vector<Rows> rows;
  int64_t n = 0;
  for (const AppendGroup& g : batch.appends) {
    const int64_t count = static_cast<int64_t>(g.tokens.size());
    groups.push_back({g.state, nullptr, n, count, g.first_pos, g.capture});
    rows.push_back({g.tokens, &g.logit_rows});
    g.state->PrepareAppend(g.first_pos + count);
    if (g.capture != nullptr) {
      g.capture->state = g.state;
      g.capture->first_pos = g.first_pos;
      g.capture->rows = count;
      g.capture->layers.resize(cfg.n_layers);
    }
    n += count;
  }
  // Groups with a preview cache run their live rows only; `GroupRows::reuse` points in here.
  std::vector<PreviewPass> reuse;
  reuse.reserve(batch.previews.size());
  for (const PreviewGroup& g : batch.previews) {
    const PreviewPass* pass = nullptr;
    if (g.reuse.cache != nullptr)
      pass =
          &reuse.emplace_back(BeginPreviewPass(g, cfg, preview_gdn_ == PreviewGdn::kBidirectional));
    const int64_t count =
        static_cast<int64_t>(pass != nullptr ? pass->live.size() : g.tokens.size());
    groups.push_back({nullptr, g.state, n, count, g.first_pos});
    groups.back().reuse = pass;
    rows.push_back({pass != nullptr ? std::span<const int32_t>(pass->tokens) : g.tokens,
                    pass != nullptr ? &pass->logit_rows : &g.logit_rows});
    n += count;
  }
  PassStats stats;
  stats.distinct_experts.assign(cfg.n_layers, 0);
  stats.coreset.assign(batch.previews.size(), std::vector<std::vector<int32_t>>(cfg.n_layers));
  RunPass(groups, rows, scratch, &stats, &logits);
  for (const GroupRows& g : groups)
    if (!g.preview()) g.state->set_length(g.first_pos + g.count);
  logits.distinct_experts = std::move(stats.distinct_experts);
  logits.coresets = std::move(stats.coreset);
  return logits;
}

void Model::RunPass(const std::vector<GroupRows>& groups, const std::vector<Rows>& rows,
                    ForwardScratch& scratch, PassStats* stats, ForwardLogits* logits) const {
  const ModelConfig& cfg = weights_.config;
  const int64_t hidden = cfg.hidden;
  int64_t n = 0;
  int64_t n_logit_rows = 0;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    n += groups[gi].count;
    n_logit_rows += static_cast<int64_t>(rows[gi].logit_rows->size());
  }
  ForwardContext fc{ctx_, cfg, groups, n, gdn_scan_, debug_hook_ ? &debug_hook_ : nullptr};
  fc.preview_bidirectional = preview_gdn_ == PreviewGdn::kBidirectional;
  fc.stats = stats;

  float* x = scratch.Get(ForwardScratch::kHidden, n * hidden);
  {
    int64_t r = 0;
    const uint64_t row_bytes = weights_.embed.row_bytes();
    for (const Rows& g : rows) {
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
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      for (int64_t row : *rows[gi].logit_rows) {
        kernels::ref::RmsNorm(x + (groups[gi].begin + row) * hidden, weights_.output_norm.f32(),
                              hidden, cfg.rms_eps, head_in + j * hidden);
        ++j;
      }
    }
  }
  fc.Dump("result_norm", -1, head_in, n_logit_rows, hidden);
  const size_t at = logits->data.size();
  logits->n_rows += n_logit_rows;
  logits->data.resize(at + n_logit_rows * cfg.vocab_size);
  if (n_logit_rows > 0) {
    kernels::MatMul(ctx_, head_in, n_logit_rows, hidden, weights_.output, logits->data.data() + at,
                    cfg.vocab_size);
  }
}

}  // namespace clover::model
