// The memory this process holds, so that a model load can show it maps weights instead of
// copying them (resident pages grow only as a forward touches them).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace clover {

// Returns the bytes of this process's resident set (/proc/self/statm), mapped file pages that
// have been touched included.
Result<int64_t> ResidentBytes();

// The resident pages of this process's mappings of some files, and how many of those bytes are
// mapped by 2 MiB page-table entries (a page cache in huge folios; see docs/benchmarks.md, "Page
// cache in 2 MiB folios": with 4 KiB pages a decode step streams weights at about half speed).
struct FileMappingResidency {
  int64_t resident_bytes = 0;
  int64_t huge_page_bytes = 0;
};

// Sums /proc/self/smaps' Rss and FilePmdMapped over the mappings whose file path starts with
// `path_prefix` (a model file, or the directory holding a model's files).
Result<FileMappingResidency> MappedFileResidency(const std::string& path_prefix);

}  // namespace clover
