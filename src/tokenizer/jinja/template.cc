// Template = lexer + parser + evaluator.
#include "tokenizer/jinja/template.h"

#include "tokenizer/jinja/lexer.h"
#include "tokenizer/jinja/parser.h"

namespace clover::tokenizer::jinja {

Result<Template> Template::Parse(std::string_view source, std::string name) {
  CLOVER_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(source, name));
  CLOVER_ASSIGN_OR_RETURN(std::vector<NodePtr> body, jinja::Parse(tokens, name));
  Template t;
  t.name_ = std::move(name);
  t.body_ = std::make_shared<const std::vector<NodePtr>>(std::move(body));
  return t;
}

Result<std::string> Template::Render(const ValueDict& globals, const RenderLimits& limits) const {
  return Evaluate(*body_, globals, name_, limits);
}

Result<std::string> Template::RenderJson(const nlohmann::ordered_json& context,
                                         const RenderLimits& limits) const {
  if (!context.is_object()) {
    return InvalidArgument("template " + name_ + ": render context must be a JSON object, found " +
                           std::string(context.type_name()));
  }
  Value v = Value::FromJson(context);
  return Render(v.dict(), limits);
}

}  // namespace clover::tokenizer::jinja
