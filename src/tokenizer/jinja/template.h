// A parsed Jinja template, rendered with Python Jinja2 semantics as transformers configures it
// (trim_blocks, lstrip_blocks, loopcontrols, tojson with ensure_ascii=False).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/evaluator.h"
#include "tokenizer/jinja/value.h"

namespace clover::tokenizer::jinja {

class Template {
 public:
  // Returns the parsed template; `name` labels errors ("template NAME:LINE:COL: ...").
  static Result<Template> Parse(std::string_view source, std::string name);

  // Returns the output for variables `globals`.
  Result<std::string> Render(const ValueDict& globals, const RenderLimits& limits = {}) const;
  // Returns the output for the keys of JSON object `context` as variables.
  Result<std::string> RenderJson(const nlohmann::ordered_json& context,
                                 const RenderLimits& limits = {}) const;

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::shared_ptr<const std::vector<NodePtr>> body_;
};

}  // namespace clover::tokenizer::jinja
