// Preview cache bookkeeping: sizing, validation of reuse requests, the live rows of a pass.
#include "model/preview_cache.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include "model/forward_batch.h"

namespace clover::model {

void PreviewCache::Reset(const ModelConfig& config, const SequenceState* state, int64_t first_pos,
                         std::span<const int32_t> tokens, bool bidirectional) {
  state_ = state;
  first_pos_ = first_pos;
  bidirectional_ = bidirectional;
  tokens_.assign(tokens.begin(), tokens.end());
  const int64_t rows = static_cast<int64_t>(tokens.size());
  layer_rows_.resize(config.n_layers);
  stride_.resize(config.n_layers);
  coresets_.resize(config.n_layers);
  for (int il = 0; il < config.n_layers; ++il) {
    stride_[il] = config.layer_kinds[il] == LayerKind::kGatedDeltaNet
                      ? config.conv_dim() + 4 * int64_t{config.hv}
                      : 2 * config.kv_dim();
    layer_rows_[il].resize(rows * stride_[il]);
    coresets_[il].clear();
  }
}

bool PreviewCache::Holds(const SequenceState* state, int64_t first_pos, int64_t rows,
                         bool bidirectional) const {
  return state_ != nullptr && state_ == state && first_pos_ == first_pos && this->rows() == rows &&
         bidirectional_ == bidirectional;
}

Status ValidatePreviewReuse(const ForwardBatch& batch, bool bidirectional) {
  std::set<const PreviewCache*> caches;
  for (size_t i = 0; i < batch.previews.size(); ++i) {
    const PreviewGroup& g = batch.previews[i];
    const PreviewCache* cache = g.reuse.cache;
    if (cache == nullptr) continue;
    const std::string where = "forward: preview group " + std::to_string(i);
    if (!caches.insert(cache).second)
      return InvalidArgument(where + ": its preview cache is also another group's");
    if (g.reuse.refresh) continue;
    const int64_t rows = static_cast<int64_t>(g.tokens.size());
    if (!cache->Holds(g.state, g.first_pos, rows, bidirectional)) {
      return FailedPrecondition(where + ": reuse without a refresh, but the preview cache holds " +
                                "no refresh of the " + std::to_string(rows) +
                                "-row block at position " + std::to_string(g.first_pos) +
                                " of this sequence with this preview_gdn mode");
    }
    const std::vector<int64_t>& live = g.reuse.live_rows;
    for (size_t k = 0; k < live.size(); ++k) {
      if (live[k] < 0 || live[k] >= rows || (k > 0 && live[k] <= live[k - 1]))
        return InvalidArgument(where + ": live row " + std::to_string(live[k]) +
                               " is not ascending inside [0, " + std::to_string(rows) + ")");
    }
    if (live.empty()) return InvalidArgument(where + ": reuse without a refresh needs live rows");
    for (int64_t r : g.logit_rows) {
      if (!std::binary_search(live.begin(), live.end(), r))
        return InvalidArgument(where + ": logit row " + std::to_string(r) +
                               " is not a live row (only live rows are computed)");
    }
    // A row whose token changed since it was computed must run again, or its cached values
    // would belong to another token.
    for (int64_t r = 0; r < rows; ++r) {
      if (g.tokens[r] != cache->tokens()[r] && !std::binary_search(live.begin(), live.end(), r))
        return InvalidArgument(where + ": row " + std::to_string(r) + " holds token " +
                               std::to_string(g.tokens[r]) +
                               " but its cached values are of token " +
                               std::to_string(cache->tokens()[r]) + "; it must be live");
    }
  }
  return Status::Ok();
}

PreviewPass BeginPreviewPass(const PreviewGroup& g, const ModelConfig& config, bool bidirectional) {
  PreviewPass p;
  p.cache = g.reuse.cache;
  p.refresh = g.reuse.refresh;
  p.block_rows = static_cast<int64_t>(g.tokens.size());
  if (p.refresh) {
    p.cache->Reset(config, g.state, g.first_pos, g.tokens, bidirectional);
    p.live.resize(p.block_rows);
    std::iota(p.live.begin(), p.live.end(), 0);
  } else {
    p.live = g.reuse.live_rows;
  }
  for (int64_t r : p.live) {
    p.tokens.push_back(g.tokens[r]);
    p.cache->set_token(r, g.tokens[r]);
  }
  for (int64_t r : g.logit_rows) {
    p.logit_rows.push_back(std::lower_bound(p.live.begin(), p.live.end(), r) - p.live.begin());
  }
  return p;
}

}  // namespace clover::model
