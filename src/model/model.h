// Model: the CPU forward of a qwen35moe / clover_moe model over a ForwardBatch.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/status.h"
#include "kernels/kernel_context.h"
#include "model/forward_batch.h"
#include "model/forward_context.h"
#include "model/sequence_state.h"
#include "model/weights.h"

namespace clover::model {

// Positions per KV page: small enough that short sequences waste little, large enough that the
// page table stays short.
inline constexpr int64_t kDefaultKvPageSize = 256;

// Stateless apart from the weights: every sequence's state lives in its SequenceState.
// Forward calls sharing one KernelContext must not overlap (the thread pool runs one job at a
// time).
class Model {
 public:
  // Returns a model over `weights` (copied views; the storage is shared), after checking every
  // tensor's dtype and shape against the config (errors name the tensor, expected and found).
  // KV pages hold `kv_page_size` positions.
  static Result<std::unique_ptr<Model>> Create(const ModelWeights& weights,
                                               const kernels::KernelContext& ctx,
                                               int64_t kv_page_size = kDefaultKvPageSize);

  // Returns an empty sequence whose KV pages come from this model's pool.
  SequenceState NewSequence() const { return SequenceState(weights_.config, kv_pool_); }

  // Runs every group of `batch` in one pass over the weights and returns the logits of the
  // requested rows. Append groups advance their states; preview groups (clover-spec.md §3, §4)
  // read their committed state only. A state may be in one append and one preview group: the
  // preview then starts where the append ends and sees the appended rows (fused commit +
  // preview). Errors (bad token id, wrong first position, a state in two groups of one kind, over
  // the context) are returned before any state changes.
  Result<ForwardLogits> Forward(const ForwardBatch& batch, ForwardScratch& scratch) const;

  // Cuts `state` back to the first `keep_rows` rows of the append that `capture` recorded
  // (clover-decoding.md §9.2 step 4): the sequence length drops, and every GDN layer's conv and
  // recurrent state become those after row keep_rows - 1, rebuilt from the captured inputs
  // without running the layers again. FailedPrecondition when the capture is not of this
  // state's last forward; InvalidArgument when keep_rows is outside [0, captured rows].
  Status TruncateAppend(SequenceState& state, const AppendCapture& capture,
                        int64_t keep_rows) const;

  const ModelConfig& config() const { return weights_.config; }
  const ModelWeights& weights() const { return weights_; }
  // How preview passes run the GDN layers; starts at the config's resolved diffusion.preview_gdn.
  // InvalidArgument for kBidirectional on a model without the preview tensors.
  Status set_preview_gdn(PreviewGdn mode);
  PreviewGdn preview_gdn() const { return preview_gdn_; }
  // Test and debug knobs.
  void set_gdn_scan(GdnScan scan) { gdn_scan_ = scan; }
  void set_debug_hook(DebugHook hook) { debug_hook_ = std::move(hook); }

 private:
  Model(const ModelWeights& weights, const kernels::KernelContext& ctx, int64_t kv_page_size);
  Status ValidateBatch(const ForwardBatch& batch) const;
  // The tokens and requested logit rows of one group of a pass.
  struct Rows {
    std::span<const int32_t> tokens;
    const std::vector<int64_t>* logit_rows = nullptr;
  };
  // Runs every group in one pass over the weights and appends the requested logits.
  void RunPass(const std::vector<GroupRows>& groups, const std::vector<Rows>& rows,
               ForwardScratch& scratch, PassStats* stats, ForwardLogits* logits) const;

  ModelWeights weights_;
  kernels::KernelContext ctx_;
  std::shared_ptr<KvPool> kv_pool_;
  PreviewGdn preview_gdn_;
  GdnScan gdn_scan_ = GdnScan::kAuto;
  DebugHook debug_hook_;
};

}  // namespace clover::model
