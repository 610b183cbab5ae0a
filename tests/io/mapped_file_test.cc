// MappedFile: maps bytes read-only and reports open errors with the path.
#include "io/mapped_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace clover::io {
namespace {

TEST(MappedFileTest, MapsContents) {
  const auto path = std::filesystem::temp_directory_path() / ("clover_map_" + std::to_string(::getpid()));
  std::ofstream(path) << "hello";
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ((*f)->size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*f)->data()), 5), "hello");
  std::filesystem::remove(path);
}

TEST(MappedFileTest, EmptyFile) {
  const auto path = std::filesystem::temp_directory_path() / ("clover_empty_" + std::to_string(::getpid()));
  std::ofstream{path};
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->size(), 0u);
  EXPECT_TRUE((*f)->bytes().empty());
  std::filesystem::remove(path);
}

TEST(MappedFileTest, Errors) {
  auto missing = MappedFile::Open("/nonexistent/clover/file.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/clover/file.bin"), std::string::npos);
  auto dir = MappedFile::Open(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace clover::io
