// safetensors: header parsing and validation, shard index resolution.
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace clover::io {
namespace {

using json = nlohmann::json;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Parses the header JSON; duplicate top-level keys are reported because nlohmann keeps only the
// last one silently.
Status ParseHeaderJson(std::string_view text, const std::string& label, json* out) {
  std::set<std::string> seen;
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second) duplicate = key;
    }
    return true;
  };
  try {
    *out = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {
    return DataLoss(label + ": malformed safetensors header JSON: " + e.what());
  }
  if (!duplicate.empty()) {
    return DataLoss(label + ": duplicate tensor " + Quote(duplicate) + " in safetensors header");
  }
  return Status::Ok();
}

// Reads a non-negative integer JSON value.
bool AsU64(const json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

Status ParseEntry(const std::string& label, const std::string& name, const json& entry,
                  const uint8_t* data, uint64_t data_size, SafetensorsTensor* out) {
  const std::string where = label + ": tensor " + Quote(name);
  if (!entry.is_object()) return DataLoss(where + ": header entry is not an object");
  auto dtype_it = entry.find("dtype");
  auto shape_it = entry.find("shape");
  auto offsets_it = entry.find("data_offsets");
  if (dtype_it == entry.end() || !dtype_it->is_string()) {
    return DataLoss(where + ": missing or non-string 'dtype'");
  }
  if (shape_it == entry.end() || !shape_it->is_array()) {
    return DataLoss(where + ": missing or non-array 'shape'");
  }
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
    return DataLoss(where + ": 'data_offsets' must be an array of 2 integers");
  }
  const std::string dtype_name = dtype_it->get<std::string>();
  const std::optional<DType> dtype = DTypeFromSafetensorsName(dtype_name);
  if (!dtype) return Unimplemented(where + ": unknown dtype " + Quote(dtype_name));
  if (shape_it->size() > 8) {
    return DataLoss(where + ": " + std::to_string(shape_it->size()) + " dimensions, at most 8 supported");
  }
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  for (const json& d : *shape_it) {
    uint64_t dim = 0;
    if (!AsU64(d, &dim) || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return DataLoss(where + ": shape entries must be non-negative integers, found " + d.dump());
    }
    if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / dim) {
      return DataLoss(where + ": element count of shape " + shape_it->dump() + " overflows");
    }
    numel *= dim;
    shape.push_back(static_cast<int64_t>(dim));
  }
  uint64_t begin = 0, end = 0;
  if (!AsU64((*offsets_it)[0], &begin) || !AsU64((*offsets_it)[1], &end)) {
    return DataLoss(where + ": data_offsets must be non-negative integers, found " + offsets_it->dump());
  }
  if (begin > end) {
    return DataLoss(where + ": data_offsets begin " + std::to_string(begin) + " > end " +
                    std::to_string(end));
  }
  if (end > data_size) {
    return OutOfRange(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") run past the data area of " + std::to_string(data_size) + " bytes");
  }
  const std::optional<uint64_t> expected = DTypeBytes(*dtype, numel);
  if (!expected || *expected != end - begin) {
    return DataLoss(where + ": shape " + ShapeToString(shape) + " x " + dtype_name + " needs " +
                    (expected ? std::to_string(*expected) : std::string("an overflowing number of")) +
                    " bytes, data_offsets span " + std::to_string(end - begin));
  }
  out->name = name;
  out->begin = begin;
  out->end = end;
  out->view.dtype = *dtype;
  out->view.shape = std::move(shape);
  out->view.data = data + begin;
  out->view.nbytes = end - begin;
  return Status::Ok();
}

