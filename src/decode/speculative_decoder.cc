// Self-speculative draft-self decoder (see speculative_decoder.h).
#include "decode/speculative_decoder.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/check.h"

namespace clover::decode {

SpeculativeDecoder::SpeculativeDecoder(const ResolvedRequest& request, const DecodeModelInfo& model,
                                       TokenTextFn token_text)
    : DecoderBase(request, model, std::move(token_text)), mask_id_(*model.mask_token_id) {
  const SpeculativeParams& p = request_.request.speculative;
  draft_length_ = std::clamp(4, p.draft_min, p.draft_max);
}

int SpeculativeDecoder::DraftsWithin(int64_t pending) const {
  // A round emits at most drafts + 1 tokens (the accepted drafts and the causal choice after them).
  const int64_t room = stream_.remaining() - pending - 1;
  return static_cast<int>(std::clamp<int64_t>(room, 0, draft_length_));
}

RowGroup SpeculativeDecoder::DraftGroup(int64_t position, int32_t anchor, int n) const {
  RowGroup g{GroupMode::kPreview, position, std::vector<int32_t>(static_cast<size_t>(n) + 1, mask_id_),
             {}};
  g.tokens[0] = anchor;
  // clover-spec.md §3.4: unshifted, a mask row predicts its own position; shifted, the row before.
  const int first = model_.shift_logits ? 0 : 1;
  for (int j = 0; j < n; ++j) g.logit_rows.push_back(first + j);
  return g;
}

void SpeculativeDecoder::ReadDrafts(std::span<const float> logits, int n) {
  drafts_.clear();
  const int64_t vocab = model_.vocab_size;
  for (int j = 0; j < n; ++j) {
    const float* row = logits.data() + j * vocab;
    int32_t best = -1;
    for (int64_t t = 0; t < model_.n_valid_tokens; ++t) {
      if (t == mask_id_) continue;
      if (best < 0 || row[t] > row[best]) best = static_cast<int32_t>(t);
    }
    drafts_.push_back(best);
  }
  counters_.drafted += n;
}

std::vector<RowGroup> SpeculativeDecoder::NextGroups() {
  switch (state_) {
    case State::kPrefill: {
      const int last = static_cast<int>(request_.request.prompt.size()) - 1;
      return {RowGroup{GroupMode::kAppend, 0, request_.request.prompt, {last}}};
    }
    case State::kDraft:
      return {DraftGroup(position_, seed_, DraftsWithin(0))};
    case State::kVerify: {
      RowGroup verify{GroupMode::kAppend, position_, {seed_}, {0}};
      verify.tokens.insert(verify.tokens.end(), drafts_.begin(), drafts_.end());
      for (size_t j = 1; j < verify.tokens.size(); ++j) verify.logit_rows.push_back(static_cast<int>(j));
      verify.capture = !drafts_.empty();
      fused_drafts_ = 0;
      if (!request_.request.fuse_commit) return {std::move(verify)};
      // The next round's draft in the same forward, on the guess that every draft is accepted:
      // its anchor row is where the causal choice after the drafts will go, still unknown.
      fused_drafts_ = DraftsWithin(static_cast<int64_t>(drafts_.size()) + 1);
      if (fused_drafts_ == 0) return {std::move(verify)};
      const int64_t next = position_ + static_cast<int64_t>(verify.tokens.size());
      return {std::move(verify), DraftGroup(next, mask_id_, fused_drafts_)};
    }
    case State::kFinalCommit:
      return {RowGroup{GroupMode::kAppend, position_, {seed_}, {}}};
    case State::kDone:
      return {};
  }
  return {};
}

Result<StepEvents> SpeculativeDecoder::Consume(std::span<const float> logits) {
  if (state_ == State::kDone)
    return FailedPrecondition("speculative decoder: Consume called after the request finished");
  const int64_t vocab = model_.vocab_size;
  int64_t rows = 0;
  switch (state_) {
    case State::kPrefill:
      rows = 1;
      break;
    case State::kDraft:
      rows = DraftsWithin(0);
      break;
    case State::kVerify:
      rows = static_cast<int64_t>(drafts_.size()) + 1 + fused_drafts_;
      break;
    default:
      break;
  }
  if (static_cast<int64_t>(logits.size()) != rows * vocab)
    return InvalidArgument("speculative decoder: expected " + std::to_string(rows * vocab) +
                           " logits (" + std::to_string(rows) + " rows x " +
                           std::to_string(vocab) + "), found " + std::to_string(logits.size()));

  StepEvents events;
  if (state_ == State::kFinalCommit) {
    ++counters_.verify_passes;
    ++position_;
    events.committed = 1;
    state_ = State::kDone;
    return events;
  }
  if (state_ == State::kDraft) {
    ++counters_.preview_passes;
    ReadDrafts(logits, static_cast<int>(rows));
    state_ = State::kVerify;
    return events;
  }

  // The causal choices, row by row, exactly as the AR decoder makes them: row j sees the history
  // of every token before it, and the rng is drawn once per emitted token.
  const int64_t n_causal = state_ == State::kPrefill ? 1 : static_cast<int64_t>(drafts_.size()) + 1;
  int64_t accepted = 0;
  bool last_appended = false;  // the last emitted token is a verified draft, already in the state
  for (int64_t j = 0; j < n_causal; ++j) {
    CLOVER_ASSIGN_OR_RETURN(
        TokenChoice choice, chooser_.Choose(logits.subspan(j * vocab, vocab), history_, NextPhase(), rng_));
    CLOVER_CHECK(choice.token != mask_id_);
    const int32_t token = choice.token;
    const bool matches = j < static_cast<int64_t>(drafts_.size()) && token == drafts_[j];
    if (stream_.Emit({&token, 1}, events) == 0) break;
    history_.AddGenerated(token);
    last_appended = matches;
    if (matches) ++accepted;
    if (stream_.finished() || !matches) {
      seed_ = token;
      break;
    }
  }
  counters_.tokens = stream_.generated();

  if (state_ == State::kPrefill) {
    position_ = static_cast<int64_t>(request_.request.prompt.size());
    counters_.prefill_rows += position_;
    events.committed = position_;
  } else {
    ++counters_.verify_passes;
    counters_.draft_accepted += accepted;
    const int64_t appended = static_cast<int64_t>(drafts_.size()) + 1;
    events.committed = accepted + 1;
    events.discarded = appended - events.committed;
    position_ += events.committed;
    const SpeculativeParams& p = request_.request.speculative;
    if (!drafts_.empty()) {
      if (accepted == static_cast<int64_t>(drafts_.size()))
        draft_length_ = std::min(draft_length_ * 2, p.draft_max);
      else if (2 * accepted < static_cast<int64_t>(drafts_.size()))
        draft_length_ = std::max(draft_length_ / 2, p.draft_min);
    }
    const bool all_accepted = accepted == static_cast<int64_t>(drafts_.size());
    if (all_accepted && fused_drafts_ > 0 && !stream_.finished()) {
      // The fused preview guessed right: its rows are the next round's drafts.
      ReadDrafts(logits.subspan(appended * vocab), fused_drafts_);
    } else {
      drafts_.clear();
    }
  }

  if (stream_.finished()) {
    // A kept session also commits the last token unless it is already a verified row.
    state_ = request_.request.keep_session && !last_appended ? State::kFinalCommit : State::kDone;
  } else if (request_.request.fuse_commit || DraftsWithin(0) == 0) {
    // Fused: the next forward verifies (with no drafts after a miss, it is one AR step that also
    // drafts the round after). Without room for drafts, plain AR steps.
    state_ = State::kVerify;
  } else {
    state_ = State::kDraft;
  }
  return events;
}

}  // namespace clover::decode
