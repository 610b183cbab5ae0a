// The memory this process holds, so that a model load can show it maps weights instead of
// copying them (resident pages grow only as a forward touches them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// One of this process's mappings, from /proc/self/smaps.
struct Mapping {
  uintptr_t begin = 0;  // [begin, end) addresses
  uintptr_t end = 0;
  std::string path;             // the mapped file ("" for anonymous and special mappings)
  int64_t resident_bytes = 0;   // Rss
  int64_t huge_page_bytes = 0;  // FilePmdMapped
  std::string flags;            // VmFlags, two-letter codes separated by spaces ("rd mr hg")
};

// Returns every mapping of this process, in address order.
Result<std::vector<Mapping>> OwnMappings();

// Sums the mappings of the file `path`, or of the files under it when it is a directory.
Result<FileMappingResidency> MappedFileResidency(const std::string& path);

}  // namespace clover
