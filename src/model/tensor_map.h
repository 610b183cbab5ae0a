// The one tensor table: every parameter of the architecture -> its canonical ModelWeights slot,
// with expected shapes from the config, HF and GGUF names, and the value transforms.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "model/weights.h"

namespace clover::model {

enum class NameScheme { kHf, kGguf };

// A tensor found in a model file; `file` names it in errors.
struct SourceTensor {
  TensorView view;
  std::string file;
};
using SourceTensors = std::map<std::string, SourceTensor>;

struct MapReport {
  int mapped = 0;                     // source tensors consumed
  std::vector<std::string> ignored;   // MTP (`mtp.*`, `blk.{n_layers+}.*`) and vision (`model.visual.*`)
};

// Fills the tensor slots of `weights` (whose `config` must be set) from `tensors` named per `scheme`.
// Big matrices that need no transform stay zero-copy views; transformed tensors are written to
// `weights->storage` (norms, A, dt, conv, mix always F32). Sets `config.has_preview_tensors`.
// Strict: a missing tensor (kNotFound), a wrong shape (kInvalidArgument) or an unexpected tensor
// (kInvalidArgument) is an error naming the tensor, its file and both shapes.
Result<MapReport> MapTensors(const SourceTensors& tensors, NameScheme scheme, ModelWeights* weights);

// Calls `fn` for every non-empty canonical tensor of `weights` with a stable canonical name
// (GGUF-style, per-expert views as "blk.{i}.ffn_gate_exps.{e}").
void ForEachCanonicalTensor(const ModelWeights& weights,
                            const std::function<void(const std::string& name, const TensorView& view)>& fn);

// Returns true when `name` is an MTP or vision tensor that MapTensors skips for `config`.
bool IsIgnoredTensor(const std::string& name, NameScheme scheme, const ModelConfig& config);

}  // namespace clover::model
