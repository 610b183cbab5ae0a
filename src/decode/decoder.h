// The Decoder interface: a per-request state machine driven by the scheduler (engine-flow.md).
// NextGroups() says which rows the next forward must run; Consume() takes their logits and
// returns what happened (tokens emitted, block committed, finished). Decoders never call the model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "decode/penalties.h"
#include "decode/sampling.h"
#include "model/config.h"

namespace clover::decode {

// kDiffusion: LowConfidence (the release decoder); kFrontier: LowConfidence plus a stride of the
// most confident rows above a floor (clover-decoding.md §7.2); kSpeculative: draft-self, drafts
// from a preview pass checked by a causal pass, the AR output token for token (§9.2).
enum class DecoderKind { kAr, kDiffusion, kFrontier, kSpeculative };
inline bool IsBlockDecoder(DecoderKind kind) {
  return kind == DecoderKind::kDiffusion || kind == DecoderKind::kFrontier;
}

// Frontier-stride settings (clover-decoding.md §7.2; defaults are the spec's proposal).
struct FrontierParams {
  double floor = 0.7;    // stride rows need at least this confidence
  int target_iters = 8;  // passes a block should take
  int max_stride = 16;   // stride clamp [1, max_stride]
};
// Draft-self settings: the draft length N adapts within [draft_min, draft_max], doubling after a
// round whose drafts were all accepted and halving after one that kept fewer than half.
struct SpeculativeParams {
  int draft_min = 2;
  int draft_max = 16;
};
enum class FinishReason { kStop, kLength };

const char* DecoderKindName(DecoderKind kind);      // "ar" / "diffusion" / "frontier" / "speculative"
const char* FinishReasonName(FinishReason reason);  // "stop" / "length" (OpenAI finish_reason)

// One generation request. Defaults are clover-spec.md's.
struct DecodeRequest {
  DecoderKind kind = DecoderKind::kDiffusion;
  std::vector<int32_t> prompt;              // rendered and tokenized; must not be empty
  int64_t max_tokens = 4096;                // generated tokens (thinking included)
  std::vector<int32_t> stop_ids;            // in addition to the model's EOS ids
  std::vector<std::string> stop_strings;    // matched on emitted text across blocks
  double threshold = 0.95;                  // LowConfidence tau
  FrontierParams frontier;                  // kFrontier only
  SpeculativeParams speculative;            // kSpeculative only
  int block_size = 0;                       // 8, 16 or 32; 0 = the model's diffusion.block_size
  SamplingParams sampling;                  // greedy by default
  PenaltyOverrides penalties;               // unset fields: Clover release values on Clover
  std::optional<StopPushParams> stop_push;  // unset: kCloverReleaseStopPush on Clover, else off
  bool thinking = false;                    // generation starts inside <think>
  bool keep_session = false;                // also commit the final block (multi-turn reuse)
  // Diffusion: ask for each commit together with the next block's first preview, which the
  // driver runs in one forward (clover-decoding.md §6.1): one pass fewer per block.
  // Speculative: each verify carries the next round's draft preview (used when every draft is
  // accepted), so a round is one forward instead of two.
  bool fuse_commit = false;
  // Diffusion: expert budget + live-row reuse (clover-decoding.md §8, §9.1): a preview pass that
  // recomputes every row and the block coreset is followed by passes that compute only the live
  // rows (masked, or fixed in the previous pass) inside that coreset, until `reuse_passes` passes
  // since it or until the masked rows have halved; never across blocks. 0 = off, 1 = every pass
  // recomputes (the same output as off).
  int reuse_passes = 0;
};

// What a decoder needs to know about the model and its tokenizer.
struct DecodeModelInfo {
  int64_t vocab_size = 0;                // width of one logits row
  int64_t n_valid_tokens = 0;            // ids >= this (padded vocab) are never chosen
  std::optional<int32_t> mask_token_id;  // required by diffusion; never chosen
  std::vector<int32_t> eos_ids;          // model stop ids (EOS push targets)
  std::optional<int32_t> think_end_id;   // `</think>`, when the tokenizer has it
  bool is_clover = false;                // enables the Clover release defaults
  int block_size = 32;                   // diffusion.block_size
  bool shift_logits = false;             // diffusion.shift_logits
  model::BlockAlignment block_alignment = model::BlockAlignment::kAnswer;
};

// Append: causal rows that write the sequence state (prefill, AR step, commit). Preview: block
// rows (fixed tokens or the mask id) that read the committed state only (clover-spec.md I1).
enum class GroupMode { kAppend, kPreview };

// Which rows of a preview the forward computes. `refresh`: every row and the block coreset, kept
// in the sequence's preview cache; otherwise only `live_rows` (ascending, the logit rows among
// them), the other rows and the coreset coming from that cache.
struct PreviewReuseRows {
  bool refresh = true;
  std::vector<int> live_rows;
};

struct RowGroup {
  GroupMode mode = GroupMode::kAppend;
  int64_t first_position = 0;  // position of tokens[0]; rows are contiguous
  std::vector<int32_t> tokens;
  std::vector<int> logit_rows;  // ascending indices into `tokens` whose logits Consume needs
  // kAppend only: the driver records the pass (model::AppendCapture) so that the Consume of this
  // group may return StepEvents::discarded > 0.
  bool capture = false;
  // kPreview with request reuse_passes > 0: the driver runs the group with the sequence's
  // model::PreviewCache (see PreviewReuseRows).
  std::optional<PreviewReuseRows> reuse = std::nullopt;
};

// Work counters. A pass is one forward over a group after the prefill.
struct DecodeCounters {
  int64_t prefill_rows = 0;
  int64_t preview_passes = 0;
  int64_t commit_passes = 0;
  int64_t ar_passes = 0;   // one-token Append passes of the AR decoder
  int64_t verify_passes = 0;   // causal passes of the speculative decoder
  int64_t drafted = 0;         // draft tokens proposed by its previews
  int64_t draft_accepted = 0;  // of those, accepted by the causal pass
  int64_t blocks = 0;      // blocks resolved
  int64_t rows_fixed = 0;  // rows fixed by LowConfidence (discarded ones included)
  int64_t tokens = 0;      // generated tokens emitted (a final stop id included)

