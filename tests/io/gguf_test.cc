// GGUF reader and writer: round trip of every metadata type and tensor, and each corruption error.
#include "io/gguf.h"

#include <gtest/gtest.h>

#include <cstring>

#include "io/gguf_writer.h"

namespace clover::io {
namespace {

struct Fixture {
  std::vector<float> f32 = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::vector<uint8_t> q8 = std::vector<uint8_t>(34 * 2, 3);
  std::vector<uint8_t> bytes;
};

// A small valid file: metadata of every type (incl. nested arrays) and two tensors.
Fixture MakeFile() {
  Fixture fx;
  GgufWriter w;
  w.AddKv("general.architecture", GgufValue::String("qwen35moe"));
  w.AddKv("t.u8", GgufValue::U8(200));
  w.AddKv("t.i8", GgufValue::I8(-5));
  w.AddKv("t.u16", GgufValue::U16(60000));
  w.AddKv("t.i16", GgufValue::I16(-30000));
  w.AddKv("t.u32", GgufValue::U32(4000000000u));
  w.AddKv("t.i32", GgufValue::I32(-7));
  w.AddKv("t.u64", GgufValue::U64(1ull << 40));
  w.AddKv("t.i64", GgufValue::I64(-(1ll << 40)));
  w.AddKv("t.f32", GgufValue::F32(0.25f));
  w.AddKv("t.f64", GgufValue::F64(1e-300));
  w.AddKv("t.bool", GgufValue::Bool(true));
  w.AddKv("t.ints", GgufValue::Array(GgufType::kI32, {GgufValue::I32(2), GgufValue::I32(1), GgufValue::I32(0)}));
  w.AddKv("t.nested", GgufValue::Array(GgufType::kArray,
                                       {GgufValue::Array(GgufType::kString, {GgufValue::String("x")}),
                                        GgufValue::Array(GgufType::kString, {})}));
  TensorView a{DType::kF32, {2, 3}, fx.f32.data(), 24};
  TensorView b{DType::kQ8_0, {2, 32}, fx.q8.data(), 68};
  EXPECT_TRUE(w.AddTensor("a.weight", a).ok());
  EXPECT_TRUE(w.AddTensor("b.weight", b).ok());
  fx.bytes = w.Serialize().value();
  return fx;
}

void ExpectError(const Status& s, StatusCode code, const std::string& substring) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(substring), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("test.gguf"), std::string::npos) << s.ToString();
}

Status ParseStatus(const std::vector<uint8_t>& bytes) { return GgufFile::Parse(bytes, "test.gguf").status(); }

// Byte offset of the `offset` field in the tensor info of `name`.
size_t TensorOffsetField(const std::vector<uint8_t>& bytes, const std::string& name, int n_dims) {
  const std::string needle = name;
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  return static_cast<size_t>(it - bytes.begin()) + name.size() + 4 + 8 * n_dims + 4;
}

