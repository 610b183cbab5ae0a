#include "server/openai_request.h"

#include <cmath>
#include <limits>

#include "decode/request.h"

namespace clover::server {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// Optional typed fields of one JSON object; the first error sticks. Null counts as absent
// (OpenAI's clients send explicit nulls for unset fields).
class Fields {
 public:
  Fields(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  const json* Get(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }

  template <typename T>
  void Number(const char* key, double lo, double hi, std::optional<T>* out) {
    const json* v = Get(key);
    if (v == nullptr || error) return;
    if (!v->is_number()) return Fail(key, "must be a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi)
      return Fail(key, "must be between " + Show(lo) + " and " + Show(hi) + ", got " + v->dump());
    *out = static_cast<T>(d);
  }

  template <typename T>
  void Integer(const char* key, int64_t lo, int64_t hi, std::optional<T>* out) {
    const json* v = Get(key);
    if (v == nullptr || error) return;
    if (!v->is_number_integer() && !(v->is_number_float() && IsWhole(v->get<double>())))
      return Fail(key, "must be an integer, got " + v->dump());
    const double d = v->get<double>();
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
      return Fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                           ", got " + v->dump());
    *out = static_cast<T>(v->is_number_unsigned() ? static_cast<T>(v->get<uint64_t>())
                                                   : static_cast<T>(v->get<int64_t>()));
  }

  void Bool(const char* key, bool* out) {
    const json* v = Get(key);
    if (v == nullptr || error) return;
    if (!v->is_boolean()) return Fail(key, "must be a boolean, got " + v->dump());
    *out = v->get<bool>();
  }

  void Fail(const std::string& key, const std::string& what) {
    if (!error) error = InvalidRequest(prefix_ + key, "'" + prefix_ + key + "' " + what);
  }

  std::optional<ApiError> error;

 private:
  static bool IsWhole(double d) { return std::isfinite(d) && d == std::floor(d); }
  static std::string Show(double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  const json& obj_;
  std::string prefix_;
};

std::optional<ApiError> ParseSampling(const json& body, SamplingRequest* out) {
  Fields f(body, "");
  if (const json* m = f.Get("model")) {
    if (!m->is_string()) return InvalidRequest("model", "'model' must be a string");
    out->model = m->get<std::string>();
  }
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  f.Integer("max_tokens", 1, kMaxInt, &out->max_tokens);
  f.Integer("max_completion_tokens", 1, kMaxInt, &out->max_tokens);
  f.Number("temperature", 0.0, 2.0, &out->temperature);
  f.Number("top_p", 0.0, 1.0, &out->top_p);
  f.Integer("top_k", -1, kMaxInt, &out->top_k);
  f.Number("min_p", 0.0, 1.0, &out->min_p);
  f.Integer("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
            &out->seed);
  f.Number("presence_penalty", -2.0, 2.0, &out->penalties.presence);
  f.Number("frequency_penalty", -2.0, 2.0, &out->penalties.frequency);
  f.Number("repetition_penalty", 1e-3, 10.0, &out->penalties.repetition);
  f.Bool("stream", &out->stream);
  f.Bool("ignore_eos", &out->ignore_eos);
  if (f.error) return f.error;
  if (out->top_p && *out->top_p <= 0.0f) return InvalidRequest("top_p", "'top_p' must be > 0");
  if (out->top_k && *out->top_k < 0) out->top_k = 0;  // -1 = off (vLLM's convention)

  std::optional<int64_t> n;
  f.Integer("n", 1, kMaxInt, &n);
  if (f.error) return f.error;
  if (n && *n != 1) return InvalidRequest("n", "'n' must be 1: one choice per request is supported");

  if (const json* stop = f.Get("stop")) {
    if (stop->is_string()) {
      out->stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const json& s : *stop) {
        if (!s.is_string()) return InvalidRequest("stop", "'stop' must be a string or a list of strings");
        out->stop.push_back(s.get<std::string>());
      }
    } else {
      return InvalidRequest("stop", "'stop' must be a string or a list of strings");
    }
    std::erase(out->stop, std::string());
  }

  if (const json* so = f.Get("stream_options")) {
    if (!so->is_object()) return InvalidRequest("stream_options", "'stream_options' must be an object");
    Fields sf(*so, "stream_options.");
    sf.Bool("include_usage", &out->include_usage);
    if (sf.error) return sf.error;
  }

  if (const json* lp = f.Get("logprobs")) {
    if (!lp->is_boolean() && !lp->is_number_integer())
      return InvalidRequest("logprobs", "'logprobs' must be a boolean");
    if ((lp->is_boolean() && lp->get<bool>()) || (lp->is_number_integer() && lp->get<int64_t>() > 0))
      return InvalidRequest("logprobs", "'logprobs' is not supported by this server");
  }

  if (const json* rf = f.Get("response_format")) {
    const json* type = rf->is_object() && rf->contains("type") ? &(*rf)["type"] : nullptr;
    if (type == nullptr || !type->is_string())
      return InvalidRequest("response_format", "'response_format' must be an object with a string 'type'");
    if (*type != "text")
      return InvalidRequest("response_format.type",
                            "'response_format.type' " + type->dump() +
                                " is not supported yet; only \"text\" is");
  }

  if (const json* ext = f.Get("clover")) {
    if (!ext->is_object()) return InvalidRequest("clover", "'clover' must be an object");
    Fields cf(*ext, "clover.");
    if (const json* d = cf.Get("decoder")) {
      Result<decode::DecoderKind> kind =
          d->is_string() ? decode::ParseDecoderKind(d->get<std::string>())
                         : Result<decode::DecoderKind>(InvalidArgument("not a string"));
      if (!kind.ok())
        return InvalidRequest("clover.decoder",
                              "'clover.decoder' must be \"diffusion\", \"frontier\", \"speculative\" or "
                              "\"ar\", got " + d->dump());
      out->decoder = *kind;
    }
    cf.Number("threshold", 0.0, 1.0, &out->threshold);
    cf.Bool("fused_commit", &out->fused_commit);
    cf.Number("frontier_floor", 0.0, 1.0, &out->frontier_floor);
    cf.Integer("frontier_target_iters", 1, 1024, &out->frontier_target_iters);
    cf.Integer("draft_min", 1, decode::kMaxDraftTokens, &out->draft_min);
    cf.Integer("draft_max", 1, decode::kMaxDraftTokens, &out->draft_max);
    cf.Integer("reuse_passes", 0, 1024, &out->reuse_passes);
    cf.Integer("block_size", 1, 1 << 20, &out->block_size);
    if (cf.error) return cf.error;
    if (out->threshold && *out->threshold <= 0.0)
      return InvalidRequest("clover.threshold", "'clover.threshold' must be > 0");
    if (out->block_size && *out->block_size != 8 && *out->block_size != 16 && *out->block_size != 32)
      return InvalidRequest("clover.block_size",
                            "'clover.block_size' must be 8, 16 or 32, got " + std::to_string(*out->block_size));
  }
  return std::nullopt;
}

// Returns the text of a message's content: a string, or an array of text parts joined.
std::optional<ApiError> MessageText(const json& content, const std::string& param, std::string* out) {
  if (content.is_string()) {
    *out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array())
    return InvalidRequest(param, "'" + param + "' must be a string or an array of content parts");
  out->clear();
  for (size_t j = 0; j < content.size(); ++j) {
    const json& part = content[j];
    const std::string pp = param + "[" + std::to_string(j) + "]";
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      return InvalidRequest(pp, "'" + pp + "' must be an object with a string 'type'");
    const std::string type = part["type"].get<std::string>();
    if (type != "text")
      return InvalidRequest(pp + ".type", "'" + pp + ".type' is \"" + type +
                                              "\": only text content parts are supported");
    if (!part.contains("text") || !part["text"].is_string())
      return InvalidRequest(pp + ".text", "'" + pp + ".text' must be a string");
    *out += part["text"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> ParseMessages(const json& body, ojson* out) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return InvalidRequest("messages", "'messages' is required");
  if (!it->is_array() || it->empty())
    return InvalidRequest("messages", "'messages' must be a non-empty array");
  *out = ojson::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string p = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return InvalidRequest(p, "'" + p + "' must be an object");
    if (!m.contains("role") || !m["role"].is_string())
      return InvalidRequest(p + ".role", "'" + p + ".role' must be a string");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant" && role != "tool")
      return InvalidRequest(p + ".role", "'" + p + ".role' must be system, developer, user, "
                                         "assistant or tool, got \"" + role + "\"");
    ojson msg = ojson::parse(m.dump());  // keeps every field the template may read
    msg["role"] = role;
    const bool has_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
    if (!m.contains("content") || m["content"].is_null()) {
      if (role != "assistant" || !has_calls)
        return InvalidRequest(p + ".content", "'" + p + ".content' is required");
      msg["content"] = "";
    } else {
      std::string text;
      if (auto e = MessageText(m["content"], p + ".content", &text)) return e;
      msg["content"] = text;
    }
    if (has_calls) {
      if (!m["tool_calls"].is_array())
        return InvalidRequest(p + ".tool_calls", "'" + p + ".tool_calls' must be an array");
      for (size_t j = 0; j < m["tool_calls"].size(); ++j) {
        const json& call = m["tool_calls"][j];
        const std::string cp = p + ".tool_calls[" + std::to_string(j) + "].function";
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
            !call["function"].contains("name") || !call["function"]["name"].is_string())
          return InvalidRequest(cp, "'" + cp + "' must be an object with a string 'name'");
        // Templates print object arguments with tojson; OpenAI sends them as a JSON string.
        ojson& args = msg["tool_calls"][j]["function"]["arguments"];
        if (args.is_string()) {
          ojson parsed = ojson::parse(args.get<std::string>(), nullptr, false);
          if (!parsed.is_discarded() && parsed.is_object()) args = parsed;
        }
      }
    }
    out->push_back(std::move(msg));
  }
  return std::nullopt;
}

std::optional<ApiError> ParseTools(const json& body, ojson* out) {
  *out = nullptr;
  const auto tools = body.find("tools");
  const bool has_tools = tools != body.end() && !tools->is_null();
  if (has_tools) {
    if (!tools->is_array()) return InvalidRequest("tools", "'tools' must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      const json& t = (*tools)[i];
      const std::string p = "tools[" + std::to_string(i) + "]";
      if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") ||
          !t["function"].is_object() || !t["function"].contains("name") ||
          !t["function"]["name"].is_string())
        return InvalidRequest(p, "'" + p + "' must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
  }
  const auto choice = body.find("tool_choice");
  std::string mode = "auto";
  if (choice != body.end() && !choice->is_null()) {
    if (choice->is_string()) {
      mode = choice->get<std::string>();
    } else if (choice->is_object()) {
      mode = "named";
    } else {
      return InvalidRequest("tool_choice", "'tool_choice' must be a string or an object");
    }
    if (mode != "auto" && mode != "none")
      return InvalidRequest("tool_choice", "'tool_choice' " + choice->dump() +
                                               " is not supported; use \"auto\" or \"none\"");
  }
  if (has_tools && !tools->empty() && mode == "auto") *out = ojson::parse(tools->dump());
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseChatRequest(const json& body, ChatRequest* out) {
  if (!body.is_object()) return InvalidRequest("", "the request body must be a JSON object");
  if (auto e = ParseSampling(body, &out->sampling)) return e;
  if (auto e = ParseMessages(body, &out->messages)) return e;
  if (auto e = ParseTools(body, &out->tools)) return e;
  Fields f(body, "");
  if (const json* kw = f.Get("chat_template_kwargs")) {
    if (!kw->is_object())
      return InvalidRequest("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    out->template_kwargs = ojson::parse(kw->dump());
    Fields kf(*kw, "chat_template_kwargs.");
    bool thinking = false;
    if (kf.Get("enable_thinking")) {
      kf.Bool("enable_thinking", &thinking);
      if (kf.error) return kf.error;
      out->enable_thinking = thinking;
    }
  }
  if (f.Get("enable_thinking")) {
    bool thinking = false;
    f.Bool("enable_thinking", &thinking);
    if (f.error) return f.error;
    out->enable_thinking = thinking;
  }
  if (out->enable_thinking) out->template_kwargs["enable_thinking"] = *out->enable_thinking;
  return std::nullopt;
}

std::optional<ApiError> ParseCompletionRequest(const json& body, CompletionRequest* out) {
  if (!body.is_object()) return InvalidRequest("", "the request body must be a JSON object");
  if (auto e = ParseSampling(body, &out->sampling)) return e;
  Fields f(body, "");
  f.Bool("echo", &out->echo);
  if (f.error) return f.error;
  const json* prompt = f.Get("prompt");
  if (prompt == nullptr) return InvalidRequest("prompt", "'prompt' is required");
  const char* kShape = "'prompt' must be a string, a list of strings, a list of token ids or a list of lists of token ids";
  auto ids = [](const json& a, std::vector<int32_t>* out_ids) {
    for (const json& t : a) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
          t.get<int64_t>() > std::numeric_limits<int32_t>::max())
        return false;
      out_ids->push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    return true;
  };
  if (prompt->is_string()) {
    out->prompts.emplace_back(prompt->get<std::string>());
  } else if (prompt->is_array() && !prompt->empty()) {
    if ((*prompt)[0].is_number()) {
      std::vector<int32_t> one;
      if (!ids(*prompt, &one)) return InvalidRequest("prompt", kShape);
      out->prompts.emplace_back(std::move(one));
    } else {
      for (const json& p : *prompt) {
        if (p.is_string()) {
          out->prompts.emplace_back(p.get<std::string>());
        } else if (p.is_array() && !p.empty()) {
          std::vector<int32_t> one;
          if (!ids(p, &one)) return InvalidRequest("prompt", kShape);
          out->prompts.emplace_back(std::move(one));
        } else {
          return InvalidRequest("prompt", kShape);
        }
      }
    }
  } else {
    return InvalidRequest("prompt", kShape);
  }
  constexpr size_t kMaxPrompts = 64;
  if (out->prompts.size() > kMaxPrompts)
    return InvalidRequest("prompt", "'prompt' holds " + std::to_string(out->prompts.size()) +
                                        " prompts; at most " + std::to_string(kMaxPrompts) + " are accepted");
  return std::nullopt;
}

}  // namespace clover::server
