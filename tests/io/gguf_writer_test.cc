// GgufWriter streaming: a streamed file equals the serialized one and reads back; tensors written
// out of order, with the wrong size, too many or too few are errors naming the tensor.
#include "io/gguf_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
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

void AddMetadata(GgufWriter& w) {
  w.AddKv("general.architecture", GgufValue::String("qwen35moe"));
  w.AddKv("t.ints", GgufValue::Array(GgufType::kI32, {GgufValue::I32(3), GgufValue::I32(-1)}));
}

// A streaming writer `w_` to a temporary file with `a` [5] F32 and `b` [2, 32] Q8_0 declared: odd
// sizes (20 and 68 bytes), so that both need alignment padding.
class GgufWriterTest : public ::testing::Test {
 protected:
  GgufWriterTest() : path_(TempPath("out.gguf")) {
    for (size_t i = 0; i < b_.size(); ++i) b_[i] = static_cast<uint8_t>(i * 7 + 1);
    AddMetadata(w_);
    EXPECT_TRUE(w_.DeclareTensor("a", DType::kF32, {5}).ok());
    EXPECT_TRUE(w_.DeclareTensor("b", DType::kQ8_0, {2, 32}).ok());
  }
  ~GgufWriterTest() override { fs::remove(path_); }

  const std::vector<float> a_ = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f};
  std::vector<uint8_t> b_ = std::vector<uint8_t>(2 * 34, 0);
  const std::string path_;
  GgufWriter w_;
};

TEST_F(GgufWriterTest, StreamedFileEqualsSerializedAndReadsBack) {
  ASSERT_TRUE(w_.Begin(path_).ok());
  ASSERT_TRUE(w_.WriteTensor("a", a_.data(), a_.size() * sizeof(float)).ok());
  ASSERT_TRUE(w_.WriteTensor("b", b_.data(), b_.size()).ok());
  ASSERT_TRUE(w_.Finish().ok());
  GgufWriter whole;
  AddMetadata(whole);
  ASSERT_TRUE(whole.AddTensor("a", TensorView{DType::kF32, {5}, a_.data(), 20}).ok());
  ASSERT_TRUE(whole.AddTensor("b", TensorView{DType::kQ8_0, {2, 32}, b_.data(), 68}).ok());
  EXPECT_EQ(ReadAll(path_), whole.Serialize().value());

  Result<std::shared_ptr<GgufFile>> f = GgufFile::Open(path_);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->GetIntArray("t.ints").value(), (std::vector<int64_t>{3, -1}));
  const GgufTensor* a = (*f)->FindTensor("a");
  const GgufTensor* b = (*f)->FindTensor("b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->view.shape, (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(0, std::memcmp(a->view.data, a_.data(), 20));
  EXPECT_EQ(0, std::memcmp(b->view.data, b_.data(), 68));
}

TEST_F(GgufWriterTest, WrongSizeIsNamed) {
  ASSERT_TRUE(w_.Begin(path_).ok());
  const Status s = w_.WriteTensor("a", a_.data(), 16);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"'a'", "16 bytes", "expected 20", "[5] x F32", "out.gguf"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << ": " << s.ToString();
}

TEST_F(GgufWriterTest, OutOfOrderTooManyAndTooFewAreNamed) {
  ASSERT_TRUE(w_.Begin(path_).ok());
  Status s = w_.WriteTensor("b", b_.data(), b_.size());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'b' written out of order: expected 'a' (tensor 1 of 2)"),
            std::string::npos)
      << s.ToString();
  ASSERT_TRUE(w_.WriteTensor("a", a_.data(), 20).ok());
  s = w_.Finish();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("1 of 2 tensors; next expected 'b'"), std::string::npos)
      << s.ToString();
  ASSERT_TRUE(w_.WriteTensor("b", b_.data(), b_.size()).ok());
  s = w_.WriteTensor("c", b_.data(), b_.size());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("'c' written after all 2 declared tensors"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(w_.Finish().ok());
}

TEST_F(GgufWriterTest, CallsOutsideTheStreamAreErrors) {
  EXPECT_EQ(w_.WriteTensor("a", a_.data(), 20).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w_.Finish().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w_.Serialize().status().code(), StatusCode::kFailedPrecondition);  // no data held
  ASSERT_TRUE(w_.Begin(path_).ok());
  EXPECT_EQ(w_.DeclareTensor("c", DType::kF32, {1}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w_.Begin(path_).code(), StatusCode::kFailedPrecondition);
  GgufWriter fresh;
  EXPECT_EQ(fresh.DeclareTensor("d", DType::kF32, {4, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fresh.DeclareTensor("q", DType::kQ8_0, {3, 16}).code(), StatusCode::kInvalidArgument);
}

// A large file leaves the page cache when finished, so that its first mapping reads it back in
// 2 MiB folios instead of keeping the 4 KiB pages the writes made.
TEST(GgufWriterPageCacheTest, LargeFileIsDroppedFromThePageCache) {
  const std::string path = TempPath("large.gguf");
  const int64_t n = (int64_t{65} << 20) / 4;  // just over the 64 MiB threshold
  const std::vector<float> a(static_cast<size_t>(n), 0.5f);
  GgufWriter w;
  ASSERT_TRUE(w.AddTensor("a", TensorView{DType::kF32, {n}, a.data(), n * 4}).ok());
  ASSERT_TRUE(w.WriteFile(path).ok());
  const uint64_t size = fs::file_size(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  ASSERT_EQ(::mincore(map, size, resident.data()), 0);
  const auto cached =
      std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; });
  ::munmap(map, size);
  fs::remove(path);
  // A few pages may come back through the directory or metadata reads; the bulk must be gone.
  EXPECT_LT(cached, static_cast<long>(resident.size() / 100))
      << cached << " of " << resident.size();
}

// A writer dropped before Finish (an error mid-conversion) leaves no truncated file.
TEST(GgufWriterLifetimeTest, UnfinishedFileIsRemoved) {
  const std::string path = TempPath("partial.gguf");
  const std::vector<float> a(5, 1.0f);
  {
    GgufWriter w;
    ASSERT_TRUE(w.DeclareTensor("a", DType::kF32, {5}).ok());
    ASSERT_TRUE(w.DeclareTensor("b", DType::kF32, {5}).ok());
    ASSERT_TRUE(w.Begin(path).ok());
    ASSERT_TRUE(w.WriteTensor("a", a.data(), 20).ok());
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace clover::io
