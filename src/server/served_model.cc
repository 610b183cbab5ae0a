#include "server/served_model.h"

#include "core/dtype.h"
#include "decode/request.h"
#include "model/tensor_map.h"
#include "tokenizer/source_loader.h"

namespace clover::server {

namespace {

std::string ModelFamilyName(const model::ModelConfig& c) {
  return c.family == model::ModelFamily::kCloverMoe ? "clover_moe" : "qwen35moe";
}

}  // namespace

Result<std::unique_ptr<ServedModel>> LoadServedModel(const model::Model& model, const model::ModelWeights& weights,
                                                     const std::string& path, const std::string& alias_in,
                                                     int64_t ctx) {
  const model::ModelConfig& c = model.config();
  if (ctx < 0 || ctx > c.max_context)
    return InvalidArgument("ctx: " + std::to_string(ctx) + ", expected 1.." +
                           std::to_string(c.max_context) + " (the model's max_position_embeddings)");
  CLOVER_ASSIGN_OR_RETURN(tokenizer::Tokenizer tok, tokenizer::LoadTokenizer(path));
  CLOVER_ASSIGN_OR_RETURN(tokenizer::ChatTemplate tmpl, tokenizer::LoadChatTemplate(path));
  const int32_t think_end = tok.TokenToId("</think>");
  decode::DecodeModelInfo info = decode::DecodeModelInfoFromConfig(
      c, tok.vocab_size(), think_end >= 0 ? std::optional<int32_t>(think_end) : std::nullopt);

  int64_t params = 0;
  model::ForEachCanonicalTensor(weights,
                                [&](const std::string&, const TensorView& v) { params += v.numel(); });
  std::string quant = "F32";
  for (const model::LayerWeights& l : weights.layers)
    if (!l.moe.expert_gate.empty()) {
      quant = DTypeName(l.moe.expert_gate[0].dtype);
      break;
    }
  decode::SamplingParams defaults;
  defaults.temperature = c.generation.do_sample ? c.generation.temperature : 0.0f;
  defaults.top_p = c.generation.top_p;
  defaults.top_k = c.generation.top_k;

  std::string alias = alias_in;
  if (alias.empty()) {
    std::string trimmed = path;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    alias = trimmed.substr(trimmed.find_last_of('/') + 1);
  }
  const bool diffusion = info.mask_token_id.has_value();
  nlohmann::ordered_json card = {
      {"family", ModelFamilyName(c)},
      {"params", params},
      {"quant", quant},
      {"context", ctx > 0 ? ctx : c.max_context},
      {"decoder", diffusion ? "diffusion" : "ar"},
      {"block_size", c.diffusion.block_size},
      {"layers", c.n_layers},
      {"experts", c.n_experts},
      {"experts_per_token", c.top_k},
      {"vocab", c.vocab_size},
  };
  return std::make_unique<ServedModel>(ServedModel{
      .model = &model,
      .tokenizer = std::move(tok),
      .chat_template = std::move(tmpl),
      .info = std::move(info),
      .alias = alias,
      .context = ctx > 0 ? ctx : c.max_context,
      .card = std::move(card),
      .sampling_defaults = defaults,
  });
}

}  // namespace clover::server
