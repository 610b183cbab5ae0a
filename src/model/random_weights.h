// Random models of any config (tests, benchmarks; later `clover synth`).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/status.h"
#include "model/config.h"
#include "model/weights.h"

namespace clover::model {

// Returns weights with owned buffers for `config`, drawn from `seed`: matrices in `dtype`
// (F32, BF16 or F16), norms/conv/gates in F32. Scales follow the golden generators
// (../shared/golden/qwen35moe-tiny/README.md): Linear N(0, 1/sqrt(fan_in)), router 3/sqrt(H),
// alpha 0.5/sqrt(H), head 2/sqrt(H), norms 1 + N(0, 0.1), conv N(0, 0.5), so activations stay O(1).
// The Clover preview tensors are added when config.has_preview_tensors.
ModelWeights MakeRandomWeights(const ModelConfig& config, uint64_t seed, DType dtype);

// Returns the config of a named random model shape: "tiny" (the golden tiny shapes),
// "clover-tiny" / "clover-tiny-nopreview" (the same as a Clover model with / without preview
// tensors), or
// "medium" (hidden 1024, 8 layers, 32 experts: a few hundred MB, for CPU benchmarks).
Result<ModelConfig> RandomModelConfig(const std::string& name);

}  // namespace clover::model