  int64_t passes() const { return preview_passes + commit_passes + ar_passes + verify_passes; }
  // Returns tokens / passes, or 0 before the first pass.
  double tokens_per_pass() const {
    return passes() == 0 ? 0.0 : static_cast<double>(tokens) / static_cast<double>(passes());
  }
};

// What one Consume() produced.
struct StepEvents {
  std::vector<int32_t> tokens;         // accepted into the answer, in order (never the mask id)
  std::string text;                    // streamable now (stop ids and held-back text excluded)
  int64_t committed = 0;               // tokens the consumed Append group wrote to the state
  // Rows at the end of the consumed (captured) Append group that are not part of the sequence:
  // the driver cuts them off (model::Model::TruncateAppend) before the next forward.
  int64_t discarded = 0;
  std::optional<FinishReason> finish;  // set once, on the last step
};

// Returns the bytes of one token (byte-level pieces concatenate to UTF-8; a special token that is
// not text returns ""). Supplied by the tokenizer layer, faked in tests.
using TokenTextFn = std::function<std::string(int32_t token)>;

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Returns the groups of the next forward; empty once finished.
  virtual std::vector<RowGroup> NextGroups() = 0;
  // Takes the logits of every requested row of the last NextGroups(), group by group, row-major
  // [rows x vocab_size]. InvalidArgument on a size mismatch, FailedPrecondition after the finish.
  virtual Result<StepEvents> Consume(std::span<const float> logits) = 0;
  virtual bool finished() const = 0;
  virtual const DecodeCounters& counters() const = 0;
};

}  // namespace clover::decode
