// Driver loop for decoder tests (see fake_model.h).
#include "fake_model.h"

#include <algorithm>

namespace clover::decode::testing {

std::vector<float> Peaked(int64_t vocab, int32_t token, float margin) {
  std::vector<float> l(static_cast<size_t>(vocab), 0.0f);
  l[static_cast<size_t>(token)] = margin;
  return l;
}

Result<Trace> Drive(Decoder& decoder, const FakeModel& model, int max_steps) {
  Trace trace;
  for (int step = 0; !decoder.finished(); ++step) {
    if (step == max_steps) return InvalidArgument("fake driver: no finish after max_steps");
    std::vector<float> logits;
    int64_t captured_rows = 0;
    for (const RowGroup& g : decoder.NextGroups()) {
      if (g.first_position != static_cast<int64_t>(trace.state.size()))
        return InvalidArgument("fake driver: group at position " +
                               std::to_string(g.first_position) + ", committed length " +
                               std::to_string(trace.state.size()));
      if (g.mode == GroupMode::kAppend) {
        const size_t base = trace.state.size();
        trace.state.insert(trace.state.end(), g.tokens.begin(), g.tokens.end());
        trace.appends.push_back(g.tokens);
        captured_rows = g.capture ? static_cast<int64_t>(g.tokens.size()) : 0;
        for (int r : g.logit_rows) {
          const auto row = model.causal(std::span<const int32_t>(trace.state).first(base + r + 1));
          logits.insert(logits.end(), row.begin(), row.end());
        }
      } else {
        trace.previews.push_back(PreviewRecord{g.first_position, g.tokens, g.logit_rows});
        for (int r : g.logit_rows) {
          const auto row = model.preview(trace.state, g.tokens, r);
          logits.insert(logits.end(), row.begin(), row.end());
        }
      }
    }
    CLOVER_ASSIGN_OR_RETURN(StepEvents ev, decoder.Consume(logits));
    if (ev.discarded > 0) {
      // Model::TruncateAppend's part: only the last append of this step, and only if captured.
      if (captured_rows < ev.discarded)
        return InvalidArgument("fake driver: " + std::to_string(ev.discarded) +
                               " rows discarded, the step's captured append has " +
                               std::to_string(captured_rows));
      trace.state.resize(trace.state.size() - static_cast<size_t>(ev.discarded));
      trace.discarded += ev.discarded;
    }
    trace.emitted.insert(trace.emitted.end(), ev.tokens.begin(), ev.tokens.end());
    trace.text += ev.text;
    trace.committed_events += ev.committed;
    if (ev.finish) {
      if (trace.finish) return InvalidArgument("fake driver: finish reported twice");
      trace.finish = ev.finish;
    }
  }
  if (!decoder.NextGroups().empty()) return InvalidArgument("fake driver: groups after finish");
  if (trace.committed_events != static_cast<int64_t>(trace.state.size()))
    return InvalidArgument("fake driver: events report " + std::to_string(trace.committed_events) +
                           " committed tokens, the groups appended " +
                           std::to_string(trace.state.size()));
  return trace;
}

Result<StepEvents> RecordingDecoder::Consume(std::span<const float> logits) {
  for (const RowGroup& g : last_) {
    if (g.mode == GroupMode::kAppend) {
      trace.state.insert(trace.state.end(), g.tokens.begin(), g.tokens.end());
      trace.appends.push_back(g.tokens);
    } else {
      trace.previews.push_back({g.first_position, g.tokens, g.logit_rows});
      preview_groups.push_back(g);
      if (g.reuse && !g.reuse->refresh) ++reuse_passes;
    }
  }
  consumed.insert(consumed.end(), logits.begin(), logits.end());
  Result<StepEvents> ev = inner_.Consume(logits);
  if (ev.ok()) trace.emitted.insert(trace.emitted.end(), ev->tokens.begin(), ev->tokens.end());
  return ev;
}

std::string CheckInvariants(const Trace& trace, int32_t mask_id) {
  if (std::count(trace.emitted.begin(), trace.emitted.end(), mask_id) > 0)
    return "I3: the mask id was emitted";
  if (std::count(trace.state.begin(), trace.state.end(), mask_id) > 0)
    return "I3: the mask id was committed";
  for (size_t k = 1; k < trace.previews.size(); ++k) {
    const PreviewRecord& a = trace.previews[k - 1];
    const PreviewRecord& b = trace.previews[k];
    if (a.position != b.position) continue;  // a new block
    int fixed_a = 0, fixed_b = 0;
    for (size_t r = 0; r < a.tokens.size(); ++r) {
      fixed_a += a.tokens[r] != mask_id;
      fixed_b += b.tokens[r] != mask_id;
      if (a.tokens[r] != mask_id && b.tokens[r] != a.tokens[r])
        return "I4: row " + std::to_string(r) + " changed inside the block at position " +
               std::to_string(a.position);
    }
    if (fixed_b <= fixed_a)
      return "I5: a pass fixed no row in the block at position " + std::to_string(a.position);
  }
  return "";
}

}  // namespace clover::decode::testing
