// SHA-256 digests (FIPS 180-2 test vectors) and sidecar parsing.
#include "io/sha256.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace clover::io {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, ParsesSidecar) {
  auto e = ParseSha256Sidecar(
      "85F1af48e0cfc350dc0675834c982f77f69c4fdb3178062fad104a7ced800055  model.safetensors\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 *empty.bin\r\n",
      "x.sha256");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].hex, "85f1af48e0cfc350dc0675834c982f77f69c4fdb3178062fad104a7ced800055");
  EXPECT_EQ((*e)[0].name, "model.safetensors");
  EXPECT_EQ((*e)[1].name, "empty.bin");
  auto bad = ParseSha256Sidecar("nothex  model.safetensors\n", "x.sha256");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.sha256:1"), std::string::npos);
  EXPECT_FALSE(ParseSha256Sidecar("\n", "x.sha256").ok());
}

TEST(Sha256Test, HashesShippedModelLikeItsSidecar) {
  const std::string dir = std::string(CLOVER_SOURCE_DIR) + "/models/clover-tiny-random/";
  std::ifstream in(dir + "model.safetensors.sha256");
  std::stringstream ss;
  ss << in.rdbuf();
  auto entries = ParseSha256Sidecar(ss.str(), "model.safetensors.sha256");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  uint64_t last = 0;
  auto hex = Sha256File(dir + (*entries)[0].name, [&](uint64_t done) { last = done; });
  ASSERT_TRUE(hex.ok()) << hex.status().ToString();
  EXPECT_EQ(*hex, (*entries)[0].hex);
  EXPECT_GT(last, 0u);
  EXPECT_EQ(Sha256File(dir + "absent.bin").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace clover::io
