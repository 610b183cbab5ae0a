// ModelConfig names and derived counts.
#include "model/config.h"

namespace clover::model {

const char* ModelFamilyName(ModelFamily family) {
  return family == ModelFamily::kCloverMoe ? "clover_moe" : "qwen35moe";
}

const char* LayerKindName(LayerKind kind) {
  return kind == LayerKind::kFullAttention ? "full_attention" : "linear_attention";
}

const char* PreviewGdnName(PreviewGdn mode) {
  return mode == PreviewGdn::kBidirectional ? "bidirectional" : "causal";
}

int ModelConfig::n_attention_layers() const {
  int n = 0;
  for (LayerKind k : layer_kinds) n += k == LayerKind::kFullAttention;
  return n;
}

int ModelConfig::n_gdn_layers() const {
  return static_cast<int>(layer_kinds.size()) - n_attention_layers();
}

}  // namespace clover::model
