// HF tokenizer files -> GGUF `tokenizer.*` metadata (gguf-py's SpecialVocab and
// convert_hf_to_gguf.py's get_vocab_base layout), checked to be what TokenizerFromGguf rebuilds.
#include "tokenizer/gguf_tokenizer_writer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "tokenizer/gguf_tokenizer.h"

namespace clover::tokenizer {
namespace {

using io::GgufType;
using io::GgufValue;
using Json = nlohmann::json;

// llama.cpp token types (llama_token_type).
constexpr int32_t kTokenTypeNormal = 1;
constexpr int32_t kTokenTypeControl = 3;
constexpr int32_t kTokenTypeUserDefined = 4;
constexpr int32_t kTokenTypeUnused = 5;

// The special tokens written: tokenizer_config.json's `<hf>_token` / config.json's
// `<hf>_token_id` -> `tokenizer.ggml.<gguf>_token_id`.
struct SpecialToken {
  const char* hf;
  const char* gguf;
};
constexpr SpecialToken kSpecialTokens[] = {
    {"bos", "bos"}, {"eos", "eos"}, {"pad", "padding"}, {"mask", "mask"}};

// Where a JSON exception happened, for its message.
struct Where {
  std::string file;
  std::string field;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Returns the JSON object in `path`, or an empty object when the file does not exist.
Result<Json> ReadOptionalJson(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Json::object();
  Json j = Json::parse(ReadText(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss(path + ": not a JSON object");
  return j;
}

// Returns the GGUF pre-tokenizer name of tokenizer.json `root`, after checking that the rest of
// its pipeline is the one TokenizerFromGguf assumes: NFC, Split(regex, Isolated) then ByteLevel
// without its own regex, byte-level BPE.
Result<std::string> GgufPreName(const Json& root, Where& at) {
  const std::string& src = at.file;
  at.field = "model";
  const Json& model = root.at("model");
  if (model.value("type", "BPE") != "BPE" || model.value("byte_fallback", false))
    return Unimplemented(src + ": model is not byte-level BPE without byte_fallback");
  at.field = "decoder";
  if (root.at("decoder").at("type") != "ByteLevel")
    return Unimplemented(src + ": decoder type is not ByteLevel");
  at.field = "normalizer";
  const Json& normalizer = root.at("normalizer");
  if (!normalizer.is_object() || normalizer.value("type", "") != "NFC") {
    return Unimplemented(src + ": normalizer " + normalizer.dump() +
                         "; a GGUF tokenizer normalizes with NFC only (Qwen's normalizer)");
  }
  at.field = "pre_tokenizer";
  const Json& pre = root.at("pre_tokenizer");
  if (pre.value("type", "") != "Sequence" || pre.at("pretokenizers").size() != 2) {
    return Unimplemented(src + ": pre_tokenizer is not Sequence[Split, ByteLevel] (Qwen's layout)");
  }
  const Json& split = pre.at("pretokenizers")[0];
  const Json& byte_level = pre.at("pretokenizers")[1];
  if (split.value("type", "") != "Split" || split.value("behavior", "") != "Isolated" ||
      split.value("invert", false) || !split.at("pattern").contains("Regex")) {
    return Unimplemented(src + ": pre_tokenizer.pretokenizers[0] is not Split{Regex, Isolated}");
  }
  if (byte_level.value("type", "") != "ByteLevel" || byte_level.value("add_prefix_space", false) ||
      byte_level.value("use_regex", true)) {
    return Unimplemented(src +
                         ": pre_tokenizer.pretokenizers[1] is not ByteLevel without "
                         "add_prefix_space and use_regex");
  }
  at.field = "pre_tokenizer.pretokenizers[0].pattern.Regex";
  const std::string regex = split.at("pattern").at("Regex").get<std::string>();
  std::string names;
  for (const char* name : kGgufPreNames) {
    if (PreTokenizerRegexForGgufPre(name) == regex) return std::string(name);
    names += names.empty() ? name : std::string(", ") + name;
  }
  return Unimplemented(src + ": pre_tokenizer.pretokenizers[0].pattern.Regex \"" + regex +
                       "\" is no GGUF pre-tokenizer this engine knows (supported: " + names + ")");
}

// The vocabulary by id, as llama.cpp lays it out.
struct Vocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  // Added-token content -> id, first occurrence (how SpecialVocab resolves `*_token`).
  std::vector<std::pair<std::string, int32_t>> added;
};

// Returns `id` as a vocabulary id below `size` (0: no bound yet), naming `what` otherwise.
Result<int32_t> CheckedId(const Json& id, int64_t size, const std::string& what) {
  if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (int64_t{1} << 30))
    return DataLoss(what + " has id " + id.dump() + "; expected a non-negative integer");
  if (size > 0 && id.get<int64_t>() >= size) {
    return OutOfRange(what + " has id " + id.dump() + ", beyond the model's vocabulary of " +
                      std::to_string(size) + " (config.json vocab_size)");
  }
  return id.get<int32_t>();
}

Result<Vocab> ReadVocab(const Json& root, int64_t n_vocab, Where& at) {
  const std::string& src = at.file;
  at.field = "model.vocab";
  const Json& vocab = root.at("model").at("vocab");
  if (!vocab.is_object() || vocab.empty())
    return DataLoss(src + ": model.vocab is not a non-empty object");
  at.field = "added_tokens";
  const Json& added = root.value("added_tokens", Json::array());
  int64_t size = n_vocab;
  std::vector<std::pair<int32_t, const std::string*>> normal;
  for (const auto& [text, id] : vocab.items()) {
    CLOVER_ASSIGN_OR_RETURN(int32_t i,
                            CheckedId(id, n_vocab, src + ": model.vocab \"" + text + "\""));
    normal.emplace_back(i, &text);
  }
  struct Added {
    int32_t id;
    std::string content;
    bool special;
  };
  std::vector<Added> added_tokens;
  for (size_t k = 0; k < added.size(); ++k) {
    const Json& a = added[k];
    const std::string what = src + ": added_tokens[" + std::to_string(k) + "]";
    at.field = "added_tokens[" + std::to_string(k) + "]";
    CLOVER_ASSIGN_OR_RETURN(int32_t i, CheckedId(a.at("id"), n_vocab, what));
    std::string content = a.at("content").get<std::string>();
    if (a.value("lstrip", false) || a.value("rstrip", false) || a.value("single_word", false)) {
      return Unimplemented(
          what + " \"" + content +
          "\" sets lstrip/rstrip/single_word, which GGUF token types cannot carry");
    }
    added_tokens.push_back({i, std::move(content), a.value("special", false)});
  }
  if (n_vocab == 0) {
    for (const auto& [i, text] : normal) size = std::max<int64_t>(size, i + 1);
    for (const Added& a : added_tokens) size = std::max<int64_t>(size, a.id + 1);
  }
  Vocab out;
  out.tokens.resize(static_cast<size_t>(size));
  out.types.assign(static_cast<size_t>(size), kTokenTypeUnused);
  for (const auto& [i, text] : normal) {
    if (out.types[i] != kTokenTypeUnused) {
      return DataLoss(src + ": model.vocab maps both \"" + out.tokens[i] + "\" and \"" + *text +
                      "\" to id " + std::to_string(i));
    }
    out.tokens[i] = *text;
    out.types[i] = kTokenTypeNormal;
  }
  // An added token may repeat a vocabulary entry's id: HF then uses the added token.
  for (Added& a : added_tokens) {
    out.types[a.id] = a.special ? kTokenTypeControl : kTokenTypeUserDefined;
    out.added.emplace_back(a.content, a.id);
    out.tokens[a.id] = std::move(a.content);
  }
  for (size_t i = 0; i < out.tokens.size(); ++i)
    if (out.types[i] == kTokenTypeUnused) out.tokens[i] = "[PAD" + std::to_string(i) + "]";
  return out;
}

// Returns tokenizer.json's merges as "a b" strings (both its string and its pair form).
Result<std::vector<GgufValue>> ReadMerges(const Json& root, Where& at) {
  at.field = "model.merges";
  const Json& merges = root.at("model").at("merges");
  std::vector<GgufValue> out;
  out.reserve(merges.size());
  for (size_t k = 0; k < merges.size(); ++k) {
    const Json& m = merges[k];
    std::string merge;
    if (m.is_string()) {
      merge = m.get<std::string>();
    } else if (m.is_array() && m.size() == 2) {
      const std::string a = m[0].get<std::string>(), b = m[1].get<std::string>();
      // Byte-level tokens spell a space as U+0120; a raw one would make "a b" ambiguous.
      if (a.find(' ') != std::string::npos || b.find(' ') != std::string::npos) {
        return DataLoss(at.file + ": model.merges[" + std::to_string(k) +
                        "] holds a space inside a token");
      }
      merge = a + " " + b;
    }
    if (merge.find(' ', 1) == std::string::npos) {
      return DataLoss(at.file + ": model.merges[" + std::to_string(k) + "] " + m.dump() +
                      " is not \"a b\" or [\"a\", \"b\"]");
    }
    out.push_back(GgufValue::String(std::move(merge)));
  }
  return out;
}

// Returns the id of special token kind `hf`: tokenizer_config.json's `<hf>_token` (a string or
// {"content": ...}) looked up among the added tokens, else config.json's `<hf>_token_id` (top
// level or text_config), as gguf-py's SpecialVocab resolves it.
Result<std::optional<int32_t>> SpecialTokenId(const char* hf, const Json& tokenizer_config,
                                              const Json& config, const Vocab& vocab,
                                              const std::string& dir) {
  const Json entry = tokenizer_config.value(std::string(hf) + "_token", Json());
  const Json content = entry.is_object() ? entry.value("content", Json()) : entry;
  if (content.is_string()) {
    for (const auto& [text, id] : vocab.added)
      if (text == content.get<std::string>()) return std::optional<int32_t>(id);
  }
  const std::string key = std::string(hf) + "_token_id";
  Json id = config.value(key, Json());
  if (id.is_null() && config.contains("text_config")) id = config["text_config"].value(key, Json());
  if (!id.is_number_integer()) return std::optional<int32_t>();
  CLOVER_ASSIGN_OR_RETURN(int32_t i, CheckedId(id, static_cast<int64_t>(vocab.tokens.size()),
                                               dir + "/config.json: " + key));
  return std::optional<int32_t>(i);
}

// Adds the chat template: chat_template.jinja (which transformers prefers), else
// tokenizer_config.json's `chat_template` string, or its {name, template} list with "default"
// as `tokenizer.chat_template` and the others as `tokenizer.chat_template.<name>`.
void AddChatTemplates(const std::string& dir, const Json& tokenizer_config, GgufKvList& kv) {
  const std::string jinja = dir + "/chat_template.jinja";
  std::error_code ec;
  if (std::filesystem::exists(jinja, ec)) {
    kv.emplace_back("tokenizer.chat_template", GgufValue::String(ReadText(jinja)));
    return;
  }
  const Json tpl = tokenizer_config.value("chat_template", Json());
  if (tpl.is_string()) {
    kv.emplace_back("tokenizer.chat_template", GgufValue::String(tpl.get<std::string>()));
    return;
  }
  if (!tpl.is_array()) return;
  for (const Json& t : tpl) {
    const std::string name = t.at("name").get<std::string>();
    kv.emplace_back(
        name == "default" ? "tokenizer.chat_template" : "tokenizer.chat_template." + name,
        GgufValue::String(t.at("template").get<std::string>()));
  }
}

}  // namespace

Result<GgufKvList> GgufTokenizerKvFromHfDir(const std::string& dir, int64_t n_vocab) {
  const std::string path = dir + "/tokenizer.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  Where at{path, ""};
  try {
    const Json root = Json::parse(ReadText(path), nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded() || !root.is_object()) return DataLoss(path + ": not a JSON object");
    CLOVER_ASSIGN_OR_RETURN(std::string pre, GgufPreName(root, at));
    CLOVER_ASSIGN_OR_RETURN(Vocab vocab, ReadVocab(root, n_vocab, at));
    CLOVER_ASSIGN_OR_RETURN(std::vector<GgufValue> merges, ReadMerges(root, at));

    at = {dir + "/tokenizer_config.json", ""};
    CLOVER_ASSIGN_OR_RETURN(Json tokenizer_config, ReadOptionalJson(at.file));
    CLOVER_ASSIGN_OR_RETURN(Json config, ReadOptionalJson(dir + "/config.json"));

    GgufKvList kv = {{"tokenizer.ggml.model", GgufValue::String("gpt2")},
                     {"tokenizer.ggml.pre", GgufValue::String(pre)}};
    std::vector<GgufValue> tokens, types;
    tokens.reserve(vocab.tokens.size());
    types.reserve(vocab.types.size());
    for (std::string& t : vocab.tokens) tokens.push_back(GgufValue::String(std::move(t)));
    for (int32_t t : vocab.types) types.push_back(GgufValue::I32(t));
    kv.emplace_back("tokenizer.ggml.tokens",
                    GgufValue::Array(GgufType::kString, std::move(tokens)));
    kv.emplace_back("tokenizer.ggml.token_type",
                    GgufValue::Array(GgufType::kI32, std::move(types)));
    kv.emplace_back("tokenizer.ggml.merges",
                    GgufValue::Array(GgufType::kString, std::move(merges)));
    for (const SpecialToken& s : kSpecialTokens) {
      at.field = std::string(s.hf) + "_token";
      CLOVER_ASSIGN_OR_RETURN(std::optional<int32_t> id,
                              SpecialTokenId(s.hf, tokenizer_config, config, vocab, dir));
      if (id) {
        kv.emplace_back("tokenizer.ggml." + std::string(s.gguf) + "_token_id",
                        GgufValue::U32(static_cast<uint32_t>(*id)));
      }
    }
    // Qwen adds no BOS; a config that asks for one is passed on for llama.cpp.
    at.field = "add_bos_token";
    const Json add_bos = tokenizer_config.value("add_bos_token", Json());
    kv.emplace_back("tokenizer.ggml.add_bos_token",
                    GgufValue::Bool(add_bos.is_boolean() && add_bos.get<bool>()));
    at.field = "chat_template";
    AddChatTemplates(dir, tokenizer_config, kv);
    return kv;
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(at.file + ": field " + at.field + ": " + e.what());
  }
}

GgufKvList GgufTokenizerKvOf(const io::GgufFile& gguf) {
  GgufKvList kv;
  for (const auto& [key, value] : gguf.metadata())
    if (key.rfind("tokenizer.", 0) == 0) kv.emplace_back(key, value);
  return kv;
}

}  // namespace clover::tokenizer
