// PreviewCache: what the preview passes over one block keep for the next passes of the same block
// (expert budget and live-row reuse, clover-decoding.md §8, §9.1; clover-spec.md §4 Q5, Q8).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "model/config.h"

namespace clover::model {

class SequenceState;
struct ForwardBatch;
struct PreviewGroup;

// Per layer, the values of every block row from the last pass that computed the row, and the
// block coreset of the last refresh. One per sequence, outside the SequenceState: a preview still
// reads the committed state only (clover-spec.md I1). A refresh pass refills it for its block; a
// pass over another block (or another sequence) must refresh first.
class PreviewCache {
 public:
  // Starts the block of `tokens` at `first_pos` after `state`: sizes the rows for `config` and
  // records the tokens; the layers of the refresh pass then fill every row. `bidirectional`: the
  // pass runs the backward GDN branch (whose gates the rows then hold too).
  void Reset(const ModelConfig& config, const SequenceState* state, int64_t first_pos,
             std::span<const int32_t> tokens, bool bidirectional);
  // Returns whether the cache holds a refresh of the block of `rows` rows at `first_pos` after
  // `state`, taken with the same GDN preview mode.
  bool Holds(const SequenceState* state, int64_t first_pos, int64_t rows, bool bidirectional) const;

  int64_t rows() const { return static_cast<int64_t>(tokens_.size()); }
  // The token each row held when its values were computed.
  std::span<const int32_t> tokens() const { return tokens_; }
  void set_token(int64_t row, int32_t token) { tokens_[row] = token; }

  // Attention layer `layer`, block row `row`: K (normed, rotated) then V, kv_dim floats each.
  float* kv_row(int layer, int64_t row) { return layer_rows_[layer].data() + row * stride_[layer]; }
  // GDN layer `layer`, block row `row`: the pre-conv projection [conv_dim], then beta [hv], the
  // log-decay g [hv], and the backward branch's beta~ [hv] and g~ [hv].
  float* gdn_row(int layer, int64_t row) { return kv_row(layer, row); }
  // Floats from one row of `layer` to the next.
  int64_t row_stride(int layer) const { return stride_[layer]; }
  // The kept experts of MoE layer `layer` (descending votes) from the last refresh.
  std::vector<int32_t>& coreset(int layer) { return coresets_[layer]; }

 private:
  const SequenceState* state_ = nullptr;
  int64_t first_pos_ = -1;
  bool bidirectional_ = false;
  std::vector<int32_t> tokens_;
  std::vector<std::vector<float>> layer_rows_;  // [layer][row * stride]
  std::vector<int64_t> stride_;
  std::vector<std::vector<int32_t>> coresets_;
};

// What a preview group asks of its cache.
struct PreviewReuse {
  PreviewCache* cache = nullptr;  // null: every row computed, nothing kept
  // Compute every row and the block coreset, and refill the cache. Otherwise only `live_rows`
  // (ascending block rows, the logit rows among them) run; the other rows' attention K/V and GDN
  // inputs and the coreset come from the cache.
  bool refresh = true;
  std::vector<int64_t> live_rows;
};

// A preview group with a cache as one pass runs it: its pass rows are the live block rows only.
struct PreviewPass {
  PreviewCache* cache = nullptr;
  bool refresh = true;
  int64_t block_rows = 0;       // B: the K/V and GDN scans cover all of them
  std::vector<int64_t> live;    // block row of each pass row, ascending (every row on a refresh)
  std::vector<int32_t> tokens;  // tokens of the live rows
  std::vector<int64_t> logit_rows;  // the group's logit rows as indices into `live`
};

// Checks the preview groups' reuse requests of `batch` (before any state or cache changes):
// FailedPrecondition when a pass without refresh finds no refresh of its block in the cache;
// InvalidArgument when its live rows are not ascending inside the block, miss a logit row, or
// leave out a row whose token differs from the cached one, or when two groups share a cache.
Status ValidatePreviewReuse(const ForwardBatch& batch, bool bidirectional);

// Returns how group `g` (which has a cache) runs in this pass, and prepares the cache: a refresh
// resets it to this block, otherwise the live rows' tokens are recorded.
PreviewPass BeginPreviewPass(const PreviewGroup& g, const ModelConfig& config, bool bidirectional);

}  // namespace clover::model
