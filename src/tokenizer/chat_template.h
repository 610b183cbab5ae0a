// Chat templates: load a model's Jinja template (tokenizer_config.json, chat_template.jinja or
// GGUF metadata) and render conversations the way transformers' apply_chat_template does.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "tokenizer/jinja/template.h"

namespace clover::tokenizer {

class ChatTemplate {
 public:
  // Returns a template from Jinja `source`; `name` labels errors.
  static Result<ChatTemplate> FromSource(std::string_view source, std::string name);
  // Returns the template of tokenizer_config.json contents `config`: `chat_template` as a string,
  // or as a list of {"name", "template"} from which `variant` is taken.
  static Result<ChatTemplate> FromTokenizerConfig(const nlohmann::json& config,
                                                  const std::string& source,
                                                  const std::string& variant = "default");
  // Returns the template of a model directory: chat_template.jinja if present (it takes
  // precedence, as in transformers), else tokenizer_config.json.
  static Result<ChatTemplate> FromModelDir(const std::string& dir,
                                           const std::string& variant = "default");

  // Returns the prompt for `messages` (JSON array) and `tools` (array or null). `kwargs` (a JSON
  // object or null) adds variables such as `enable_thinking`; `documents` is None, as in HF.
  Result<std::string> Render(const nlohmann::ordered_json& messages,
                             const nlohmann::ordered_json& tools, bool add_generation_prompt,
                             const nlohmann::ordered_json& kwargs = nullptr) const;

  const std::string& name() const { return template_.name(); }
  const std::string& source_text() const { return source_; }

 private:
  std::string source_;
  jinja::Template template_;
};

}  // namespace clover::tokenizer
