// GgufWriter streaming: a streamed file equals the serialized one and reads back; tensors written
// out of order, with the wrong size, too many or too few are errors naming the tensor.
#include "io/gguf_writer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/gguf.h"

namespace clover::io {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("gguf_writer_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Two tensors of odd sizes (5 floats, 2 Q8_0 blocks) so that both need alignment padding.
struct Tensors {
  std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f};
  std::vector<uint8_t> b = std::vector<uint8_t>(2 * 34, 0);
  Tensors() {
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7 + 1);
  }
};

void AddMetadata(GgufWriter& w) {
  w.AddKv("general.architecture", GgufValue::String("qwen35moe"));
  w.AddKv("t.ints", GgufValue::Array(GgufType::kI32, {GgufValue::I32(3), GgufValue::I32(-1)}));
}

// A streaming writer with `a` [5] F32 and `b` [2, 32] Q8_0 declared.
void Declare(GgufWriter& w) {
  AddMetadata(w);
  ASSERT_TRUE(w.DeclareTensor("a", DType::kF32, {5}).ok());
  ASSERT_TRUE(w.DeclareTensor("b", DType::kQ8_0, {2, 32}).ok());
}

TEST(GgufWriterTest, StreamedFileEqualsSerializedAndReadsBack) {
  const Tensors t;
  const std::string path = TempPath("stream.gguf");
  {
    GgufWriter w;
    Declare(w);
    ASSERT_TRUE(w.Begin(path).ok());
    ASSERT_TRUE(w.WriteTensor("a", t.a.data(), t.a.size() * sizeof(float)).ok());
    ASSERT_TRUE(w.WriteTensor("b", t.b.data(), t.b.size()).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  GgufWriter whole;
  AddMetadata(whole);
  ASSERT_TRUE(whole.AddTensor("a", TensorView{DType::kF32, {5}, t.a.data(), 20}).ok());
  ASSERT_TRUE(whole.AddTensor("b", TensorView{DType::kQ8_0, {2, 32}, t.b.data(), 68}).ok());
  EXPECT_EQ(ReadAll(path), whole.Serialize().value());

  Result<std::shared_ptr<GgufFile>> f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->GetIntArray("t.ints").value(), (std::vector<int64_t>{3, -1}));
  const GgufTensor* a = (*f)->FindTensor("a");
  const GgufTensor* b = (*f)->FindTensor("b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->view.shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(0, std::memcmp(a->view.data, t.a.data(), 20));
  EXPECT_EQ(0, std::memcmp(b->view.data, t.b.data(), 68));
  fs::remove(path);
}

TEST(GgufWriterTest, WrongSizeIsNamed) {
  const Tensors t;
  const std::string path = TempPath("size.gguf");
  GgufWriter w;
  Declare(w);
  ASSERT_TRUE(w.Begin(path).ok());
  const Status s = w.WriteTensor("a", t.a.data(), 16);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"'a'", "16 bytes", "expected 20", "[5] x F32", "size.gguf"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << ": " << s.ToString();
}

TEST(GgufWriterTest, OutOfOrderTooManyAndTooFewAreNamed) {
  const Tensors t;
  const std::string path = TempPath("order.gguf");
  GgufWriter w;
  Declare(w);
  ASSERT_TRUE(w.Begin(path).ok());
  Status s = w.WriteTensor("b", t.b.data(), t.b.size());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'b' written out of order: expected 'a' (tensor 1 of 2)"),
            std::string::npos)
      << s.ToString();
  ASSERT_TRUE(w.WriteTensor("a", t.a.data(), 20).ok());
  s = w.Finish();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("1 of 2 tensors; next expected 'b'"), std::string::npos)
      << s.ToString();
  ASSERT_TRUE(w.WriteTensor("b", t.b.data(), t.b.size()).ok());
  s = w.WriteTensor("c", t.b.data(), t.b.size());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'c' written after all 2 declared tensors"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(w.Finish().ok());
  fs::remove(path);
}

TEST(GgufWriterTest, CallsOutsideTheStreamAreErrors) {
  const Tensors t;
  const std::string path = TempPath("state.gguf");
  GgufWriter w;
  Declare(w);
  EXPECT_EQ(w.WriteTensor("a", t.a.data(), 20).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.Finish().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.Serialize().status().code(), StatusCode::kFailedPrecondition);  // no data held
  ASSERT_TRUE(w.Begin(path).ok());
  EXPECT_EQ(w.DeclareTensor("c", DType::kF32, {1}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.Begin(path).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.DeclareTensor("d", DType::kF32, {0}).code(), StatusCode::kFailedPrecondition);
  GgufWriter fresh;
  EXPECT_EQ(fresh.DeclareTensor("d", DType::kF32, {4, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fresh.DeclareTensor("q", DType::kQ8_0, {3, 16}).code(), StatusCode::kInvalidArgument);
}

// A writer dropped before Finish (an error mid-conversion) leaves no truncated file.
TEST(GgufWriterTest, UnfinishedFileIsRemoved) {
  const Tensors t;
  const std::string path = TempPath("partial.gguf");
  {
    GgufWriter w;
    Declare(w);
    ASSERT_TRUE(w.Begin(path).ok());
    ASSERT_TRUE(w.WriteTensor("a", t.a.data(), 20).ok());
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace clover::io
