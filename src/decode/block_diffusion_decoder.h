// Block-diffusion decoder with LowConfidence selection (clover-decoding.md §1-§6): preview passes
// over a block of mask rows until it resolves, emit, then one causal commit of the block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "decode/decoder_base.h"
#include "decode/low_confidence.h"

namespace clover::decode {

class BlockDiffusionDecoder : public DecoderBase {
 public:
  // Preconditions (checked by CreateDecoder): `model.mask_token_id` is set, block size 8/16/32.
  BlockDiffusionDecoder(const ResolvedRequest& request, const DecodeModelInfo& model,
                        TokenTextFn token_text);

  std::vector<RowGroup> NextGroups() override;
  Result<StepEvents> Consume(std::span<const float> logits) override;
  bool finished() const override { return state_ == State::kDone; }

 private:
  enum class State { kPrefill, kPreview, kCommit, kDone };

  // Returns the preview rows whose logits the next pass needs: the masked rows, or with
  // shift_logits the row left of each masked row (row 0 reads the stored causal logits).
  std::vector<int> NeededRows() const { return NeededRowsOf(rows_); }
  std::vector<int> NeededRowsOf(const std::vector<BlockRow>& rows) const;
  // Returns the stop-push counters of block row `row`.
  RowPhase PhaseOf(int row) const;
  void StartBlock();
  int MaskedRows() const;
  // Whether the next preview recomputes every row and the coreset (clover-decoding.md §8, §9.1):
  // on the block's first pass, `reuse_passes` passes after the last refresh, or once the masked
  // rows have halved since it.
  bool RefreshDue() const;
  // The rows the next preview computes: all on a refresh, else the live rows (masked, fixed by
  // the previous pass, or needed for logits).
  PreviewReuseRows ReuseRows() const;
  // One LowConfidence round over the masked rows; `logits` holds the rows `needed` asks for.
  Status ApplyRound(std::span<const float> logits, std::span<const int> needed);
  BlockEnd EvaluateEnd() const;
  void ResolveBlock(const BlockEnd& end, StepEvents& events);
  // Consumes one group of the current state's NextGroups().
  Status ConsumeGroup(std::span<const float> logits, std::span<const int> logit_rows,
                      StepEvents& events);

  int32_t mask_id_;
  int block_size_;
  State state_ = State::kPrefill;

  int64_t position_ = 0;              // committed length
  int64_t prefill_len_ = 0;           // prompt rows prefilled causally
  std::vector<int32_t> prompt_tail_;  // absolute alignment: prompt rows pre-fixed in block 0
  std::vector<BlockRow> rows_;
  int prefix_rows_ = 0;    // pre-fixed prompt rows at the head of the current block
  int pass_in_block_ = 0;  // selection rounds so far in the current block (frontier)
  // Live-row reuse (request reuse_passes > 0).
  int passes_since_refresh_ = -1;       // previews of this block since its last refresh; -1: none
  int masked_at_refresh_ = 0;           // masked rows when that refresh ran
  std::vector<char> fixed_last_round_;  // rows fixed by the last selection round
  std::vector<float> causal_logits_;    // last committed row's causal logits (shift_logits)
  std::vector<int32_t> commit_;         // tokens of the pending commit
  bool final_commit_ = false;           // the pending commit ends the request (keep_session)
};

}  // namespace clover::decode
