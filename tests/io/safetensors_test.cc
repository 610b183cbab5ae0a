// safetensors reader: valid files, every header validation error, sharded sets.
#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace clover::io {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> Build(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> out(8);
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  out.insert(out.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<uint8_t>(i));
  return out;
}

// Two F32 tensors ([2,2] and [3]) plus metadata.
const std::string kValidHeader =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}})";

Status ParseStatus(const std::string& header, size_t data_bytes) {
  const std::vector<uint8_t> bytes = Build(header, data_bytes);
  return SafetensorsFile::Parse(bytes, "test.safetensors").status();
}

void ExpectError(const Status& s, StatusCode code, const std::string& substring) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(substring), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("test.safetensors"), std::string::npos) << s.ToString();
}

TEST(SafetensorsTest, ParsesValidFile) {
  const std::vector<uint8_t> bytes = Build(kValidHeader, 22);
  auto f = SafetensorsFile::Parse(bytes, "test.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->tensors().size(), 2u);
  const SafetensorsTensor* a = f->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->view.dtype, DType::kF32);
  EXPECT_EQ(a->view.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->view.nbytes, 16u);
  EXPECT_EQ(a->view.bytes(), bytes.data() + 8 + kValidHeader.size());  // zero-copy
  const SafetensorsTensor* b = f->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->view.dtype, DType::kBF16);
  EXPECT_EQ(b->view.bytes()[0], 16);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->Find("c"), nullptr);
}

TEST(SafetensorsTest, AcceptsPlainAndIntegerDtypes) {
  for (const char* dtype : {"F16", "F8_E4M3", "I8", "U8", "I32", "I64", "BOOL"}) {
    SCOPED_TRACE(dtype);
    const std::string header = std::string(R"({"t":{"dtype":")") + dtype + R"(","shape":[1],"data_offsets":[0,)" +
                               std::to_string(DTypeBytes(*DTypeFromSafetensorsName(dtype), 1).value()) + "]}}";
    EXPECT_TRUE(ParseStatus(header, 8).ok()) << ParseStatus(header, 8).ToString();
  }
}

TEST(SafetensorsTest, TruncatedFile) {
  const std::vector<uint8_t> bytes = {1, 2, 3};
  ExpectError(SafetensorsFile::Parse(bytes, "test.safetensors").status(), StatusCode::kDataLoss, "truncated");
}

TEST(SafetensorsTest, HeaderLengthBeyondFile) {
  std::vector<uint8_t> bytes = Build(kValidHeader, 22);
  const uint64_t huge = bytes.size();
  std::memcpy(bytes.data(), &huge, 8);
  ExpectError(SafetensorsFile::Parse(bytes, "test.safetensors").status(), StatusCode::kDataLoss,
              "runs past the end of the file");
}

TEST(SafetensorsTest, MalformedJson) {
  ExpectError(ParseStatus(R"({"a":{"dtype":"F32",)", 0), StatusCode::kDataLoss, "malformed safetensors header JSON");
  ExpectError(ParseStatus(R"([1,2])", 0), StatusCode::kDataLoss, "not a JSON object");
  ExpectError(ParseStatus(R"({"a":{"dtype":"F32","shape":[1]}})", 4), StatusCode::kDataLoss, "data_offsets");
  ExpectError(ParseStatus(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4), StatusCode::kDataLoss,
              "non-negative");
}

TEST(SafetensorsTest, OverlappingOffsets) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  ExpectError(ParseStatus(h, 12), StatusCode::kDataLoss, "overlap");
}

TEST(SafetensorsTest, OutOfRangeOffsets) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  ExpectError(ParseStatus(h, 12), StatusCode::kOutOfRange, "'a'");
  const std::string reversed = R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})";
  ExpectError(ParseStatus(reversed, 12), StatusCode::kDataLoss, "begin 8 > end 4");
}

TEST(SafetensorsTest, ShapeByteMismatch) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})";
  ExpectError(ParseStatus(h, 16), StatusCode::kDataLoss, "needs 12 bytes, data_offsets span 16");
  const std::string overflow = R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})";
  ExpectError(ParseStatus(overflow, 16), StatusCode::kDataLoss, "overflow");
}

TEST(SafetensorsTest, UnknownDtype) {
  const std::string h = R"({"a":{"dtype":"F4_WEIRD","shape":[2],"data_offsets":[0,2]}})";
  ExpectError(ParseStatus(h, 2), StatusCode::kUnimplemented, "unknown dtype 'F4_WEIRD'");
}

TEST(SafetensorsTest, DuplicateTensor) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  ExpectError(ParseStatus(h, 8), StatusCode::kDataLoss, "duplicate tensor 'a'");
}

TEST(SafetensorsTest, NestedDuplicateKeysAreNotTensors) {
  const std::string h = R"({"__metadata__":{"x":"1"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_TRUE(ParseStatus(h, 4).ok());
}

TEST(SafetensorsTest, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = Build(kValidHeader, 22);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    EXPECT_FALSE(SafetensorsFile::Parse(prefix, "t").ok()) << "prefix " << n;
  }
}

class SafetensorsShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("clover_st_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    Write("s1.safetensors", Build(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
    Write("s2.safetensors", Build(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8));
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  void WriteIndex(const std::string& weight_map) {
    std::ofstream(dir_ / "model.safetensors.index.json") << R"({"metadata":{},"weight_map":)" << weight_map << "}";
  }
  std::string Index() const { return (dir_ / "model.safetensors.index.json").string(); }
  fs::path dir_;
};

TEST_F(SafetensorsShardTest, OpensShardedSet) {
  WriteIndex(R"({"a":"s1.safetensors","b":"s2.safetensors"})");
  auto set = SafetensorsSet::Open(Index());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->files().size(), 2u);
  ASSERT_EQ(set->tensors().size(), 2u);
  EXPECT_EQ(set->tensors().at("b").tensor->view.shape, (std::vector<int64_t>{2}));
}

TEST_F(SafetensorsShardTest, MissingShard) {
  WriteIndex(R"({"a":"s1.safetensors","b":"s3.safetensors"})");
  auto set = SafetensorsSet::Open(Index());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kNotFound);
  EXPECT_NE(set.status().message().find("s3.safetensors"), std::string::npos);
}

TEST_F(SafetensorsShardTest, TensorNotInItsShard) {
  WriteIndex(R"({"a":"s2.safetensors","b":"s2.safetensors"})");
  auto set = SafetensorsSet::Open(Index());
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("does not contain it"), std::string::npos) << set.status().ToString();
}

TEST_F(SafetensorsShardTest, ShardTensorMissingFromMap) {
  WriteIndex(R"({"a":"s1.safetensors"})");
  Write("s1.safetensors", Build(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                R"("z":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  auto set = SafetensorsSet::Open(Index());
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("'z'"), std::string::npos) << set.status().ToString();
}

TEST_F(SafetensorsShardTest, ShardPathEscape) {
  WriteIndex(R"({"a":"../s1.safetensors"})");
  auto set = SafetensorsSet::Open(Index());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace clover::io
