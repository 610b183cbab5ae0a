// libFuzzer target: Jinja parser and renderer on arbitrary template text. Errors are fine;
// crashes, hangs, sanitizer reports and kInternal are bugs.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace clover::tokenizer::jinja;
  const std::string source(reinterpret_cast<const char*>(data), size);
  auto t = Template::Parse(source, "fuzz");
  if (!t.ok()) {
    if (t.status().code() == clover::StatusCode::kInternal) std::abort();
    return 0;
  }
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi <b>"},
                 {"role": "assistant", "content": "<think>r</think>ok", "tool_calls": [
                   {"function": {"name": "f", "arguments": {"a": 1, "b": [1.5, null, true]}}}]},
                 {"role": "tool", "content": "42"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": true, "enable_thinking": false, "n": 3, "s": "text"})");
  RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_steps = 200000;
  limits.max_sequence = 1 << 14;
  auto out = t->RenderJson(context, limits);
  if (!out.ok() && out.status().code() == clover::StatusCode::kInternal) std::abort();
  return 0;
}
