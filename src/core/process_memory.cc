#include "core/process_memory.h"

#include <unistd.h>

#include <fstream>
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

}  // namespace clover
