// GgufWriter: little-endian serialization of the GGUF v3 layout.
#include "io/gguf_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace clover::io {
namespace {

// From this size on, Finish drops the file's pages from the page cache once they are on disk.
// The writes leave them in 4 KiB pages, and weights mapped from those decode at about half the
// speed of a cache read back through an advised mapping, in 2 MiB folios (MappedFile,
// docs/benchmarks.md). Small files (tests, tiny models) skip the sync.
constexpr off_t kEvictMinBytes = off_t{64} << 20;

template <typename T>
void Put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void PutString(std::vector<uint8_t>& out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

// Writes the payload of `v` (without its type tag).
void PutValue(std::vector<uint8_t>& out, const GgufValue& v) {
  auto as_u = [&] {
    return std::holds_alternative<uint64_t>(v.value)
               ? std::get<uint64_t>(v.value)
               : static_cast<uint64_t>(std::get<int64_t>(v.value));
  };
  auto as_i = [&] {
    return std::holds_alternative<int64_t>(v.value)
               ? std::get<int64_t>(v.value)
               : static_cast<int64_t>(std::get<uint64_t>(v.value));
  };
  switch (v.type) {
    case GgufType::kU8:
      Put<uint8_t>(out, static_cast<uint8_t>(as_u()));
      break;
    case GgufType::kI8:
      Put<int8_t>(out, static_cast<int8_t>(as_i()));
      break;
    case GgufType::kU16:
      Put<uint16_t>(out, static_cast<uint16_t>(as_u()));
      break;
    case GgufType::kI16:
      Put<int16_t>(out, static_cast<int16_t>(as_i()));
      break;
    case GgufType::kU32:
      Put<uint32_t>(out, static_cast<uint32_t>(as_u()));
      break;
    case GgufType::kI32:
      Put<int32_t>(out, static_cast<int32_t>(as_i()));
      break;
    case GgufType::kU64:
      Put<uint64_t>(out, as_u());
      break;
    case GgufType::kI64:
      Put<int64_t>(out, as_i());
      break;
    case GgufType::kF32:
      Put<float>(out, static_cast<float>(std::get<double>(v.value)));
      break;
    case GgufType::kF64:
      Put<double>(out, std::get<double>(v.value));
      break;
    case GgufType::kBool:
      Put<uint8_t>(out, std::get<bool>(v.value) ? 1 : 0);
      break;
    case GgufType::kString:
      PutString(out, std::get<std::string>(v.value));
      break;
    case GgufType::kArray:
      Put<uint32_t>(out, static_cast<uint32_t>(v.array_type));
      Put<uint64_t>(out, v.array().size());
      for (const GgufValue& item : v.array()) PutValue(out, item);
      break;
  }
}

}  // namespace

GgufWriter::~GgufWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(path_.c_str());
  }
}

void GgufWriter::AddKv(std::string key, GgufValue value) {
  if (key == "general.alignment") {
    if (auto* u = std::get_if<uint64_t>(&value.value); u && *u > 0 && (*u & (*u - 1)) == 0)
      alignment_ = *u;
  }
  kv_.emplace_back(std::move(key), std::move(value));
}

Status GgufWriter::DeclareTensor(std::string name, DType dtype, std::vector<int64_t> shape) {
  if (file_ != nullptr || next_ > 0) {
    return FailedPrecondition("GGUF writer: tensor '" + name + "' declared after Begin('" + path_ +
                              "') wrote the tensor infos");
  }
  const std::optional<uint32_t> type = GgmlTypeFromDType(dtype);
  if (!type) {
    return Unimplemented("GGUF writer: tensor '" + name + "' has dtype " + DTypeName(dtype) +
                         ", which GGUF cannot store");
  }
  if (shape.empty() || shape.size() > 4 ||
      std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d <= 0; })) {
    return InvalidArgument("GGUF writer: tensor '" + name + "' has shape " + ShapeToString(shape) +
                           ", expected 1 to 4 positive dimensions");
  }
  uint64_t numel = 1;
  for (int64_t d : shape) numel *= static_cast<uint64_t>(d);
  const std::optional<uint64_t> nbytes = DTypeBytes(dtype, numel);
  if (!nbytes) {
    return InvalidArgument("GGUF writer: tensor '" + name + "' shape " + ShapeToString(shape) +
                           " is not a whole number of " + DTypeName(dtype) + " blocks");
  }
  tensors_.push_back({std::move(name), dtype, std::move(shape), *type, *nbytes, nullptr});
  return Status::Ok();
}

Status GgufWriter::AddTensor(std::string name, const TensorView& view) {
  const std::optional<uint64_t> nbytes =
      DTypeBytes(view.dtype, static_cast<uint64_t>(view.numel()));
  if (nbytes && *nbytes != view.nbytes) {
    return InvalidArgument("GGUF writer: tensor '" + name + "' shape " + ShapeToString(view.shape) +
                           " x " + DTypeName(view.dtype) + " does not match its " +
                           std::to_string(view.nbytes) + " bytes");
  }
  CLOVER_TRY(DeclareTensor(std::move(name), view.dtype, view.shape));
  tensors_.back().data = view.data;
  return Status::Ok();
}

