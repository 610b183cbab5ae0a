// LoadModel: a model path (GGUF file, .safetensors file, index or directory) -> canonical ModelWeights.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/gguf.h"
#include "model/config.h"
#include "model/tensor_map.h"
#include "model/weights.h"

namespace clover::model {

enum class ModelFormat { kGguf, kSafetensors };

// What a model path resolves to on disk.
struct ModelFiles {
  ModelFormat format = ModelFormat::kGguf;
  std::vector<std::string> data_files;  // the .gguf, or every safetensors shard
  std::string index_path;               // model.safetensors.index.json when sharded
  std::string config_path;              // config.json (safetensors only)
  std::string generation_config_path;   // generation_config.json beside it, when present
};

// Resolves `path`: a .gguf file; a .safetensors file or model.safetensors.index.json with
// config.json beside it; or a directory holding config.json + safetensors (single or sharded) or
// exactly one .gguf.
Result<ModelFiles> ResolveModelPath(const std::string& path);

// A parsed model whose tensors are not yet mapped to the canonical layout.
struct OpenedModel {
  ModelFiles files;
  ModelConfig config;          // preview_gdn resolved
  SourceTensors tensors;       // every tensor of every file, by name
  NameScheme scheme = NameScheme::kGguf;
  std::shared_ptr<const io::GgufFile> gguf;             // GGUF metadata (GGUF only)
  std::vector<std::shared_ptr<const void>> holders;    // keeps the mappings alive
};

// Maps and validates the files, reads the config, and resolves diffusion.preview_gdn.
Result<OpenedModel> OpenModel(const std::string& path);

// Maps `opened` to ModelWeights (views stay valid through `storage`, which retains the files).
Result<ModelWeights> BuildWeights(const OpenedModel& opened, MapReport* report = nullptr);

// OpenModel + BuildWeights.
Result<ModelWeights> LoadModel(const std::string& path);

// The config alone (files are parsed to resolve preview_gdn, tensors are not mapped).
Result<ModelConfig> LoadModelConfig(const std::string& path);

}  // namespace clover::model
