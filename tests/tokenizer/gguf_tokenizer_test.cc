// A GGUF carrying Qwen3's vocabulary the way llama.cpp converts it must tokenize like
// tokenizer.json, and carry its chat template.
#include <gtest/gtest.h>

#include "golden_util.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "tokenizer/gguf_tokenizer.h"

namespace clover::tokenizer {
namespace {

using io::GgufType;
using io::GgufValue;

// Returns the metadata llama.cpp's convert_hf_to_gguf.py writes for Qwen3 (minus padding rows).
std::vector<uint8_t> Qwen3Gguf(const std::string& pre) {
  const auto doc = nlohmann::json::parse(testing::ReadText(testing::GoldenDir() + "/qwen3/tokenizer.json"));
  std::vector<std::string> tokens(151669);
  std::vector<int64_t> types(tokens.size(), 1);  // normal
  for (const auto& [text, id] : doc["model"]["vocab"].items()) tokens[id.get<size_t>()] = text;
  for (const auto& a : doc["added_tokens"]) {
    tokens[a["id"].get<size_t>()] = a["content"].get<std::string>();
    types[a["id"].get<size_t>()] = a["special"].get<bool>() ? 3 : 4;  // control : user-defined
  }
  std::vector<GgufValue> tok_values, type_values, merge_values;
  for (auto& t : tokens) tok_values.push_back(GgufValue::String(t));
  for (int64_t t : types) type_values.push_back(GgufValue::I32(static_cast<int32_t>(t)));
  for (const auto& m : doc["model"]["merges"]) {
    merge_values.push_back(GgufValue::String(m[0].get<std::string>() + " " + m[1].get<std::string>()));
  }
  io::GgufWriter w;
  w.AddKv("general.architecture", GgufValue::String("qwen3"));
  w.AddKv("tokenizer.ggml.model", GgufValue::String("gpt2"));
  w.AddKv("tokenizer.ggml.pre", GgufValue::String(pre));
  w.AddKv("tokenizer.ggml.tokens", GgufValue::Array(GgufType::kString, std::move(tok_values)));
  w.AddKv("tokenizer.ggml.token_type", GgufValue::Array(GgufType::kI32, std::move(type_values)));
  w.AddKv("tokenizer.ggml.merges", GgufValue::Array(GgufType::kString, std::move(merge_values)));
  w.AddKv("tokenizer.chat_template",
          GgufValue::String(testing::ReadText(testing::GoldenDir() + "/templates/qwen3.jinja")));
  auto bytes = w.Serialize();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return std::move(bytes).value();
}

TEST(GgufTokenizer, Qwen3VocabularyMatchesTokenizerJson) {
  const std::vector<uint8_t> bytes = Qwen3Gguf("qwen2");
  auto gguf = io::GgufFile::Parse(bytes, "qwen3-test.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().message();
  auto tok = TokenizerFromGguf(*gguf);
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  int total = 0, ok = 0;
  for (const auto& c : testing::ReadJsonl("qwen3_encode.jsonl")) {
    ++total;
    const auto ids = tok->Encode(c.at("text").get<std::string>());
    if (ids == c.at("ids").get<std::vector<int32_t>>()) {
      ++ok;
    } else {
      ADD_FAILURE() << "case " << c.at("id");
    }
    EXPECT_EQ(*tok->Decode(ids, true), c.at("decoded_skip_special").get<std::string>());
  }
  std::printf("gguf qwen3_encode: %d/%d\n", ok, total);
  auto tpl = ChatTemplateFromGguf(*gguf);
  ASSERT_TRUE(tpl.ok()) << tpl.status().message();
  auto out = tpl->Render(nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])"), nullptr, true);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(GgufTokenizer, Qwen35PreTokenizerAndUnknownPre) {
  const std::vector<uint8_t> bytes = Qwen3Gguf("qwen35");
  auto gguf = io::GgufFile::Parse(bytes, "hybrid.gguf");
  ASSERT_TRUE(gguf.ok());
  auto tok = TokenizerFromGguf(*gguf);
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  for (const auto& c : testing::ReadJsonl("qwen35regex_on_qwen3vocab_encode.jsonl")) {
    EXPECT_EQ(tok->Encode(c.at("text").get<std::string>()), c.at("ids").get<std::vector<int32_t>>())
        << "case " << c.at("id");
  }
  const std::vector<uint8_t> other = Qwen3Gguf("llama-bpe");
  auto g2 = io::GgufFile::Parse(other, "llama.gguf");
  ASSERT_TRUE(g2.ok());
  auto bad = TokenizerFromGguf(*g2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("llama-bpe"), std::string::npos);
}

}  // namespace
}  // namespace clover::tokenizer
