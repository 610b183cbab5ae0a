// Incremental Qwen tool-call parser.
#include "tokenizer/tool_call_parser.h"

#include <algorithm>

namespace clover::tokenizer {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

size_t PartialTagSuffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n) {
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

std::string_view Trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

ToolCallParser::ToolCallParser(nlohmann::ordered_json tools) : tools_(std::move(tools)) {}

bool ToolCallParser::ParameterIsString(const std::string& function, const std::string& parameter) const {
  if (!tools_.is_array()) return false;
  for (const auto& tool : tools_) {
    const auto& fn = tool.contains("function") ? tool["function"] : tool;
    if (!fn.is_object() || fn.value("name", "") != function) continue;
    const auto params = fn.value("parameters", nlohmann::ordered_json::object());
    if (!params.is_object() || !params.contains("properties")) return false;
    const auto& props = params["properties"];
    if (!props.is_object() || !props.contains(parameter) || !props[parameter].is_object()) return false;
    const auto& type = props[parameter].value("type", nlohmann::ordered_json());
    return type.is_string() && type.get<std::string>() == "string";
  }
  return false;
}

bool ToolCallParser::ParseBlock(std::string_view body, ToolCall* call) const {
  body = Trim(body);
  if (!body.empty() && body.front() == '{') {
    const auto j = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
    call->name = j["name"].get<std::string>();
    const auto args = j.value("arguments", nlohmann::ordered_json::object());
    call->arguments = args.is_string() ? args.get<std::string>() : args.dump();
    return true;
  }
  constexpr std::string_view kFunction = "<function=";
  if (body.substr(0, kFunction.size()) != kFunction) return false;
  const size_t name_end = body.find('>');
  if (name_end == std::string_view::npos) return false;
  call->name = std::string(Trim(body.substr(kFunction.size(), name_end - kFunction.size())));
  std::string_view rest = body.substr(name_end + 1);
  nlohmann::ordered_json args = nlohmann::ordered_json::object();
  constexpr std::string_view kParam = "<parameter=";
  constexpr std::string_view kParamEnd = "</parameter>";
  while (true) {
    rest = Trim(rest);
    if (rest.substr(0, kParam.size()) != kParam) break;
    const size_t key_end = rest.find('>');
    if (key_end == std::string_view::npos) return false;
    const std::string key(Trim(rest.substr(kParam.size(), key_end - kParam.size())));
    rest = rest.substr(key_end + 1);
    const size_t value_end = rest.find(kParamEnd);
    if (value_end == std::string_view::npos) return false;
    std::string_view value = rest.substr(0, value_end);
    // The template writes "<parameter=k>\n" + value + "\n</parameter>".
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    rest = rest.substr(value_end + kParamEnd.size());
    nlohmann::ordered_json typed = std::string(value);
    if (!ParameterIsString(call->name, key)) {
      auto parsed = nlohmann::ordered_json::parse(value, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded()) typed = std::move(parsed);
    }
    args[key] = std::move(typed);
  }
  rest = Trim(rest);
  if (rest != "</function>" && !rest.empty()) return false;
  call->arguments = args.dump();
  return !call->name.empty();
}

ToolCallDelta ToolCallParser::Feed(std::string_view text) {
  buffer_.append(text);
  ToolCallDelta out;
  while (true) {
    if (!inside_) {
      const size_t open = buffer_.find(kOpen);
      if (open == std::string::npos) {
        const size_t keep = PartialTagSuffix(buffer_, kOpen);
        out.content.append(buffer_, 0, buffer_.size() - keep);
        buffer_.erase(0, buffer_.size() - keep);
        return out;
      }
      out.content.append(buffer_, 0, open);
      buffer_.erase(0, open + kOpen.size());
      inside_ = true;
    }
    const size_t close = buffer_.find(kClose);
    if (close == std::string::npos) return out;
    ToolCall call;
    if (ParseBlock(std::string_view(buffer_).substr(0, close), &call)) {
      out.calls.push_back(std::move(call));
    } else {
      out.content.append(kOpen).append(buffer_, 0, close + kClose.size());
    }
    buffer_.erase(0, close + kClose.size());
    inside_ = false;
  }
}

ToolCallDelta ToolCallParser::Finish() {
  ToolCallDelta out;
  if (inside_) {
    ToolCall call;
    if (ParseBlock(buffer_, &call)) {
      out.calls.push_back(std::move(call));
    } else {
      out.content.append(kOpen).append(buffer_);
    }
  } else {
    out.content = buffer_;
  }
  buffer_.clear();
  inside_ = false;
  return out;
}

}  // namespace clover::tokenizer
