// Qwen3 tokenizer against the HF Rust reference: ids, decode, skip-special decode, regex splits.
#include <chrono>

#include <gtest/gtest.h>

#include "golden_util.h"
#include "tokenizer/regex_splitter.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace clover::tokenizer {
namespace {

using testing::GoldenDir;
using testing::ReadJsonl;

const Tokenizer& Qwen3() {
  static const Tokenizer* t = [] {
    auto r = Tokenizer::FromJsonFile(GoldenDir() + "/qwen3/tokenizer.json");
    if (!r.ok()) {
      ADD_FAILURE() << r.status().message();
      std::abort();
    }
    return new Tokenizer(std::move(r).value());
  }();
  return *t;
}

std::string QwenRegex(bool qwen35) {
  auto facts = nlohmann::json::parse(testing::ReadText(GoldenDir() + "/qwen35_qwen36_tokenizer_facts.json"));
  return facts.at(qwen35 ? "pretokenize_regex" : "qwen3_pretokenize_regex").get<std::string>();
}

TEST(TokenizerGolden, LoadsQwen3Quickly) {
  const auto start = std::chrono::steady_clock::now();
  auto t = Tokenizer::FromJsonFile(GoldenDir() + "/qwen3/tokenizer.json");
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->vocab_size(), 151669);
  EXPECT_EQ(t->TokenToId("<|im_end|>"), 151645);
  std::printf("load time: %.1f ms\n", ms);
}

TEST(TokenizerGolden, Qwen3EncodeDecodeAllCases) {
  const Tokenizer& tok = Qwen3();
  int total = 0, ids_ok = 0, decode_ok = 0, skip_ok = 0;
  for (const auto& c : ReadJsonl("qwen3_encode.jsonl")) {
    ++total;
    const std::string text = c.at("text");
    const auto ids = tok.Encode(text);
    const auto want = c.at("ids").get<std::vector<int32_t>>();
    if (ids == want) {
      ++ids_ok;
    } else {
      ADD_FAILURE() << "case " << c.at("id") << " (" << c.at("cat") << "): ids differ for "
                    << nlohmann::json(text).dump();
    }
    auto decoded = tok.Decode(want);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    if (*decoded == c.at("decoded").get<std::string>()) {
      ++decode_ok;
    } else {
      ADD_FAILURE() << "case " << c.at("id") << ": decode differs";
    }
    auto skipped = tok.Decode(want, /*skip_special=*/true);
    ASSERT_TRUE(skipped.ok());
    if (*skipped == c.at("decoded_skip_special").get<std::string>()) {
      ++skip_ok;
    } else {
      ADD_FAILURE() << "case " << c.at("id") << ": skip-special decode differs";
    }
  }
  std::printf("qwen3_encode: ids %d/%d, decode %d/%d, skip-special %d/%d\n", ids_ok, total,
              decode_ok, total, skip_ok, total);
  EXPECT_EQ(total, 499);
}

TEST(TokenizerGolden, PretokenizeRegexQwen3AndQwen35) {
  auto qwen3 = RegexSplitter::Create(QwenRegex(false));
  auto qwen35 = RegexSplitter::Create(QwenRegex(true));
  ASSERT_TRUE(qwen3.ok()) << qwen3.status().message();
  ASSERT_TRUE(qwen35.ok()) << qwen35.status().message();
  int total = 0, ok3 = 0, ok35 = 0;
  for (const auto& c : ReadJsonl("pretokenize_regex.jsonl")) {
    ++total;
    const std::string text = c.at("normalized");
    EXPECT_EQ(NfcNormalize(c.at("text").get<std::string>()), text) << "case " << c.at("id");
    const auto want3 = c.at("qwen3").get<std::vector<std::string>>();
    const auto want35 = c.contains("qwen35") ? c.at("qwen35").get<std::vector<std::string>>() : want3;
    std::vector<std::string_view> got;
    qwen3->Split(text, &got);
    if (std::vector<std::string>(got.begin(), got.end()) == want3) {
      ++ok3;
    } else {
      ADD_FAILURE() << "qwen3 split differs, case " << c.at("id") << ": " << nlohmann::json(text).dump();
    }
    got.clear();
    qwen35->Split(text, &got);
    if (std::vector<std::string>(got.begin(), got.end()) == want35) {
      ++ok35;
    } else {
      ADD_FAILURE() << "qwen35 split differs, case " << c.at("id") << ": " << nlohmann::json(text).dump();
    }
  }
  std::printf("pretokenize_regex: qwen3 %d/%d, qwen35 %d/%d\n", ok3, total, ok35, total);
  EXPECT_EQ(total, 464);
}

TEST(TokenizerGolden, Qwen35RegexOnQwen3Vocab) {
  std::string json = testing::ReadText(GoldenDir() + "/qwen3/tokenizer.json");
  // The synthetic hybrid: Qwen3's files with the Qwen3.5 split regex swapped in.
  auto doc = nlohmann::json::parse(json);
  doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = QwenRegex(true);
  auto hybrid = Tokenizer::FromJsonText(doc.dump(), "qwen35-regex hybrid");
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().message();
  int total = 0, ok = 0;
  for (const auto& c : ReadJsonl("qwen35regex_on_qwen3vocab_encode.jsonl")) {
    ++total;
    const auto ids = hybrid->Encode(c.at("text").get<std::string>());
    if (ids == c.at("ids").get<std::vector<int32_t>>()) {
      ++ok;
    } else {
      ADD_FAILURE() << "case " << c.at("id");
    }
    EXPECT_EQ(Qwen3().Encode(c.at("text").get<std::string>()),
              c.at("qwen3_ids").get<std::vector<int32_t>>());
  }
  std::printf("qwen35regex_on_qwen3vocab: %d/%d\n", ok, total);
  EXPECT_EQ(total, 5);
}

}  // namespace
}  // namespace clover::tokenizer
