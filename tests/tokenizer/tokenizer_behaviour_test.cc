// Tokenizer behaviour beyond the goldens: special-token injection, invalid UTF-8, streaming
// decode, malformed files.
#include <gtest/gtest.h>

#include "golden_util.h"
#include "tokenizer/incremental_decoder.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace clover::tokenizer {
namespace {

const Tokenizer& Qwen3() {
  static const Tokenizer* t = [] {
    auto r = Tokenizer::FromJsonFile(testing::GoldenDir() + "/qwen3/tokenizer.json");
    EXPECT_TRUE(r.ok()) << r.status().message();
    return new Tokenizer(std::move(r).value());
  }();
  return *t;
}

TEST(TokenizerBehaviour, SpecialTokensAsPlainText) {
  const std::string text = "<|im_start|>user<think>";
  const auto with = Qwen3().Encode(text);
  ASSERT_EQ(with.front(), 151644);
  const auto plain = Qwen3().Encode(text, {.parse_special = false});
  for (int32_t id : plain) EXPECT_NE(id, 151644);
  EXPECT_EQ(plain.back(), 151667);  // <think> is not special: still one token
  EXPECT_EQ(*Qwen3().Decode(plain), text);
}

TEST(TokenizerBehaviour, InvalidUtf8IsRepaired) {
  const std::string bad = "ab\xC3(\xF0\x9F\x98";
  const auto ids = Qwen3().Encode(bad);
  EXPECT_EQ(*Qwen3().Decode(ids), "ab\xEF\xBF\xBD(\xEF\xBF\xBD");
}

TEST(TokenizerBehaviour, DecodeRejectsOutOfRangeIds) {
  const int32_t ids[] = {1, 999999};
  auto r = Qwen3().Decode(ids);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
}

TEST(TokenizerBehaviour, IncrementalDecoderNeverSplitsCharacters) {
  const std::string text = "héllo 世界 😀 done\n<|im_end|>";
  const auto ids = Qwen3().Encode(text);
  IncrementalDecoder dec(Qwen3());
  std::string out;
  for (int32_t id : ids) {
    auto piece = dec.Add(id);
    ASSERT_TRUE(piece.ok());
    EXPECT_TRUE(IsValidUtf8(*piece));
    out += *piece;
  }
  out += dec.Flush();
  EXPECT_EQ(out, text);
  IncrementalDecoder skipping(Qwen3(), /*skip_special=*/true);
  std::string skipped;
  for (int32_t id : ids) skipped += *skipping.Add(id);
  EXPECT_EQ(skipped + skipping.Flush(), "héllo 世界 😀 done\n");
}

TEST(TokenizerBehaviour, IncrementalDecoderFlushesInvalidTail) {
  // Byte-level token for byte 0xF0 alone: an unfinished 4-byte sequence.
  const int32_t lead = Qwen3().TokenToId("ð");
  ASSERT_GE(lead, 0);
  IncrementalDecoder dec(Qwen3());
  EXPECT_EQ(*dec.Add(lead), "");
  EXPECT_EQ(dec.Flush(), "\xEF\xBF\xBD");
}

TEST(TokenizerBehaviour, MalformedJsonNamesFileAndField) {
  auto bad = Tokenizer::FromJsonText("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [[\"a\"]]}}", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.json"), std::string::npos);
  EXPECT_NE(bad.status().message().find("model.merges"), std::string::npos) << bad.status().message();
  auto syntax = Tokenizer::FromJsonText("{\"model\": ", "y.json");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("y.json"), std::string::npos);
  auto missing = Tokenizer::FromJsonFile("/nonexistent/tokenizer.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace clover::tokenizer
