// Builds a ModelConfig from HF config.json (+ generation_config.json) or from GGUF metadata.
#pragma once

#include <string>

#include "core/status.h"
#include "io/gguf.h"
#include "model/config.h"

namespace clover::model {

// Reads an HF `config.json` of model_type `qwen3_5_moe` (text fields under `text_config`),
// `qwen3_5_moe_text` or `clover_moe`. Missing required fields are kNotFound and wrong types
// kInvalidArgument, both naming the field and the file.
Result<ModelConfig> LoadHfConfig(const std::string& config_json_path);

// Applies `eos_token_id` (int or list), `bos_token_id`, `pad_token_id` of a generation_config.json.
Status ApplyGenerationConfig(const std::string& generation_config_path, ModelConfig* config);

// Reads the hyper-parameters of a `qwen35moe` or `clover_moe` GGUF. `output.weight` being absent
// means tied embeddings.
Result<ModelConfig> ConfigFromGguf(const io::GgufFile& gguf);

// Checks the derived invariants every consumer relies on (positive sizes, hv % hk == 0, ...).
Status ValidateConfig(const ModelConfig& config, const std::string& source);

}  // namespace clover::model
