// Process memory: the resident set, and the resident pages of given files' mappings.
#include "core/process_memory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace clover {
namespace {

namespace fs = std::filesystem;

TEST(ProcessMemoryTest, MappedFileResidencyCountsTouchedPagesOfThatFileOnly) {
  const fs::path dir =
      fs::temp_directory_path() / ("clover_residency_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "weights.bin").string();
  constexpr int64_t kBytes = int64_t{8} << 20;
  std::ofstream(path, std::ios::binary) << std::string(kBytes, 'w');

  Result<FileMappingResidency> none = MappedFileResidency(dir.string());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->resident_bytes, 0);

  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  const auto* bytes = static_cast<const uint8_t*>(map);
  int64_t sum = 0;
  for (int64_t at = 0; at < kBytes; at += 4096) sum += bytes[at];
  EXPECT_EQ(sum, 'w' * (kBytes / 4096));

  Result<FileMappingResidency> touched = MappedFileResidency(dir.string());
  ASSERT_TRUE(touched.ok());
  EXPECT_GE(touched->resident_bytes, kBytes);
  EXPECT_LE(touched->resident_bytes, kBytes + (int64_t{2} << 20));  // at most a huge page over
  EXPECT_GE(touched->huge_page_bytes, 0);
  EXPECT_LE(touched->huge_page_bytes, touched->resident_bytes);
  EXPECT_EQ(MappedFileResidency(path)->resident_bytes, touched->resident_bytes);
  // Another path matches none of it, nor does a name the directory's merely starts with.
  EXPECT_EQ(MappedFileResidency((dir / "other").string())->resident_bytes, 0);
  const std::string dir_name = dir.string();
  EXPECT_EQ(MappedFileResidency(dir_name.substr(0, dir_name.size() - 1))->resident_bytes, 0);
  ::munmap(map, kBytes);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace clover
