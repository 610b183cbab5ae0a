// Chat template loading and rendering.
#include "tokenizer/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace clover::tokenizer {
namespace {

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<ChatTemplate> ChatTemplate::FromSource(std::string_view source, std::string name) {
  CLOVER_ASSIGN_OR_RETURN(jinja::Template t, jinja::Template::Parse(source, std::move(name)));
  ChatTemplate c;
  c.source_ = std::string(source);
  c.template_ = std::move(t);
  return c;
}

Result<ChatTemplate> ChatTemplate::FromTokenizerConfig(const nlohmann::json& config,
                                                       const std::string& source,
                                                       const std::string& variant) {
  if (!config.is_object() || !config.contains("chat_template")) {
    return NotFound(source + ": no field chat_template");
  }
  const nlohmann::json& ct = config.at("chat_template");
  if (ct.is_string()) return FromSource(ct.get<std::string>(), source);
  if (ct.is_array()) {
    std::string names;
    for (const auto& entry : ct) {
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
          !entry.at("name").is_string() || !entry.at("template").is_string()) {
        return DataLoss(source + ": chat_template list entries must be {\"name\": str, \"template\": str}");
      }
      if (entry.at("name") == variant) {
        return FromSource(entry.at("template").get<std::string>(), source + "#" + variant);
      }
      names += (names.empty() ? "" : ", ") + entry.at("name").get<std::string>();
    }
    return NotFound(source + ": chat_template has no template named \"" + variant +
                    "\" (found: " + names + ")");
  }
  return DataLoss(source + ": chat_template is " + std::string(ct.type_name()) +
                  "; expected a string or a list of named templates");
}

Result<ChatTemplate> ChatTemplate::FromModelDir(const std::string& dir, const std::string& variant) {
  const std::string jinja_path = dir + "/chat_template.jinja";
  if (std::filesystem::exists(jinja_path)) {
    CLOVER_ASSIGN_OR_RETURN(std::string text, ReadTextFile(jinja_path));
    return FromSource(text, jinja_path);
  }
  const std::string config_path = dir + "/tokenizer_config.json";
  CLOVER_ASSIGN_OR_RETURN(std::string text, ReadTextFile(config_path));
  nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return DataLoss(config_path + ": not valid JSON");
  return FromTokenizerConfig(config, config_path, variant);
}

Result<std::string> ChatTemplate::Render(const nlohmann::ordered_json& messages,
                                         const nlohmann::ordered_json& tools,
                                         bool add_generation_prompt,
                                         const nlohmann::ordered_json& kwargs) const {
  if (!messages.is_array()) {
    return InvalidArgument("chat template " + name() + ": messages must be a JSON array, found " +
                           std::string(messages.type_name()));
  }
  if (!kwargs.is_null() && !kwargs.is_object()) {
    return InvalidArgument("chat template " + name() + ": template kwargs must be a JSON object");
  }
  jinja::ValueDict globals = {
      {"messages", jinja::Value::FromJson(messages)},
      {"tools", jinja::Value::FromJson(tools)},
      {"documents", jinja::Value::None()},
      {"add_generation_prompt", jinja::Value::Bool(add_generation_prompt)},
  };
  if (kwargs.is_object()) {
    for (const auto& [k, v] : kwargs.items()) {
      bool replaced = false;
      for (auto& [gk, gv] : globals) {
        if (gk == k) {
          gv = jinja::Value::FromJson(v);
          replaced = true;
        }
      }
      if (!replaced) globals.emplace_back(k, jinja::Value::FromJson(v));
    }
  }
  return template_.Render(globals);
}

}  // namespace clover::tokenizer
