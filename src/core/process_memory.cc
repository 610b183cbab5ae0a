#include "core/process_memory.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// True when `file` is `path` or lies under it as a directory.
bool IsAtOrUnder(const std::string& file, const std::string& path) {
  if (path.empty() || file.compare(0, path.size(), path) != 0) return false;
  return file.size() == path.size() || path.back() == '/' || file[path.size()] == '/';
}

}  // namespace

Result<std::vector<Mapping>> OwnMappings() {
  const char* path = "/proc/self/smaps";
  std::ifstream in(path);
  if (!in) return NotFound(std::string("cannot read the mappings from ") + path);
  std::vector<Mapping> mappings;
  std::string line;
  while (std::getline(in, line)) {
    // A mapping's header: "start-end perms offset dev inode [path]"; its fields follow as
    // "Name:   value kB" lines (a name without spaces, then a colon).
    const size_t colon = line.find(':');
    const size_t space = line.find(' ');
    if (colon == std::string::npos || space < colon) {
      Mapping m;
      char dash = 0;
      std::istringstream range(line);
      if (!(range >> std::hex >> m.begin >> dash >> m.end) || dash != '-') {
        return DataLoss(std::string("unexpected mapping line in ") + path + ": '" + line + "'");
      }
      const size_t slash = line.find('/');
      if (slash != std::string::npos) m.path = line.substr(slash);
      mappings.push_back(std::move(m));
    } else if (mappings.empty()) {
      continue;
    } else if (line.rfind("Rss:", 0) == 0) {
      mappings.back().resident_bytes = FieldBytes(line);
    } else if (line.rfind("FilePmdMapped:", 0) == 0) {
      mappings.back().huge_page_bytes = FieldBytes(line);
    } else if (line.rfind("VmFlags:", 0) == 0) {
      mappings.back().flags = line.substr(colon + 1);
    }
  }
  return mappings;
}

Result<FileMappingResidency> MappedFileResidency(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(const std::vector<Mapping> mappings, OwnMappings());
  FileMappingResidency total;
  for (const Mapping& m : mappings) {
    if (!IsAtOrUnder(m.path, path)) continue;
    total.resident_bytes += m.resident_bytes;
    total.huge_page_bytes += m.huge_page_bytes;
  }
  return total;
}

}  // namespace clover
