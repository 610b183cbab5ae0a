// Generator: the NextGroups -> Forward -> Consume loop (docs/decoding.md "Driving a decoder").
#include "decode/generator.h"

#include <chrono>

namespace clover::decode {

Generator::Generator(const model::Model& model) : model_(model), state_(model.NewSequence()) {}

Result<GenerateResult> Generator::Run(Decoder& decoder, const StepCallback& on_step,
                                      const std::atomic<bool>* cancel) {
  const auto start = std::chrono::steady_clock::now();
  state_.Reset();
  GenerateResult result;
  result.distinct_experts_sum.assign(model_.config().n_layers, 0);
  bool prefilled = false;
  std::vector<float> logits;
  while (!decoder.finished()) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    const std::vector<RowGroup> groups = decoder.NextGroups();
    if (groups.empty()) break;
    logits.clear();
    // One forward per group, in order: a later group may read what an earlier one committed.
    for (const RowGroup& g : groups) {
      model::ForwardBatch batch;
      std::vector<int64_t> rows(g.logit_rows.begin(), g.logit_rows.end());
      if (g.mode == GroupMode::kAppend) {
        batch.appends.push_back({&state_, g.tokens, g.first_position, std::move(rows)});
      } else {
        batch.previews.push_back({&state_, g.tokens, g.first_position, std::move(rows)});
      }
      CLOVER_ASSIGN_OR_RETURN(model::ForwardLogits out, model_.Forward(batch, scratch_));
      logits.insert(logits.end(), out.data.begin(), out.data.end());
      if (prefilled) {
        ++result.forward_calls;
        for (size_t il = 0; il < out.distinct_experts.size(); ++il)
          result.distinct_experts_sum[il] += out.distinct_experts[il];
      }
      prefilled = true;
    }
    CLOVER_ASSIGN_OR_RETURN(StepEvents events, decoder.Consume(logits));
    result.tokens.insert(result.tokens.end(), events.tokens.begin(), events.tokens.end());
    result.text += events.text;
    if (events.finish) result.finish = events.finish;
    if (on_step) on_step(events);
  }
  result.counters = decoder.counters();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace clover::decode
