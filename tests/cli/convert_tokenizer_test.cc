// `clover convert` carries the tokenizer: the demo model's HF directory -> GGUF tokenizes,
// renders prompts, names its special ids and computes logits as the directory does; a GGUF
// source's tokenizer keys are copied unchanged; --no-tokenizer and unsupported tokenizers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_test_util.h"
#include "io/gguf.h"
#include "model/forward_test_util.h"
#include "model/loader.h"
#include "tokenizer/source_loader.h"

namespace clover::cli {
namespace {

namespace fs = std::filesystem;
using testing::RunClover;
using testing::RunResult;
using testing::ScratchDir;

const std::string kDemo = std::string(CLOVER_SOURCE_DIR) + "/models/clover-demo";

bool DemoPresent() { return fs::exists(kDemo + "/tokenizer.json"); }

std::vector<nlohmann::ordered_json> EvalTasks() {
  std::vector<nlohmann::ordered_json> out;
  std::ifstream in(kDemo + "/eval_tasks.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::ordered_json::parse(line));
  return out;
}

// Returns true when `a` and `b` hold the same type and value (arrays element by element).
bool SameValue(const io::GgufValue& a, const io::GgufValue& b) {
  if (a.type != b.type) return false;
  if (a.type != io::GgufType::kArray) {
    if (const auto* s = std::get_if<std::string>(&a.value))
      return *s == std::get<std::string>(b.value);
    return a.ToString() == b.ToString();
  }
  if (a.array_type != b.array_type || a.array().size() != b.array().size()) return false;
  for (size_t i = 0; i < a.array().size(); ++i)
    if (!SameValue(a.array()[i], b.array()[i])) return false;
  return true;
}

// Converts the demo model once for the whole suite.
class ConvertTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!DemoPresent()) return;
    dir_ = new ScratchDir("convert_tokenizer");
    const RunResult r =
        RunClover("convert " + kDemo + " -o " + (*dir_ / "demo.gguf") + " --type f32");
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!DemoPresent()) GTEST_SKIP() << "models/clover-demo is not there";
  }
  static std::string Gguf() { return *dir_ / "demo.gguf"; }

  static ScratchDir* dir_;
};
ScratchDir* ConvertTokenizerTest::dir_ = nullptr;

TEST_F(ConvertTokenizerTest, TokenIdsMatchTheHfTokenizer) {
  auto hf = tokenizer::LoadTokenizer(kDemo);
  auto gguf = tokenizer::LoadTokenizer(Gguf());
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  EXPECT_EQ(gguf->vocab_size(), hf->vocab_size());
  std::vector<std::string> texts = {
      "",
      "Hello, world! It's 12:45 and we've 3 apples.",
      "  leading and trailing spaces  \n\n\ttabs\r\n",
      "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
      "<tool_call>{\"name\": \"f\"}</tool_call><|mask|><|mask|><|endoftext|>",
      "<|im_start|><|im_end|>not<|im_end|special",
      "Ünïcödé: café, naïve, 日本語のテキスト, русский, العربية, हिन्दी, "
      "😀👍🏽, "
      "e\u0301",
      "def f(x):\n    return x ** 2  # comment\n",
  };
  for (const auto& task : EvalTasks()) texts.push_back(task.at("prompt").get<std::string>());
  ASSERT_GT(texts.size(), 100u);
  for (const std::string& text : texts) {
    for (bool parse_special : {true, false}) {
      const std::vector<int32_t> ids = hf->Encode(text, {parse_special});
      EXPECT_EQ(gguf->Encode(text, {parse_special}), ids) << text;
      EXPECT_EQ(*gguf->Decode(ids, true), *hf->Decode(ids, true)) << text;
    }
  }
}

TEST_F(ConvertTokenizerTest, ChatTemplateRendersAsTheHfTemplate) {
  auto hf = tokenizer::LoadChatTemplate(kDemo);
  auto gguf = tokenizer::LoadChatTemplate(Gguf());
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  const auto tasks = EvalTasks();
  std::vector<nlohmann::ordered_json> conversations;
  for (size_t i = 0; i < tasks.size(); i += tasks.size() / 8) conversations.push_back(tasks[i]);
  conversations.push_back(nlohmann::ordered_json::parse(R"({"messages": [
      {"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
      {"role": "assistant", "content": "<think>\nadd\n</think>\n\n4"},
      {"role": "user", "content": "3+3?"}], "enable_thinking": false})"));
  for (const auto& c : conversations) {
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
    if (c.contains("enable_thinking")) kwargs["enable_thinking"] = c.at("enable_thinking");
    auto a = gguf->Render(c.at("messages"), nullptr, true, kwargs);
    auto b = hf->Render(c.at("messages"), nullptr, true, kwargs);
    ASSERT_TRUE(a.ok() && b.ok()) << c.dump();
    EXPECT_EQ(*a, *b);
    if (c.contains("prompt")) {
      EXPECT_EQ(*a, c.at("prompt").get<std::string>());
    }
  }
}

