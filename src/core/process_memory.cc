#include "core/process_memory.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace clover {

Result<int64_t> ResidentBytes() {
  const char* path = "/proc/self/statm";
  std::ifstream in(path);
  int64_t size_pages = 0;
  int64_t resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) {
    return NotFound(std::string("cannot read the resident set size from ") + path);
  }
  return resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

namespace {

// Returns the kB value of an smaps field line ("Rss:   1234 kB") in bytes.
int64_t FieldBytes(const std::string& line) {
  std::istringstream in(line.substr(line.find(':') + 1));
  int64_t kb = 0;
  in >> kb;
  return kb * 1024;
}

}  // namespace

Result<FileMappingResidency> MappedFileResidency(const std::string& path_prefix) {
  const char* path = "/proc/self/smaps";
  std::ifstream in(path);
  if (!in) return NotFound(std::string("cannot read the mappings from ") + path);
  FileMappingResidency total;
  bool counted = false;  // the current mapping is one of the files asked about
  std::string line;
  while (std::getline(in, line)) {
    // A mapping's header: "start-end perms offset dev inode [path]"; its fields follow as
    // "Name:   value kB" lines (a name without spaces, then a colon).
    const size_t colon = line.find(':');
    const size_t space = line.find(' ');
    if (colon == std::string::npos || space < colon) {
      const size_t slash = line.find('/');
      counted = slash != std::string::npos && !path_prefix.empty() &&
                line.compare(slash, path_prefix.size(), path_prefix) == 0;
    } else if (counted && line.rfind("Rss:", 0) == 0) {
      total.resident_bytes += FieldBytes(line);
    } else if (counted && line.rfind("FilePmdMapped:", 0) == 0) {
      total.huge_page_bytes += FieldBytes(line);
    }
  }
  return total;
}

}  // namespace clover
