// The model a server serves, with its tokenizer, template and the defaults requests fall back to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "decode/decoder.h"
#include "model/model.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace clover::server {

// Everything the handlers need about the served model. The model must outlive the server.
struct ServedModel {
  const model::Model* model = nullptr;
  tokenizer::Tokenizer tokenizer;
  tokenizer::ChatTemplate chat_template;
  decode::DecodeModelInfo info;
  std::string alias;     // the `model` id clients use
  int64_t context = 0;   // prompt + completion limit, tokens
  nlohmann::ordered_json card;  // /v1/models "meta": family, params, quant, ...
  decode::SamplingParams sampling_defaults;  // generation_config.json's, else OpenAI's
};

// Returns `model` (whose weights are `weights`) ready to serve: the tokenizer and chat template
// of `path`, the model card, generation_config.json's sampling defaults. `alias` "" = the folder
// or file name of `path`; `ctx` 0 = the model's max_position_embeddings (InvalidArgument above it).
Result<std::unique_ptr<ServedModel>> LoadServedModel(const model::Model& model,
                                                     const model::ModelWeights& weights,
                                                     const std::string& path, const std::string& alias,
                                                     int64_t ctx);

}  // namespace clover::server