TEST_F(ConvertTokenizerTest, SpecialIdsAndLogitsMatchTheHfDirectory) {
  Result<std::shared_ptr<io::GgufFile>> g = io::GgufFile::Open(Gguf());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*(*g)->GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*(*g)->GetString("tokenizer.ggml.pre"), "qwen2");
  // The ids the directory's tokenizer.json gives its added tokens (they move when it is retrained).
  std::ifstream in(kDemo + "/tokenizer.json");
  const nlohmann::json tokenizer_json = nlohmann::json::parse(in);
  const auto id_of = [&](const std::string& content) {
    for (const nlohmann::json& t : tokenizer_json.at("added_tokens"))
      if (t.at("content") == content) return t.at("id").get<int64_t>();
    ADD_FAILURE() << content << " is not an added token of " << kDemo;
    return int64_t{-1};
  };
  EXPECT_EQ(*(*g)->GetInt("tokenizer.ggml.mask_token_id"), id_of("<|mask|>"));
  EXPECT_EQ(*(*g)->GetInt("tokenizer.ggml.eos_token_id"), id_of("<|im_end|>"));
  EXPECT_EQ(*(*g)->GetInt("tokenizer.ggml.padding_token_id"), id_of("<|endoftext|>"));
  EXPECT_FALSE(*(*g)->GetBool("tokenizer.ggml.add_bos_token"));

  Result<model::ModelWeights> from_hf = model::LoadModel(kDemo);
  Result<model::ModelWeights> from_gguf = model::LoadModel(Gguf());
  ASSERT_TRUE(from_hf.ok()) << from_hf.status().ToString();
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  EXPECT_EQ(from_gguf->config.mask_token_id, from_hf->config.mask_token_id);
  EXPECT_EQ(from_gguf->config.bos_token_id, from_hf->config.bos_token_id);
  EXPECT_EQ(from_gguf->config.pad_token_id, from_hf->config.pad_token_id);
  ASSERT_FALSE(from_gguf->config.eos_token_ids.empty());
  ASSERT_FALSE(from_hf->config.eos_token_ids.empty());
  EXPECT_EQ(from_gguf->config.eos_token_ids.front(), from_hf->config.eos_token_ids.front());

  auto tok = tokenizer::LoadTokenizer(Gguf());
  ASSERT_TRUE(tok.ok());
  const std::vector<int32_t> ids = tok->Encode(EvalTasks().front().at("prompt").get<std::string>());
  model::testing::Engine hf_engine(*from_hf);
  model::testing::Engine gguf_engine(*from_gguf);
  // F32 keeps every canonical tensor as the HF loader made it: the same forward, bit for bit.
  EXPECT_EQ(gguf_engine.Prompt(ids), hf_engine.Prompt(ids));
}

TEST_F(ConvertTokenizerTest, GgufSourceCopiesTheTokenizerKeysUnchanged) {
  const std::string out = *dir_ / "demo-q8.gguf";
  const RunResult r = RunClover("convert " + Gguf() + " -o " + out + " --type q8_0");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto src = io::GgufFile::Open(Gguf());
  auto dst = io::GgufFile::Open(out);
  ASSERT_TRUE(src.ok() && dst.ok());
  int copied = 0;
  for (const auto& [key, value] : (*src)->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    ++copied;
    const io::GgufValue* got = (*dst)->Find(key);
    ASSERT_NE(got, nullptr) << key;
    EXPECT_TRUE(SameValue(*got, value)) << key;
  }
  EXPECT_GE(copied, 9);
}

TEST_F(ConvertTokenizerTest, NoTokenizerFlagAndUnsupportedTokenizer) {
  const std::string bare = *dir_ / "bare.gguf";
  RunResult r = RunClover("convert " + kDemo + " -o " + bare + " --type f32 --no-tokenizer");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto g = io::GgufFile::Open(bare);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)->Find("tokenizer.ggml.tokens"), nullptr);
  EXPECT_EQ((*g)->Find("tokenizer.chat_template"), nullptr);

  // The demo directory with a split regex no GGUF pre-tokenizer name stands for.
  const std::string odd = *dir_ / "odd";
  fs::create_directories(odd);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer_config.json"})
    fs::copy_file(kDemo + "/" + f, odd + "/" + f);
  nlohmann::json tok = nlohmann::json::parse(std::ifstream(kDemo + "/tokenizer.json"));
  tok["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+|\\S+";
  std::ofstream(odd + "/tokenizer.json") << tok.dump();
  r = RunClover("convert " + odd + " -o " + (*dir_ / "odd.gguf") + " --type f32");
  EXPECT_NE(r.rc, 0);
  for (const char* part : {"tokenizer.json", "qwen2, qwen35", "--no-tokenizer"})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
  EXPECT_FALSE(fs::exists(*dir_ / "odd.gguf"));
  r = RunClover("convert " + odd + " -o " + (*dir_ / "odd.gguf") + " --type f32 --no-tokenizer");
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
}  // namespace clover::cli
