// MappedFile: open + mmap with errno-based errors.
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace clover::io {

Result<std::shared_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string what = "cannot open '" + path + "': " + std::strerror(err);
    return err == ENOENT ? NotFound(what) : DataLoss(what);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return DataLoss("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("'" + path + "' is a directory, expected a file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return DataLoss("cannot mmap '" + path + "' (" + std::to_string(size) +
                      " bytes): " + std::strerror(err));
    }
    // Weights are streamed once per token: 2 MiB pages (where the kernel and file system give
    // them) spare the page walks of 4 KiB ones. Advisory, so a refusal changes nothing.
    ::madvise(p, size, MADV_HUGEPAGE);
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file contents reachable
  return std::shared_ptr<MappedFile>(new MappedFile(path, data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace clover::io
