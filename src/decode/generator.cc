// Generator: one sequence through a BatchRunner, with cancellation between passes.
#include "decode/generator.h"

namespace clover::decode {

Generator::Generator(const model::Model& model) : runner_(model), state_(model.NewSequence()) {}

Result<GenerateResult> Generator::Run(Decoder& decoder, const StepCallback& on_step,
                                      const std::atomic<bool>* cancel) {
  const BatchRunner::SequenceId id = runner_.Add(decoder, on_step);
  while (true) {
    if (cancel != nullptr && cancel->load()) runner_.Cancel(id);
    std::vector<BatchRunner::Done> done = runner_.Step();
    if (done.empty()) continue;
    state_ = std::move(done[0].state);
    CLOVER_TRY(done[0].status);
    return std::move(done[0].result);
  }
}

}  // namespace clover::decode