template <typename T>
void Poke(std::vector<uint8_t>& bytes, size_t at, T v) {
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

TEST(GgufTest, WriterReaderRoundTrip) {
  Fixture fx = MakeFile();
  auto f = GgufFile::Parse(fx.bytes, "test.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->GetString("general.architecture").value(), "qwen35moe");
  EXPECT_EQ(f->GetInt("t.u8").value(), 200);
  EXPECT_EQ(f->GetInt("t.i8").value(), -5);
  EXPECT_EQ(f->GetInt("t.u16").value(), 60000);
  EXPECT_EQ(f->GetInt("t.i16").value(), -30000);
  EXPECT_EQ(f->GetInt("t.u32").value(), 4000000000ll);
  EXPECT_EQ(f->GetInt("t.i32").value(), -7);
  EXPECT_EQ(f->GetInt("t.u64").value(), 1ll << 40);
  EXPECT_EQ(f->GetInt("t.i64").value(), -(1ll << 40));
  EXPECT_EQ(f->GetFloat("t.f32").value(), 0.25);
  EXPECT_EQ(f->GetFloat("t.f64").value(), 1e-300);
  EXPECT_TRUE(f->GetBool("t.bool").value());
  EXPECT_EQ(f->GetIntArray("t.ints").value(), (std::vector<int64_t>{2, 1, 0}));
  const GgufValue* nested = f->Find("t.nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->array().size(), 2u);
  EXPECT_EQ(std::get<std::string>(nested->array()[0].array()[0].value), "x");
  EXPECT_TRUE(nested->array()[1].array().empty());

  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensor* a = f->FindTensor("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->view.shape, (std::vector<int64_t>{2, 3}));  // ne {3, 2} reversed
  EXPECT_EQ(std::memcmp(a->view.data, fx.f32.data(), 24), 0);
  EXPECT_EQ((a->view.bytes() - fx.bytes.data()) % 32, 0);
  const GgufTensor* b = f->FindTensor("b.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->view.dtype, DType::kQ8_0);
  EXPECT_EQ(b->view.nbytes, 68u);
  EXPECT_EQ(b->offset % 32, 0u);
}

TEST(GgufTest, TypedGetterErrors) {
  Fixture fx = MakeFile();
  auto f = GgufFile::Parse(fx.bytes, "test.gguf");
  ASSERT_TRUE(f.ok());
  ExpectError(f->GetInt("missing.key").status(), StatusCode::kNotFound, "missing.key");
  ExpectError(f->GetString("t.u8").status(), StatusCode::kInvalidArgument, "expected string, found u8");
  ExpectError(f->GetIntArray("t.nested").status(), StatusCode::kInvalidArgument, "array of integers");
}

TEST(GgufTest, AcceptsVersion2) {
  Fixture fx = MakeFile();
  Poke<uint32_t>(fx.bytes, 4, 2);
  EXPECT_TRUE(ParseStatus(fx.bytes).ok());
}

TEST(GgufTest, BadMagic) {
  Fixture fx = MakeFile();
  fx.bytes[0] = 'X';
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "bad GGUF magic");
}

TEST(GgufTest, BadVersion) {
  Fixture fx = MakeFile();
  Poke<uint32_t>(fx.bytes, 4, 7);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kUnimplemented, "unsupported GGUF version 7");
}

TEST(GgufTest, ImpossibleCounts) {
  Fixture fx = MakeFile();
  Poke<uint64_t>(fx.bytes, 8, 1ull << 60);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "tensor count");
  fx = MakeFile();
  Poke<uint64_t>(fx.bytes, 16, 1ull << 60);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "metadata count");
}

TEST(GgufTest, BadAlignment) {
  GgufWriter w;
  w.AddKv("general.alignment", GgufValue::U32(3));
  ExpectError(ParseStatus(w.Serialize().value()), StatusCode::kDataLoss, "power of two");
  GgufWriter w2;
  w2.AddKv("general.alignment", GgufValue::String("32"));
  ExpectError(ParseStatus(w2.Serialize().value()), StatusCode::kDataLoss, "general.alignment");
}

TEST(GgufTest, CustomAlignment) {
  std::vector<float> v(3, 1.0f);
  GgufWriter w;
  w.AddKv("general.alignment", GgufValue::U32(64));
  ASSERT_TRUE(w.AddTensor("x", TensorView{DType::kF32, {3}, v.data(), 12}).ok());
  ASSERT_TRUE(w.AddTensor("y", TensorView{DType::kF32, {3}, v.data(), 12}).ok());
  auto bytes = w.Serialize().value();
  auto f = GgufFile::Parse(bytes, "test.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->FindTensor("y")->offset, 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
}

TEST(GgufTest, StringLengthBeyondFile) {
  Fixture fx = MakeFile();
  Poke<uint64_t>(fx.bytes, 24, 1ull << 40);  // length of the first key
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "runs past the end of the file");
}

TEST(GgufTest, ArrayCountBeyondFile) {
  GgufWriter w;
  w.AddKv("arr", GgufValue::Array(GgufType::kU64, {GgufValue::U64(1)}));
  auto bytes = w.Serialize().value();
  Poke<uint64_t>(bytes, 24 + 8 + 3 + 4 + 4, 1ull << 50);  // element count
  ExpectError(ParseStatus(bytes), StatusCode::kDataLoss, "cannot fit");
}

TEST(GgufTest, UnknownValueType) {
  Fixture fx = MakeFile();
  Poke<uint32_t>(fx.bytes, 24 + 8 + std::strlen("general.architecture"), 99);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "unknown value type 99");
}