std::vector<uint8_t> GgufWriter::Header() const {
  std::vector<uint8_t> out;
  Put<uint32_t>(out, kGgufMagic);
  Put<uint32_t>(out, 3);
  Put<uint64_t>(out, tensors_.size());
  Put<uint64_t>(out, kv_.size());
  for (const auto& [key, value] : kv_) {
    PutString(out, key);
    Put<uint32_t>(out, static_cast<uint32_t>(value.type));
    PutValue(out, value);
  }
  uint64_t offset = 0;
  for (const Declared& t : tensors_) {
    PutString(out, t.name);
    Put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it)
      Put<uint64_t>(out, static_cast<uint64_t>(*it));
    Put<uint32_t>(out, t.ggml_type);
    Put<uint64_t>(out, offset);
    offset += Padded(t.nbytes);
  }
  out.resize(Padded(out.size()), 0);
  return out;
}

Status GgufWriter::WriteBytes(const void* data, uint64_t n) {
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) {
    return DataLoss("short write to '" + path_ + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

Status GgufWriter::Begin(const std::string& path) {
  if (file_ != nullptr || next_ > 0) {
    return FailedPrecondition("GGUF writer: Begin('" + path + "') after Begin('" + path_ + "')");
  }
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return NotFound("cannot create '" + path + "': " + std::strerror(errno));
  path_ = path;
  const std::vector<uint8_t> header = Header();
  return WriteBytes(header.data(), header.size());
}

Status GgufWriter::WriteTensor(const std::string& name, const void* data, uint64_t nbytes) {
  if (file_ == nullptr) {
    return FailedPrecondition("GGUF writer: tensor '" + name + "' written " +
                              (next_ == 0 ? "before Begin" : "after Finish of '" + path_ + "'"));
  }
  if (next_ == tensors_.size()) {
    return FailedPrecondition("'" + path_ + "': tensor '" + name + "' written after all " +
                              std::to_string(tensors_.size()) + " declared tensors");
  }
  const Declared& t = tensors_[next_];
  if (name != t.name) {
    return FailedPrecondition(
        "'" + path_ + "': tensor '" + name + "' written out of order: expected '" + t.name +
        "' (tensor " + std::to_string(next_ + 1) + " of " + std::to_string(tensors_.size()) + ")");
  }
  if (nbytes != t.nbytes) {
    return InvalidArgument("'" + path_ + "': tensor '" + name + "' written with " +
                           std::to_string(nbytes) + " bytes, expected " + std::to_string(t.nbytes) +
                           " (" + ShapeToString(t.shape) + " x " + DTypeName(t.dtype) + ")");
  }
  CLOVER_TRY(WriteBytes(data, nbytes));
  const std::vector<uint8_t> zeros(Padded(nbytes) - nbytes, 0);
  CLOVER_TRY(WriteBytes(zeros.data(), zeros.size()));
  ++next_;
  return Status::Ok();
}

Status GgufWriter::Finish() {
  if (file_ == nullptr) return FailedPrecondition("GGUF writer: Finish without Begin");
  if (next_ < tensors_.size()) {
    return FailedPrecondition("'" + path_ + "': Finish after " + std::to_string(next_) + " of " +
                              std::to_string(tensors_.size()) + " tensors; next expected '" +
                              tensors_[next_].name + "'");
  }
  std::string error;
  struct stat st {};
  const int fd = ::fileno(file_);
  if (std::fflush(file_) != 0 || ::fstat(fd, &st) != 0) {
    error = "cannot write '" + path_ + "': " + std::strerror(errno);
  } else if (st.st_size >= kEvictMinBytes) {
    if (::fdatasync(fd) != 0) {
      error = "cannot write '" + path_ + "' to disk: " + std::strerror(errno);
    } else {
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // advisory: the file is complete either way
    }
  }
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (error.empty() && !closed) error = "cannot close '" + path_ + "': " + std::strerror(errno);
  if (!error.empty()) return DataLoss(error);
  return Status::Ok();
}

Status GgufWriter::CheckHeldData() const {
  for (const Declared& t : tensors_) {
    if (t.data == nullptr) {
      return FailedPrecondition("GGUF writer: tensor '" + t.name +
                                "' was declared without data; stream it with Begin/WriteTensor");
    }
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> GgufWriter::Serialize() const {
  CLOVER_TRY(CheckHeldData());
  std::vector<uint8_t> out = Header();
  for (const Declared& t : tensors_) {
    const uint8_t* p = static_cast<const uint8_t*>(t.data);
    out.insert(out.end(), p, p + t.nbytes);
    out.resize(out.size() + Padded(t.nbytes) - t.nbytes, 0);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) {
  CLOVER_TRY(CheckHeldData());
  CLOVER_TRY(Begin(path));
  for (const Declared& t : tensors_) CLOVER_TRY(WriteTensor(t.name, t.data, t.nbytes));
  return Finish();
}

}  // namespace clover::io