Result<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<SafetensorsFile> SafetensorsFile::Parse(std::span<const uint8_t> bytes, const std::string& label) {
  const uint64_t size = bytes.size();
  if (size < 8) {
    return DataLoss(label + ": truncated safetensors file: " + std::to_string(size) +
                    " bytes, the 8-byte header length is missing");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > size - 8) {
    return DataLoss(label + ": header length " + std::to_string(header_len) +
                    " runs past the end of the file (" + std::to_string(size) + " bytes)");
  }
  if (header_len > kSafetensorsMaxHeaderBytes) {
    return ResourceExhausted(label + ": header length " + std::to_string(header_len) +
                             " exceeds the limit of " + std::to_string(kSafetensorsMaxHeaderBytes));
  }
  json header;
  CLOVER_TRY(ParseHeaderJson(
      std::string_view(reinterpret_cast<const char*>(bytes.data()) + 8, header_len), label, &header));
  if (!header.is_object()) return DataLoss(label + ": safetensors header is not a JSON object");

  SafetensorsFile file;
  file.label_ = label;
  const uint8_t* data = bytes.data() + 8 + header_len;
  const uint64_t data_size = size - 8 - header_len;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) return DataLoss(label + ": __metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) {
          return DataLoss(label + ": __metadata__ value " + Quote(m.key()) + " is not a string");
        }
        file.metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    SafetensorsTensor t;
    CLOVER_TRY(ParseEntry(label, it.key(), *it, data, data_size, &t));
    file.tensors_.push_back(std::move(t));
  }
  std::sort(file.tensors_.begin(), file.tensors_.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const SafetensorsTensor* last = nullptr;  // the non-empty tensor reaching furthest so far
  for (const SafetensorsTensor& t : file.tensors_) {
    if (t.begin == t.end) continue;
    if (last != nullptr && t.begin < last->end) {
      return DataLoss(label + ": tensors " + Quote(last->name) + " [" + std::to_string(last->begin) +
                      ", " + std::to_string(last->end) + ") and " + Quote(t.name) + " [" +
                      std::to_string(t.begin) + ", " + std::to_string(t.end) + ") overlap");
    }
    if (last == nullptr || t.end > last->end) last = &t;
  }
  for (size_t i = 0; i < file.tensors_.size(); ++i) file.index_[file.tensors_[i].name] = i;
  return file;
}

Result<std::shared_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> mapped, MappedFile::Open(path));
  CLOVER_ASSIGN_OR_RETURN(SafetensorsFile parsed, Parse(mapped->bytes(), path));
  auto file = std::make_shared<SafetensorsFile>(std::move(parsed));
  file->file_ = std::move(mapped);
  return file;
}

const SafetensorsTensor* SafetensorsFile::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Result<SafetensorsSet> SafetensorsSet::Open(const std::string& path) {
  namespace fs = std::filesystem;
  SafetensorsSet set;
  const bool is_index = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!is_index) {
    CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<SafetensorsFile> file, SafetensorsFile::Open(path));
    for (const SafetensorsTensor& t : file->tensors()) set.tensors_[t.name] = Entry{&t, file.get()};
    set.files_.push_back(std::move(file));
    return set;
  }
  CLOVER_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  json index;
  try {
    index = json::parse(text);
  } catch (const json::exception& e) {
    return DataLoss(path + ": malformed index JSON: " + e.what());
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return DataLoss(path + ": index has no 'weight_map' object");
  }
  const fs::path dir = fs::path(path).parent_path();
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  std::map<std::string, const SafetensorsFile*> shards;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it->is_string()) {
      return DataLoss(path + ": weight_map entry " + Quote(it.key()) + " is not a string");
    }
    const std::string shard = it->get<std::string>();
    if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..") {
      return DataLoss(path + ": weight_map entry " + Quote(it.key()) + " names shard " + Quote(shard) +
                      ", expected a file name in the index's folder");
    }
    weight_map[it.key()] = shard;
    if (shards.count(shard) == 0) {
      const std::string shard_path = (dir / shard).string();
      auto opened = SafetensorsFile::Open(shard_path);
      if (!opened.ok()) {
        return opened.status().WithContext(path + ": shard " + Quote(shard) + " of tensor " + Quote(it.key()));
      }
      shards[shard] = opened->get();
      set.files_.push_back(std::move(opened).value());
    }
  }
  for (const auto& [name, shard] : weight_map) {
    const SafetensorsFile* file = shards[shard];
    const SafetensorsTensor* t = file->Find(name);
    if (t == nullptr) {
      return NotFound(path + ": tensor " + Quote(name) + " is mapped to shard " + Quote(shard) +
                      " but that shard does not contain it");
    }
    set.tensors_[name] = Entry{t, file};
  }
  for (const auto& [shard, file] : shards) {
    for (const SafetensorsTensor& t : file->tensors()) {
      auto it = weight_map.find(t.name);
      if (it == weight_map.end() || it->second != shard) {
        return DataLoss(path + ": tensor " + Quote(t.name) + " in shard " + Quote(shard) +
                        " is not assigned to that shard by weight_map");
      }
    }
  }
  return set;
}

}  // namespace clover::io
