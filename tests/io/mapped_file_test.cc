// MappedFile: maps bytes read-only and reports open errors with the path.
#include "io/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/process_memory.h"

namespace clover::io {
namespace {

TEST(MappedFileTest, MapsContents) {
  const auto path =
      std::filesystem::temp_directory_path() / ("clover_map_" + std::to_string(::getpid()));
  std::ofstream(path) << "hello";
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ((*f)->size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*f)->data()), 5), "hello");
  std::filesystem::remove(path);
}

TEST(MappedFileTest, EmptyFile) {
  const auto path =
      std::filesystem::temp_directory_path() / ("clover_empty_" + std::to_string(::getpid()));
  std::ofstream{path};
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->size(), 0u);
  EXPECT_TRUE((*f)->bytes().empty());
  std::filesystem::remove(path);
}

// Returns the VmFlags of the mapping that holds `addr`, padded with spaces ("" if none).
std::string VmFlagsOf(const void* addr) {
  const auto at = reinterpret_cast<uintptr_t>(addr);
  Result<std::vector<Mapping>> mappings = OwnMappings();
  if (!mappings.ok()) return "";
  for (const Mapping& m : *mappings)
    if (m.begin <= at && at < m.end) return " " + m.flags + " ";
  return "";
}

// The weights are streamed once per token; the mapping asks for transparent huge pages, which is
// what lets the page cache hold them in 2 MiB folios and map them without 4 KiB page walks.
TEST(MappedFileTest, AsksForHugePages) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "kernel without transparent huge pages";
  const auto path =
      std::filesystem::temp_directory_path() / ("clover_thp_" + std::to_string(::getpid()));
  std::ofstream(path) << std::string(1 << 16, 'x');
  auto f = MappedFile::Open(path.string());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const std::string flags = VmFlagsOf((*f)->data());
  ASSERT_FALSE(flags.empty()) << "no smaps entry for the mapping";
  EXPECT_NE(flags.find(" hg "), std::string::npos) << flags;
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
