// Block-diffusion LowConfidence decoder (see block_diffusion_decoder.h).
#include "decode/block_diffusion_decoder.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "core/check.h"

namespace clover::decode {
namespace {

// Every row of a block of `block_size` rows: a refresh.
PreviewReuseRows AllRows(int block_size) {
  PreviewReuseRows all{true, std::vector<int>(static_cast<size_t>(block_size))};
  std::iota(all.live_rows.begin(), all.live_rows.end(), 0);
  return all;
}

}  // namespace

BlockDiffusionDecoder::BlockDiffusionDecoder(const ResolvedRequest& request,
                                             const DecodeModelInfo& model, TokenTextFn token_text)
    : DecoderBase(request, model, std::move(token_text)),
      mask_id_(*model.mask_token_id),
      block_size_(request.block_size) {
  const std::vector<int32_t>& prompt = request_.request.prompt;
  prefill_len_ = static_cast<int64_t>(prompt.size());
  if (model.block_alignment == model::BlockAlignment::kAbsolute) {
    // clover-decoding.md §2 item 3: blocks start at multiples of B; the prompt tail sits pre-fixed
    // in block 0 and is committed with it, never emitted.
    prefill_len_ -= prefill_len_ % block_size_;
    prompt_tail_.assign(prompt.begin() + prefill_len_, prompt.end());
  }
  if (prefill_len_ == 0) StartBlock();
}

void BlockDiffusionDecoder::StartBlock() {
  rows_.assign(static_cast<size_t>(block_size_), BlockRow{});
  prefix_rows_ = 0;
  pass_in_block_ = 0;
  passes_since_refresh_ = -1;
  fixed_last_round_.assign(static_cast<size_t>(block_size_), 0);
  if (counters_.blocks == 0) {
    for (int32_t id : prompt_tail_) rows_[prefix_rows_++] = BlockRow{RowState::kFixed, id};
  }
  state_ = State::kPreview;
}

int BlockDiffusionDecoder::MaskedRows() const {
  return static_cast<int>(std::count_if(
      rows_.begin(), rows_.end(), [](const BlockRow& r) { return r.state == RowState::kMasked; }));
}

bool BlockDiffusionDecoder::RefreshDue() const {
  return passes_since_refresh_ < 0 || passes_since_refresh_ >= request_.request.reuse_passes ||
         2 * MaskedRows() <= masked_at_refresh_;
}

PreviewReuseRows BlockDiffusionDecoder::ReuseRows() const {
  if (RefreshDue()) return AllRows(block_size_);
  // A row fixed by the previous pass changed its input from the mask id, so it runs once more;
  // with shift_logits a fixed row left of a masked one is needed for that row's logits.
  std::vector<char> live(static_cast<size_t>(block_size_), 0);
  for (int j = 0; j < block_size_; ++j)
    live[j] = rows_[j].state == RowState::kMasked || fixed_last_round_[j];
  for (int j : NeededRows()) live[j] = 1;
  PreviewReuseRows reuse{false, {}};
  for (int j = 0; j < block_size_; ++j)
    if (live[j]) reuse.live_rows.push_back(j);
  return reuse;
}

std::vector<int> BlockDiffusionDecoder::NeededRowsOf(const std::vector<BlockRow>& rows) const {
  std::vector<int> needed;
  for (int j = 0; j < block_size_; ++j) {
    if (rows[j].state != RowState::kMasked) continue;
    if (!model_.shift_logits)
      needed.push_back(j);
    else if (j > 0)
      needed.push_back(j - 1);
  }
  return needed;
}

std::vector<RowGroup> BlockDiffusionDecoder::NextGroups() {
  switch (state_) {
    case State::kPrefill: {
      const auto& prompt = request_.request.prompt;
      RowGroup g{GroupMode::kAppend, 0, {prompt.begin(), prompt.begin() + prefill_len_}, {}};
      if (model_.shift_logits) g.logit_rows.push_back(static_cast<int>(prefill_len_) - 1);
      return {std::move(g)};
    }
    case State::kPreview: {
      RowGroup g{GroupMode::kPreview, position_, {}, NeededRows()};
      for (const BlockRow& r : rows_)
        g.tokens.push_back(r.state == RowState::kFixed ? r.token : mask_id_);
      if (request_.request.reuse_passes > 0) g.reuse = ReuseRows();
      return {std::move(g)};
    }
    case State::kCommit: {
      RowGroup g{GroupMode::kAppend, position_, commit_, {}};
      if (model_.shift_logits && !final_commit_)
        g.logit_rows.push_back(static_cast<int>(commit_.size()) - 1);
      if (!request_.request.fuse_commit || final_commit_) return {std::move(g)};
      // The next block's first preview: every row masked (only block 0 holds prompt rows).
      const std::vector<BlockRow> fresh(static_cast<size_t>(block_size_), BlockRow{});
      RowGroup preview{GroupMode::kPreview, position_ + static_cast<int64_t>(commit_.size()),
                       std::vector<int32_t>(static_cast<size_t>(block_size_), mask_id_),
                       NeededRowsOf(fresh)};
      if (request_.request.reuse_passes > 0) preview.reuse = AllRows(block_size_);
      return {std::move(g), std::move(preview)};
    }
    case State::kDone:
      return {};
  }
  return {};
}

RowPhase BlockDiffusionDecoder::PhaseOf(int row) const {
  const int64_t offset = row - prefix_rows_;  // index of the row among this block's answer rows
  if (!stream_.thinking()) return RowPhase{-1, stream_.answer_tokens() + offset};
  if (model_.think_end_id) {
    for (int j = prefix_rows_; j < row; ++j) {
      if (rows_[j].state == RowState::kFixed && rows_[j].token == *model_.think_end_id)
        return RowPhase{-1, stream_.answer_tokens() + (row - j - 1)};
    }
  }
  return RowPhase{stream_.thinking_tokens() + offset, -1};
}

Status BlockDiffusionDecoder::ApplyRound(std::span<const float> logits,
                                         std::span<const int> needed) {
  const size_t vocab = static_cast<size_t>(model_.vocab_size);
  std::vector<RowCandidate> candidates;
  for (int j = 0; j < block_size_; ++j) {
    if (rows_[j].state != RowState::kMasked) continue;
    std::span<const float> raw;
    if (model_.shift_logits && j == 0) {
      CLOVER_CHECK(causal_logits_.size() == vocab);
      raw = causal_logits_;
    } else {
      const int source = model_.shift_logits ? j - 1 : j;
      const auto it = std::lower_bound(needed.begin(), needed.end(), source);
      CLOVER_CHECK(it != needed.end() && *it == source);
      raw = logits.subspan(static_cast<size_t>(it - needed.begin()) * vocab, vocab);
    }
    CLOVER_ASSIGN_OR_RETURN(TokenChoice choice, chooser_.Choose(raw, history_, PhaseOf(j), rng_));
    CLOVER_CHECK(choice.token != mask_id_);  // clover-spec.md I3: suppressed before the choice
    candidates.push_back(RowCandidate{j, choice.token, choice.prob});
  }
  const DecodeRequest& req = request_.request;
  const std::vector<size_t> selected =
      req.kind == DecoderKind::kFrontier
          ? SelectFrontier(candidates, req.threshold, pass_in_block_, req.frontier.floor,
                           req.frontier.target_iters, req.frontier.max_stride)
          : SelectLowConfidence(candidates, req.threshold);
  ++pass_in_block_;
  std::fill(fixed_last_round_.begin(), fixed_last_round_.end(), 0);
  for (size_t k : selected) {
    const RowCandidate& c = candidates[k];
    rows_[c.row] = BlockRow{RowState::kFixed, c.token};
    fixed_last_round_[c.row] = 1;
    history_.AddGenerated(c.token);
    ++counters_.rows_fixed;
  }
  return Status::Ok();
}

BlockEnd BlockDiffusionDecoder::EvaluateEnd() const {
  // Prompt rows at the head are not candidates for the EOS rule (a template's <|im_end|>).
  const int answer_rows = block_size_ - prefix_rows_;
  const int needed = static_cast<int>(std::min<int64_t>(stream_.remaining(), answer_rows));
  BlockEnd end = EvaluateBlockEnd(std::span<const BlockRow>(rows_).subspan(prefix_rows_),
                                  stream_.stop_ids(), needed);
  end.length += prefix_rows_;
  return end;
}

void BlockDiffusionDecoder::ResolveBlock(const BlockEnd& end, StepEvents& events) {
  ++counters_.blocks;
  std::vector<int32_t> answer;
  for (int j = prefix_rows_; j < end.length; ++j) answer.push_back(rows_[j].token);
  const size_t accepted = stream_.Emit(answer, events);
  counters_.tokens = stream_.generated();

  // Rows past the accepted ones are discarded (clover-decoding.md §5.3): out of the history.
  const int kept = prefix_rows_ + static_cast<int>(accepted);
  for (int j = kept; j < block_size_; ++j) {
    if (rows_[j].state == RowState::kFixed) history_.RemoveGenerated(rows_[j].token);
  }
  commit_.clear();
  for (int j = 0; j < kept; ++j) commit_.push_back(rows_[j].token);
  if (!stream_.finished()) {
    CLOVER_CHECK(kept == block_size_);
    state_ = State::kCommit;
  } else if (request_.request.keep_session && !commit_.empty()) {
    final_commit_ = true;
    state_ = State::kCommit;
  } else {
    state_ = State::kDone;
  }
}

Result<StepEvents> BlockDiffusionDecoder::Consume(std::span<const float> logits) {
  if (state_ == State::kDone)
    return FailedPrecondition("diffusion decoder: Consume called after the request finished");
  const std::vector<RowGroup> groups = NextGroups();
  size_t rows = 0;
  for (const RowGroup& g : groups) rows += g.logit_rows.size();
  const size_t vocab = static_cast<size_t>(model_.vocab_size);
  if (logits.size() != rows * vocab)
    return InvalidArgument("diffusion decoder: expected " + std::to_string(rows * vocab) +
                           " logits (" + std::to_string(rows) + " rows x " +
                           std::to_string(model_.vocab_size) + "), found " +
                           std::to_string(logits.size()));
  StepEvents events;
  size_t at = 0;
  for (const RowGroup& g : groups) {
    CLOVER_TRY(ConsumeGroup(logits.subspan(at * vocab, g.logit_rows.size() * vocab), g.logit_rows,
                            events));
    at += g.logit_rows.size();
  }
  return events;
}

Status BlockDiffusionDecoder::ConsumeGroup(std::span<const float> logits,
                                           std::span<const int> logit_rows, StepEvents& events) {
  switch (state_) {
    case State::kPrefill:
      counters_.prefill_rows += prefill_len_;
      position_ = prefill_len_;
      events.committed = prefill_len_;
      if (model_.shift_logits) causal_logits_.assign(logits.begin(), logits.end());
      StartBlock();
      break;
    case State::kPreview: {
      ++counters_.preview_passes;
      if (request_.request.reuse_passes > 0) {
        if (RefreshDue()) {
          passes_since_refresh_ = 0;
          masked_at_refresh_ = MaskedRows();
        }
        ++passes_since_refresh_;
      }
      CLOVER_TRY(ApplyRound(logits, logit_rows));
      BlockEnd end = EvaluateEnd();
      // With shift_logits a lone masked row 0 reads only the stored causal logits: no forward.
      while (!end.resolved && NeededRows().empty()) {
        CLOVER_TRY(ApplyRound({}, {}));
        end = EvaluateEnd();
      }
      if (end.resolved) ResolveBlock(end, events);
      break;
    }
    case State::kCommit:
      ++counters_.commit_passes;
      position_ += static_cast<int64_t>(commit_.size());
      events.committed = static_cast<int64_t>(commit_.size());
      if (final_commit_) {
        state_ = State::kDone;
        break;
      }
      if (model_.shift_logits) causal_logits_.assign(logits.begin(), logits.end());
      StartBlock();
      break;
    case State::kDone:
      break;
  }
  return Status::Ok();
}

}  // namespace clover::decode
