// GGUF vocabulary -> TokenizerSpec (the layout llama.cpp's convert_hf_to_gguf.py writes).
#include "tokenizer/gguf_tokenizer.h"

namespace clover::tokenizer {
namespace {

// llama.cpp token types (llama_token_type).
constexpr int64_t kTokenTypeControl = 3;
constexpr int64_t kTokenTypeUserDefined = 4;

Result<std::vector<std::string>> StringArray(const io::GgufFile& gguf, const std::string& key) {
  const io::GgufValue* v = gguf.Find(key);
  if (v == nullptr) return NotFound(gguf.label() + ": metadata '" + key + "' is missing");
  if (v->type != io::GgufType::kArray || v->array_type != io::GgufType::kString) {
    return InvalidArgument(gguf.label() + ": metadata '" + key + "' is " + v->ToString() +
                           "; expected an array of strings");
  }
  std::vector<std::string> out;
  out.reserve(v->array().size());
  for (const io::GgufValue& item : v->array()) out.push_back(std::get<std::string>(item.value));
  return out;
}

}  // namespace

std::string PreTokenizerRegexForGgufPre(const std::string& pre) {
  if (pre == "qwen2") {
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
           "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  }
  if (pre == "qwen35") {
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
           "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  }
  return "";
}

Result<Tokenizer> TokenizerFromGguf(const io::GgufFile& gguf) {
  const std::string& src = gguf.label();
  CLOVER_ASSIGN_OR_RETURN(std::string model, gguf.GetString("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return Unimplemented(src + ": tokenizer.ggml.model is \"" + model +
                         "\"; only \"gpt2\" (byte-level BPE) is supported");
  }
  CLOVER_ASSIGN_OR_RETURN(std::string pre, gguf.GetString("tokenizer.ggml.pre"));
  const std::string regex = PreTokenizerRegexForGgufPre(pre);
  if (regex.empty()) {
    return Unimplemented(src + ": tokenizer.ggml.pre is \"" + pre +
                         "\"; supported: qwen2, qwen35");
  }
  TokenizerSpec spec;
  spec.source = src;
  CLOVER_ASSIGN_OR_RETURN(spec.tokens, StringArray(gguf, "tokenizer.ggml.tokens"));
  CLOVER_ASSIGN_OR_RETURN(std::vector<std::string> merges, StringArray(gguf, "tokenizer.ggml.merges"));
  for (size_t i = 0; i < merges.size(); ++i) {
    const size_t space = merges[i].find(' ', 1);
    if (space == std::string::npos) {
      return DataLoss(src + ": tokenizer.ggml.merges[" + std::to_string(i) + "] \"" + merges[i] +
                      "\" has no space");
    }
    spec.merges.emplace_back(merges[i].substr(0, space), merges[i].substr(space + 1));
  }
  if (gguf.Find("tokenizer.ggml.token_type") != nullptr) {
    CLOVER_ASSIGN_OR_RETURN(std::vector<int64_t> types, gguf.GetIntArray("tokenizer.ggml.token_type"));
    if (types.size() != spec.tokens.size()) {
      return DataLoss(src + ": tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                      " entries; expected " + std::to_string(spec.tokens.size()) + " (one per token)");
    }
    for (size_t id = 0; id < types.size(); ++id) {
      if (types[id] != kTokenTypeControl && types[id] != kTokenTypeUserDefined) continue;
      AddedToken t;
      t.id = static_cast<int32_t>(id);
      t.content = spec.tokens[id];
      t.special = types[id] == kTokenTypeControl;
      spec.added_tokens.push_back(std::move(t));
    }
  }
  // Qwen's tokenizer.json normalizes with NFC before the split; GGUF does not record it.
  spec.nfc = true;
  auto splitter = RegexSplitter::Create(regex);
  if (!splitter.ok()) return splitter.status();
  PreTokenizerStep split;
  split.kind = PreTokenizerStep::Kind::kSplit;
  split.regex = std::make_shared<RegexSplitter>(std::move(splitter).value());
  spec.pre_tokenizer.push_back(std::move(split));
  return Tokenizer::FromSpec(std::move(spec));
}

Result<ChatTemplate> ChatTemplateFromGguf(const io::GgufFile& gguf) {
  CLOVER_ASSIGN_OR_RETURN(std::string text, gguf.GetString("tokenizer.chat_template"));
  return ChatTemplate::FromSource(text, gguf.label() + ":tokenizer.chat_template");
}

}  // namespace clover::tokenizer
