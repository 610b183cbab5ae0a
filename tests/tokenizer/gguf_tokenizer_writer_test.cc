// HF tokenizer files -> GGUF `tokenizer.*` keys -> TokenizerFromGguf must tokenize like the HF
// tokenizer (Qwen3's real vocabulary, the goldens' ids), and unsupported or broken
// tokenizer.json files are refused with the file and field named.
#include "tokenizer/gguf_tokenizer_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "golden_util.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "tokenizer/gguf_tokenizer.h"
#include "tokenizer/source_loader.h"

namespace clover::tokenizer {
namespace {

namespace fs = std::filesystem;

const std::string kQwen3Dir = testing::GoldenDir() + "/qwen3";
const std::string kDemoDir = std::string(CLOVER_SOURCE_DIR) + "/models/clover-demo";

// The GGUF bytes of `kv` alone (no tensors); `bytes` must outlive the parsed file.
io::GgufFile ParseKv(const GgufKvList& kv, std::vector<uint8_t>& bytes) {
  io::GgufWriter w;
  w.AddKv("general.architecture", io::GgufValue::String("qwen3"));
  for (const auto& [key, value] : kv) w.AddKv(key, value);
  auto serialized = w.Serialize();
  EXPECT_TRUE(serialized.ok()) << serialized.status().ToString();
  bytes = std::move(serialized).value();
  auto gguf = io::GgufFile::Parse(bytes, "writer-test.gguf");
  EXPECT_TRUE(gguf.ok()) << gguf.status().ToString();
  return std::move(gguf).value();
}

TEST(GgufTokenizerWriter, Qwen3GoldenIdsFromTheWrittenVocabulary) {
  auto kv = GgufTokenizerKvFromHfDir(kQwen3Dir, 0);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  std::vector<uint8_t> bytes;
  const io::GgufFile gguf = ParseKv(*kv, bytes);
  EXPECT_EQ(*gguf.GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*gguf.GetString("tokenizer.ggml.pre"), "qwen2");
  // tokenizer_config.json: eos "<|im_end|>", pad "<|endoftext|>", no bos, no mask.
  EXPECT_EQ(*gguf.GetInt("tokenizer.ggml.eos_token_id"), 151645);
  EXPECT_EQ(*gguf.GetInt("tokenizer.ggml.padding_token_id"), 151643);
  EXPECT_EQ(gguf.Find("tokenizer.ggml.bos_token_id"), nullptr);
  EXPECT_EQ(gguf.Find("tokenizer.ggml.mask_token_id"), nullptr);
  EXPECT_FALSE(*gguf.GetBool("tokenizer.ggml.add_bos_token"));
  const std::vector<int64_t> types = *gguf.GetIntArray("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 151669u);  // 151,643 BPE tokens + 26 added
  EXPECT_EQ(types[0], 1);
  EXPECT_EQ(types[151645], 3);  // <|im_end|>, special
  EXPECT_EQ(types[151667], 4);  // <think>, not special

  auto tok = TokenizerFromGguf(gguf);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  int total = 0;
  for (const auto& c : testing::ReadJsonl("qwen3_encode.jsonl")) {
    ++total;
    const std::vector<int32_t> ids = tok->Encode(c.at("text").get<std::string>());
    EXPECT_EQ(ids, c.at("ids").get<std::vector<int32_t>>()) << "case " << c.at("id");
    EXPECT_EQ(*tok->Decode(ids, true), c.at("decoded_skip_special").get<std::string>())
        << "case " << c.at("id");
  }
  EXPECT_EQ(total, 499);

  // The template is tokenizer_config.json's: renders as the directory's does.
  auto from_gguf = ChatTemplateFromGguf(gguf);
  auto from_dir = LoadChatTemplate(kQwen3Dir);
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().ToString();
  int renders = 0;
  for (const auto& r : testing::ReadJsonl("chat_template_renders.jsonl")) {
    if (r.at("template") != "qwen3" || r.at("rendered").is_null()) continue;
    ++renders;
    nlohmann::ordered_json kwargs = r.at("kwargs");
    const bool add_generation_prompt = kwargs.value("add_generation_prompt", false);
    kwargs.erase("add_generation_prompt");
    auto a = from_gguf->Render(r.at("messages"), r.at("tools"), add_generation_prompt, kwargs);
    auto b = from_dir->Render(r.at("messages"), r.at("tools"), add_generation_prompt, kwargs);
    ASSERT_TRUE(a.ok() && b.ok()) << r.at("case");
    EXPECT_EQ(*a, *b) << r.at("case");
    EXPECT_EQ(*a, r.at("rendered").get<std::string>()) << r.at("case");
  }
  EXPECT_GT(renders, 10);
}

TEST(GgufTokenizerWriter, ModelVocabularyPadsWithUnusedTokens) {
  // Qwen3's config.json vocab_size: 267 embedding rows beyond the tokenizer.
  constexpr int64_t kQwen3ModelVocab = 151936;
  auto kv = GgufTokenizerKvFromHfDir(kQwen3Dir, kQwen3ModelVocab);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  std::vector<uint8_t> bytes;
  const io::GgufFile gguf = ParseKv(*kv, bytes);
  const io::GgufValue* tokens = gguf.Find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  ASSERT_EQ(tokens->array().size(), static_cast<size_t>(kQwen3ModelVocab));
  EXPECT_EQ(std::get<std::string>(tokens->array()[151669].value), "[PAD151669]");
  EXPECT_EQ((*gguf.GetIntArray("tokenizer.ggml.token_type"))[151935], 5);  // unused
  auto tok = TokenizerFromGguf(gguf);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  int checked = 0;
  for (const auto& c : testing::ReadJsonl("qwen3_encode.jsonl")) {
    if (++checked > 100) break;
    EXPECT_EQ(tok->Encode(c.at("text").get<std::string>()), c.at("ids").get<std::vector<int32_t>>())
        << "case " << c.at("id");
  }
}

// A copy of the demo model's tokenizer files in a scratch directory, `edit` applied to its
// tokenizer.json.
class EditedTokenizerDir {
 public:
  explicit EditedTokenizerDir(const std::function<void(nlohmann::json&)>& edit)
      : dir_(fs::temp_directory_path() / ("clover_tok_writer_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(kDemoDir + "/tokenizer_config.json", dir_ / "tokenizer_config.json");
    nlohmann::json root = nlohmann::json::parse(testing::ReadText(kDemoDir + "/tokenizer.json"));
    edit(root);
    std::ofstream(dir_ / "tokenizer.json") << root.dump();
  }
  ~EditedTokenizerDir() { fs::remove_all(dir_); }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// Returns the error of converting a demo tokenizer.json changed by `edit`, for a model of
// `n_vocab` tokens.
Status ErrorOf(const std::function<void(nlohmann::json&)>& edit, int64_t n_vocab = 1082) {
  EditedTokenizerDir dir(edit);
  auto kv = GgufTokenizerKvFromHfDir(dir.path(), n_vocab);
  EXPECT_FALSE(kv.ok());
  return kv.ok() ? Status::Ok() : kv.status();
}

TEST(GgufTokenizerWriter, UnknownSplitRegexNamesTheFileAndTheSupportedNames) {
  const Status s = ErrorOf([](nlohmann::json& j) {
    j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\p{L}+|\\s+";
  });
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  for (const char* part : {"tokenizer.json", "pattern.Regex", "\\p{L}+|\\s+", "qwen2, qwen35"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.message();
}

TEST(GgufTokenizerWriter, MissingFieldsAreNamed) {
  Status s = ErrorOf([](nlohmann::json& j) { j["model"].erase("vocab"); });
  EXPECT_NE(s.message().find("model.vocab"), std::string::npos) << s.message();
  s = ErrorOf([](nlohmann::json& j) { j["model"].erase("merges"); });
  EXPECT_NE(s.message().find("model.merges"), std::string::npos) << s.message();
  s = ErrorOf([](nlohmann::json& j) { j.erase("pre_tokenizer"); });
  EXPECT_NE(s.message().find("pre_tokenizer"), std::string::npos) << s.message();
  s = ErrorOf([](nlohmann::json& j) { j["added_tokens"][2].erase("content"); });
  EXPECT_NE(s.message().find("added_tokens[2]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("tokenizer.json"), std::string::npos) << s.message();
}

TEST(GgufTokenizerWriter, AddedTokenBeyondTheModelVocabulary) {
  const Status s = ErrorOf([](nlohmann::json& j) { j["added_tokens"][7]["id"] = 5000; });
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  for (const char* part : {"tokenizer.json", "added_tokens[7]", "5000", "1082"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.message();
}

TEST(GgufTokenizerWriter, LayoutsGgufCannotCarryAreRefused) {
  Status s = ErrorOf([](nlohmann::json& j) { j["normalizer"] = nullptr; });
  EXPECT_NE(s.message().find("normalizer"), std::string::npos) << s.message();
  s = ErrorOf([](nlohmann::json& j) { j["added_tokens"][3]["lstrip"] = true; });
  EXPECT_NE(s.message().find("lstrip"), std::string::npos) << s.message();
  s = ErrorOf(
      [](nlohmann::json& j) { j["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true; });
  EXPECT_NE(s.message().find("pretokenizers[1]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace clover::tokenizer
