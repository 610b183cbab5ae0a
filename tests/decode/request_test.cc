// Tests of request validation/defaults and of the model view built from a ModelConfig.
#include "decode/request.h"

#include <gtest/gtest.h>

#include "decoder_fixture.h"

namespace clover::decode::testing {
namespace {

DecodeRequest Valid() {
  DecodeRequest r;
  r.prompt = Prompt(3);
  r.block_size = 16;
  return r;
}

TEST(Request, FillsCloverDefaultsOnlyForClover) {
  DecodeModelInfo m = ModelInfo();
  auto plain = ResolveRequest(Valid(), m);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->penalties.presence, 0.0f);
  EXPECT_FALSE(plain->stop_push.enabled);
  m.is_clover = true;
  auto clover = ResolveRequest(Valid(), m);
  ASSERT_TRUE(clover.ok());
  EXPECT_EQ(clover->penalties.presence, 0.9f);
  EXPECT_EQ(clover->penalties.repetition, 1.05f);
  EXPECT_TRUE(clover->stop_push.enabled);
  EXPECT_EQ(clover->stop_push.eos_start, 8192);
  DecodeRequest off = Valid();
  off.stop_push = StopPushParams{};
  EXPECT_FALSE(ResolveRequest(off, m)->stop_push.enabled);
}

TEST(Request, MergesStopIdsAndTakesTheModelBlockSize) {
  DecodeRequest r = Valid();
  r.stop_ids = {kEos, 7};
  r.block_size = 0;
  auto x = ResolveRequest(r, ModelInfo());
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->stop_ids, (std::vector<int32_t>{kEos, 7}));
  EXPECT_EQ(x->block_size, 32);
}

TEST(Request, RejectsBadFieldsByName) {
  DecodeRequest r = Valid();
  r.prompt = {5, static_cast<int32_t>(kVocab)};
  auto a = ResolveRequest(r, ModelInfo());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("prompt token 1"), std::string::npos);
  r = Valid();
  r.sampling.top_p = 0.0f;
  EXPECT_NE(ResolveRequest(r, ModelInfo()).status().message().find("top_p"), std::string::npos);
  r = Valid();
  r.block_size = 64;
  EXPECT_NE(ResolveRequest(r, ModelInfo()).status().message().find("block size"),
            std::string::npos);
  r.kind = DecoderKind::kAr;  // AR has no block
  EXPECT_TRUE(ResolveRequest(r, ModelInfo()).ok());
  r = Valid();
  r.penalties.repetition = -1.0f;
  EXPECT_FALSE(ResolveRequest(r, ModelInfo()).ok());
  EXPECT_TRUE(ParseDecoderKind("ar").ok());
  EXPECT_TRUE(ParseDecoderKind("frontier").ok());
  EXPECT_FALSE(ParseDecoderKind("beam").ok());
}

TEST(Request, ModelInfoFromConfig) {
  model::ModelConfig c;
  c.family = model::ModelFamily::kCloverMoe;
  c.vocab_size = 512;
  c.mask_token_id = 511;
  c.eos_token_ids = {7, 9};
  c.diffusion.block_size = 8;
  c.diffusion.shift_logits = true;
  const DecodeModelInfo m = DecodeModelInfoFromConfig(c, 500, 42);
  EXPECT_EQ(m.vocab_size, 512);
  EXPECT_EQ(m.n_valid_tokens, 500);
  EXPECT_EQ(m.mask_token_id, 511);
  EXPECT_EQ(m.eos_ids, (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(m.think_end_id, 42);
  EXPECT_TRUE(m.is_clover);
  EXPECT_EQ(m.block_size, 8);
  EXPECT_TRUE(m.shift_logits);
  c.family = model::ModelFamily::kQwen35Moe;
  EXPECT_FALSE(DecodeModelInfoFromConfig(c, 1000, std::nullopt).is_clover);
  EXPECT_EQ(DecodeModelInfoFromConfig(c, 1000, std::nullopt).n_valid_tokens, 512);
}

}  // namespace
}  // namespace clover::decode::testing