TEST(GgufTest, TensorDataBeyondFile) {
  Fixture fx = MakeFile();
  fx.bytes.resize(fx.bytes.size() - 40);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kOutOfRange, "'b.weight'");
}

TEST(GgufTest, TensorOffsetErrors) {
  Fixture fx = MakeFile();
  Poke<uint64_t>(fx.bytes, TensorOffsetField(fx.bytes, "b.weight", 2), 8);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "not a multiple of the alignment");
  fx = MakeFile();
  Poke<uint64_t>(fx.bytes, TensorOffsetField(fx.bytes, "b.weight", 2), 0);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "overlap");
  fx = MakeFile();
  Poke<uint64_t>(fx.bytes, TensorOffsetField(fx.bytes, "b.weight", 2), 1ull << 62);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kOutOfRange, "runs past the end");
}

TEST(GgufTest, TensorInfoErrors) {
  Fixture fx = MakeFile();
  const size_t type_at = TensorOffsetField(fx.bytes, "a.weight", 2) - 4;
  Poke<uint32_t>(fx.bytes, type_at, 77);
  ExpectError(ParseStatus(fx.bytes), StatusCode::kUnimplemented, "unknown ggml tensor type 77");
  fx = MakeFile();
  Poke<uint32_t>(fx.bytes, type_at - 16 - 4, 5);  // n_dims
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "at most 4");
  fx = MakeFile();
  Poke<uint64_t>(fx.bytes, type_at - 16, 0);  // ne[0]
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "expected > 0");
  fx = MakeFile();
  Poke<uint64_t>(fx.bytes, TensorOffsetField(fx.bytes, "b.weight", 2) - 4 - 16, 33);  // Q8_0 row of 33
  ExpectError(ParseStatus(fx.bytes), StatusCode::kDataLoss, "block size 32");
}

TEST(GgufTest, EveryTruncationIsAnError) {
  Fixture fx = MakeFile();
  for (size_t n = 0; n + 32 < fx.bytes.size(); ++n) {
    std::vector<uint8_t> prefix(fx.bytes.begin(), fx.bytes.begin() + n);
    EXPECT_FALSE(ParseStatus(prefix).ok()) << "prefix " << n;
  }
}

TEST(GgufTest, WriterRejectsBadTensors) {
  GgufWriter w;
  std::vector<float> v(4);
  EXPECT_EQ(w.AddTensor("x", TensorView{DType::kBool, {4}, v.data(), 4}).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(w.AddTensor("x", TensorView{DType::kF32, {4}, v.data(), 8}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w.AddTensor("x", TensorView{DType::kF32, {1, 1, 1, 1, 4}, v.data(), 16}).code(),
            StatusCode::kInvalidArgument);
}

TEST(GgufTest, ReadsGoldenFile) {
  auto f = GgufFile::Open(std::string(CLOVER_SHARED_DIR) + "/golden/clover-tiny/model-f32.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->GetString("general.architecture").value(), "clover_moe");
  EXPECT_EQ((*f)->GetIntArray("clover_moe.rope.dimension_sections").value(), (std::vector<int64_t>{2, 1, 1, 0}));
  const GgufTensor* conv = (*f)->FindTensor("blk.0.ssm_conv1d.weight");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->view.shape, (std::vector<int64_t>{128, 4}));
}

}  // namespace
}  // namespace clover::io
