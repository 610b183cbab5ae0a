// Self-speculative "draft-self" decoder (clover-decoding.md §9.2): the model drafts N tokens with
// one read-only preview pass over [seed, MASK x N] and checks them with one causal pass over
// [seed, drafts]; the matching prefix plus the causal choice after it are accepted, and the
// state is cut back to the accepted rows from what the verify pass captured (no re-decode).
// Every token is the causal path's own choice, so the output is the AR decoder's, token for token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "decode/decoder_base.h"

namespace clover::decode {

class SpeculativeDecoder : public DecoderBase {
 public:
  // `model.mask_token_id` must be set (registry.cc checks it).
  SpeculativeDecoder(const ResolvedRequest& request, const DecodeModelInfo& model,
                     TokenTextFn token_text);

  std::vector<RowGroup> NextGroups() override;
  Result<StepEvents> Consume(std::span<const float> logits) override;
  bool finished() const override { return state_ == State::kDone; }

  // Drafts the next round asks for before the budget clamp (adapts within the request's range).
  int draft_length() const { return draft_length_; }

 private:
  // kDraft: the preview over [seed, MASK x N]. kVerify: the causal pass over [seed, drafts]
  // (with fuse_commit also the next round's draft preview, assuming every draft is accepted).
  // kFinalCommit: append the last token of a kept session without logits.
  enum class State { kPrefill, kDraft, kVerify, kFinalCommit, kDone };

  // Drafts to ask for after `pending` more tokens are emitted: never past max_tokens.
  int DraftsWithin(int64_t pending) const;
  // The preview over `anchor` (the seed, or the mask id when the seed is not known yet) and N
  // masks at `position`, asking for the rows that predict positions position + 1 .. + N.
  RowGroup DraftGroup(int64_t position, int32_t anchor, int n) const;
  // Reads the drafts (argmax, the mask and padded ids excluded) from consecutive logit rows.
  void ReadDrafts(std::span<const float> logits, int n);

  int32_t mask_id_;
  State state_ = State::kPrefill;
  int64_t position_ = 0;          // committed length
  int32_t seed_ = -1;             // emitted, not yet appended: the next row at position_
  std::vector<int32_t> drafts_;   // for positions position_ + 1, ...
  int draft_length_ = 0;          // N of the next draft, within [draft_min, draft_max]
  int fused_drafts_ = 0;          // drafts the fused preview of the current verify asks for
};

}  // namespace clover::decode
