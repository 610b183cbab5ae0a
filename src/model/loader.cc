// Model path resolution, file opening and canonical mapping.
#include "model/loader.h"

#include <filesystem>

#include "io/safetensors.h"
#include "model/config_loader.h"

namespace clover::model {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status FillHfConfigPaths(const fs::path& dir, const std::string& origin, ModelFiles* files) {
  const fs::path config = dir / "config.json";
  if (!fs::is_regular_file(config)) {
    return NotFound(origin + ": config.json is missing (expected at '" + config.string() + "')");
  }
  files->config_path = config.string();
  const fs::path gen = dir / "generation_config.json";
  if (fs::is_regular_file(gen)) files->generation_config_path = gen.string();
  return Status::Ok();
}

// Fills data_files (and index_path) for a safetensors path: one file or an index.
Status FillSafetensors(const std::string& path, ModelFiles* files) {
  files->format = ModelFormat::kSafetensors;
  if (EndsWith(path, ".json")) files->index_path = path;
  CLOVER_ASSIGN_OR_RETURN(io::SafetensorsSet probe, io::SafetensorsSet::Open(path));
  for (const auto& f : probe.files()) files->data_files.push_back(f->label());
  return Status::Ok();
}

// Resolves diffusion.preview_gdn: bidirectional iff the preview tensors exist, unless configured.
Status ResolvePreviewGdn(OpenedModel* m) {
  ModelConfig& c = m->config;
  int first_gdn = -1;
  for (int i = 0; i < c.n_layers && first_gdn < 0; ++i) {
    if (c.layer_kinds[i] == LayerKind::kGatedDeltaNet) first_gdn = i;
  }
  bool has = false;
  if (first_gdn >= 0) {
    const std::string probe = m->scheme == NameScheme::kGguf
                                  ? "blk." + std::to_string(first_gdn) + ".ssm_mix_bwd"
                                  : "layers." + std::to_string(first_gdn) + ".linear_attn.preview_mix";
    for (const auto& [name, t] : m->tensors) {
      if (EndsWith(name, probe) && (m->scheme == NameScheme::kGguf ? name == probe : name.rfind("model.", 0) == 0)) {
        has = true;
        break;
      }
    }
  }
  c.has_preview_tensors = has;
  if (!c.diffusion.preview_gdn) {
    c.diffusion.preview_gdn = has ? PreviewGdn::kBidirectional : PreviewGdn::kCausal;
  } else if (*c.diffusion.preview_gdn == PreviewGdn::kBidirectional && !has) {
    return FailedPrecondition((m->files.config_path.empty() ? m->files.data_files[0] : m->files.config_path) +
                              ": diffusion.preview_gdn is \"bidirectional\" but the model has no preview tensors");
  }
  return Status::Ok();
}

}  // namespace

Result<ModelFiles> ResolveModelPath(const std::string& path) {
  ModelFiles files;
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) return NotFound("model path '" + path + "' does not exist");
  if (fs::is_regular_file(p, ec)) {
    if (EndsWith(path, ".gguf")) {
      files.format = ModelFormat::kGguf;
      files.data_files = {path};
      return files;
    }
    if (EndsWith(path, ".safetensors") || EndsWith(path, ".safetensors.index.json")) {
      CLOVER_TRY(FillHfConfigPaths(p.parent_path().empty() ? fs::path(".") : p.parent_path(), path, &files));
      CLOVER_TRY(FillSafetensors(path, &files));
      return files;
    }
    return InvalidArgument("model path '" + path + "': expected a .gguf, .safetensors or "
                           "model.safetensors.index.json file, or a directory");
  }
  if (!fs::is_directory(p, ec)) return InvalidArgument("model path '" + path + "' is neither a file nor a directory");
  std::vector<std::string> safetensors, ggufs;
  for (const auto& entry : fs::directory_iterator(p, ec)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (EndsWith(name, ".safetensors")) safetensors.push_back(entry.path().string());
    if (EndsWith(name, ".gguf")) ggufs.push_back(entry.path().string());
  }
  const fs::path index = p / "model.safetensors.index.json";
  if (fs::is_regular_file(index) || !safetensors.empty()) {
    CLOVER_TRY(FillHfConfigPaths(p, path, &files));
    if (fs::is_regular_file(index)) {
      CLOVER_TRY(FillSafetensors(index.string(), &files));
    } else if (fs::is_regular_file(p / "model.safetensors")) {
      CLOVER_TRY(FillSafetensors((p / "model.safetensors").string(), &files));
    } else if (safetensors.size() == 1) {
      CLOVER_TRY(FillSafetensors(safetensors[0], &files));
    } else {
      return InvalidArgument("model directory '" + path + "' holds " + std::to_string(safetensors.size()) +
                             " .safetensors files but no model.safetensors.index.json");
    }
    return files;
  }
  if (ggufs.size() == 1) {
    files.format = ModelFormat::kGguf;
    files.data_files = ggufs;
    return files;
  }
  if (ggufs.size() > 1) {
    return InvalidArgument("model directory '" + path + "' holds " + std::to_string(ggufs.size()) +
                           " .gguf files; name the one to load");
  }
  return NotFound("model directory '" + path + "' holds no config.json + .safetensors and no .gguf file");
}

Result<OpenedModel> OpenModel(const std::string& path) {
  OpenedModel m;
  CLOVER_ASSIGN_OR_RETURN(m.files, ResolveModelPath(path));
  if (m.files.format == ModelFormat::kGguf) {
    m.scheme = NameScheme::kGguf;
    CLOVER_ASSIGN_OR_RETURN(std::shared_ptr<io::GgufFile> gguf, io::GgufFile::Open(m.files.data_files[0]));
    CLOVER_ASSIGN_OR_RETURN(m.config, ConfigFromGguf(*gguf));
    for (const io::GgufTensor& t : gguf->tensors()) m.tensors[t.name] = SourceTensor{t.view, gguf->label()};
    m.gguf = gguf;
    m.holders.push_back(gguf);
  } else {
    m.scheme = NameScheme::kHf;
    CLOVER_ASSIGN_OR_RETURN(m.config, LoadHfConfig(m.files.config_path));
    if (!m.files.generation_config_path.empty()) {
      CLOVER_TRY(ApplyGenerationConfig(m.files.generation_config_path, &m.config));
    }
    const std::string source = m.files.index_path.empty() ? m.files.data_files[0] : m.files.index_path;
    CLOVER_ASSIGN_OR_RETURN(io::SafetensorsSet set, io::SafetensorsSet::Open(source));
    for (const auto& [name, e] : set.tensors()) m.tensors[name] = SourceTensor{e.tensor->view, e.file->label()};
    for (const auto& f : set.files()) m.holders.push_back(f);
  }
  CLOVER_TRY(ResolvePreviewGdn(&m));
  return m;
}

Result<ModelWeights> BuildWeights(const OpenedModel& opened, MapReport* report) {
  ModelWeights w;
  w.config = opened.config;
  for (const auto& h : opened.holders) w.storage->Retain(h);
  CLOVER_ASSIGN_OR_RETURN(MapReport r, MapTensors(opened.tensors, opened.scheme, &w));
  if (report != nullptr) *report = std::move(r);
  return w;
}

Result<ModelWeights> LoadModel(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(OpenedModel opened, OpenModel(path));
  return BuildWeights(opened);
}

Result<ModelConfig> LoadModelConfig(const std::string& path) {
  CLOVER_ASSIGN_OR_RETURN(OpenedModel opened, OpenModel(path));
  return std::move(opened.config);
}

}  // namespace clover::model
