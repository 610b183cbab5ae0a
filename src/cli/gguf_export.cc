// Writing ModelWeights as a GGUF file with a per-tensor type policy (`clover convert`, `clover
// synth`).
#include "cli/gguf_export.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/progress.h"
#include "io/gguf_writer.h"
#include "kernels/quantize.h"
#include "kernels/ref/dequantize.h"
#include "model/tensor_map.h"

namespace clover::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Returns `want` when rows of `cols` hold whole blocks of it, else the finest format that fits
// (Q8_0 for rows of 32, else F32): llama.cpp's fallback for K formats on narrow matrices.
DType Fit(DType want, int64_t cols) {
  if (cols % DTypeBlockSize(want) == 0) return want;
  if (DTypeIsQuantized(want) && cols % 32 == 0) return DType::kQ8_0;
  return DTypeIsQuantized(want) ? DType::kF32 : want;
}

// The type of canonical tensor `name` (expert slices named without their index) under `policy`.
// Vectors, conv, the router, the shared-expert gate and GDN beta/alpha stay F32: they are small
// and steer routing and gating, where a quantization step costs most (docs/formats.md).
DType TargetType(TypePolicy policy, const std::string& name, const TensorView& v) {
  const bool small = v.shape.size() != 2 || name.find("ffn_gate_inp") != std::string::npos ||
                     name.find("ssm_beta") != std::string::npos ||
                     name.find("ssm_alpha") != std::string::npos ||
                     name.find("ssm_conv1d") != std::string::npos;
  if (small) return DType::kF32;
  const int64_t cols = v.shape.back();
  const bool expert = name.find("_exps") != std::string::npos;
  switch (policy) {
    case TypePolicy::kF32:
      return DType::kF32;
    case TypePolicy::kBF16:
      return DType::kBF16;
    case TypePolicy::kQ8_0:
      return Fit(DType::kQ8_0, cols);
    case TypePolicy::kQ4_K_M: {
      // As llama.cpp's Q4_K_M: 6 bits where errors reach the output most directly.
      const bool wide = EndsWith(name, "output") || EndsWith(name, "token_embd") ||
                        EndsWith(name, "attn_v") || name.find("ffn_down") != std::string::npos;
      return Fit(wide ? DType::kQ6_K : DType::kQ4_K, cols);
    }
    case TypePolicy::kMixed:
      return Fit(expert ? DType::kQ4_K : DType::kQ8_0, cols);
  }
  return DType::kF32;
}

// The GGUF name of canonical tensor `name`.
std::string GgufName(const std::string& name) {
  if (EndsWith(name, "ssm_dt") || EndsWith(name, "ssm_dt_bwd")) return name + ".bias";
  if (EndsWith(name, "ssm_a") || EndsWith(name, "ssm_a_bwd") || EndsWith(name, "ssm_mix_bwd"))
    return name;
  return name + ".weight";
}

// Writes `src` re-typed to `dtype` into `dst` (DTypeBytes(dtype, numel) bytes), row by row
// through f32; a tensor already of `dtype` is copied as is.
Status Retype(const TensorView& src, DType dtype, uint8_t* dst, const std::string& name) {
  if (src.dtype == dtype) {
    std::memcpy(dst, src.data, src.nbytes);
    return Status::Ok();
  }
  const int64_t rows = src.rows(), cols = src.cols();
  const uint64_t src_row = src.row_bytes();
  const uint64_t dst_row = *DTypeBytes(dtype, static_cast<uint64_t>(cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    Status s = kernels::ref::DequantizeRow(src.dtype, src.bytes() + r * src_row, cols, row.data());
    if (!s.ok()) return Status(s.code(), name + ": " + s.message());
    s = kernels::QuantizeRow(dtype, row.data(), cols, dst + r * dst_row);
    if (!s.ok()) return Status(s.code(), name + ": " + s.message());
  }
  return Status::Ok();
}

// One output tensor: the canonical views it is made of (several for stacked experts).
struct OutTensor {
  std::string name;
  std::vector<TensorView> parts;
};

// Groups the canonical tensors into output tensors: per-expert slices "X.{e}" stack into X.
std::vector<OutTensor> OutputTensors(const model::ModelWeights& w) {
  std::vector<OutTensor> out;
  std::map<std::string, size_t> index;
  model::ForEachCanonicalTensor(w, [&](const std::string& name, const TensorView& v) {
    std::string base = name;
    if (const size_t dot = name.rfind('.');
        dot != std::string::npos && name.find("_exps.", 0) != std::string::npos)
      base = name.substr(0, dot);
    auto [it, added] = index.emplace(base, out.size());
    if (added) out.push_back({base, {}});
    out[it->second].parts.push_back(v);
  });
  return out;
}

// The part of the model (gguf_export.h ModelPartFn) that canonical tensor `name` belongs to:
// 1 + i for "blk.{i}.*", else 0.
int PartOf(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return 0;
  return 1 + std::stoi(name.substr(4));
}

// The `<arch>.*` hyper-parameter keys of architecture.md §4 (as ConfigFromGguf reads them).
void AddHparams(const model::ModelConfig& c, const std::string& arch, io::GgufWriter& g) {
  const std::string p = arch + ".";
  auto u32 = [&](const std::string& key, int64_t v) {
    g.AddKv(p + key, io::GgufValue::U32(static_cast<uint32_t>(v)));
  };
  g.AddKv("general.architecture", io::GgufValue::String(arch));
  u32("block_count", c.n_layers);
  u32("context_length", c.max_context);
  u32("embedding_length", c.hidden);
  u32("attention.head_count", c.n_head);
  u32("attention.head_count_kv", c.n_head_kv);
  u32("attention.key_length", c.head_dim);
  u32("attention.value_length", c.head_dim);
  g.AddKv(p + "rope.freq_base", io::GgufValue::F32(static_cast<float>(c.rope_theta)));
  u32("rope.dimension_count", c.rope_dim);
  if (!c.rope_sections.empty()) {
    std::vector<io::GgufValue> s;
    for (size_t i = 0; i < 4; ++i)
      s.push_back(io::GgufValue::I32(i < c.rope_sections.size() ? c.rope_sections[i] : 0));
    g.AddKv(p + "rope.dimension_sections", io::GgufValue::Array(io::GgufType::kI32, std::move(s)));
  }
  g.AddKv(p + "attention.layer_norm_rms_epsilon", io::GgufValue::F32(c.rms_eps));
  u32("expert_count", c.n_experts);
  u32("expert_used_count", c.top_k);
  u32("expert_feed_forward_length", c.expert_ffn);
  if (c.shared_ffn > 0) {
    u32("expert_shared_feed_forward_length", c.shared_ffn);
    // llama.cpp's qwen35moe has no such key; clover_moe files carry it (clover-spec.md §1).
    if (arch == "clover_moe") u32("expert_shared_count", c.n_shared_experts);
  }
  u32("ssm.conv_kernel", c.conv_kernel);
  u32("ssm.state_size", c.dk);
  u32("ssm.group_count", c.hk);
  u32("ssm.time_step_rank", c.hv);
  u32("ssm.inner_size", int64_t{c.hv} * c.dv);
  u32("full_attention_interval", c.full_attention_interval);
  u32("vocab_size", c.vocab_size);
  if (c.mask_token_id) u32("mask_token_id", *c.mask_token_id);
}

// The config's token ids under the `tokenizer.ggml.*` keys ConfigFromGguf reads back (GGUF holds
// one eos id: the first).
tokenizer::GgufKvList TokenIdKv(const model::ModelConfig& c) {
  tokenizer::GgufKvList kv;
  auto add = [&](const char* key, const std::optional<int64_t>& id) {
    if (id) kv.emplace_back(key, io::GgufValue::U32(static_cast<uint32_t>(*id)));
  };
  add("tokenizer.ggml.bos_token_id", c.bos_token_id);
  if (!c.eos_token_ids.empty()) add("tokenizer.ggml.eos_token_id", c.eos_token_ids.front());
  add("tokenizer.ggml.padding_token_id", c.pad_token_id);
  add("tokenizer.ggml.mask_token_id", c.mask_token_id);
  return kv;
}

}  // namespace

Result<TypePolicy> TypePolicyFromName(const std::string& name) {
  static const std::map<std::string, TypePolicy> kPolicies = {
      {"f32", TypePolicy::kF32},       {"bf16", TypePolicy::kBF16},   {"q8_0", TypePolicy::kQ8_0},
      {"q4_k_m", TypePolicy::kQ4_K_M}, {"mixed", TypePolicy::kMixed},
  };
  auto it = kPolicies.find(name);
  if (it == kPolicies.end())
    return InvalidArgument("--type: '" + name + "', expected f32, bf16, q8_0, q4_k_m or mixed");
  return it->second;
}

Status WriteModelGguf(const model::ModelWeights& w, TypePolicy policy, const std::string& arch,
                      const std::string& name, const std::string& path,
                      const tokenizer::GgufKvList& tokenizer_kv) {
  return WriteModelGguf(
      w, [&w](int) -> Result<const model::ModelWeights*> { return &w; }, policy, arch, name, path,
      tokenizer_kv);
}

Status WriteModelGguf(const model::ModelWeights& layout, const ModelPartFn& parts,
                      TypePolicy policy, const std::string& arch, const std::string& name,
                      const std::string& path, const tokenizer::GgufKvList& tokenizer_kv) {
  if (arch != "qwen35moe" && arch != "clover_moe")
    return InvalidArgument("--arch: '" + arch + "', expected qwen35moe or clover_moe");
  io::GgufWriter g;
  AddHparams(layout.config, arch, g);
  g.AddKv("general.name", io::GgufValue::String(name));
  const tokenizer::GgufKvList ids = TokenIdKv(layout.config);
  std::set<std::string> written;
  for (const auto& [key, value] : ids) {
    g.AddKv(key, value);
    written.insert(key);
  }
  for (const auto& [key, value] : tokenizer_kv)
    if (!written.contains(key)) g.AddKv(key, value);
  // Every tensor is declared before any data: the header holds their shapes and offsets.
  const std::vector<OutTensor> tensors = OutputTensors(layout);
  std::vector<DType> dtypes;
  uint64_t total_bytes = 0;
  for (const OutTensor& t : tensors) {
    const TensorView& first = t.parts.front();
    dtypes.push_back(TargetType(policy, t.name, first));
    std::vector<int64_t> shape = first.shape;
    if (t.parts.size() > 1) shape.insert(shape.begin(), static_cast<int64_t>(t.parts.size()));
    CLOVER_TRY(g.DeclareTensor(GgufName(t.name), dtypes.back(), shape));
    total_bytes +=
        *DTypeBytes(dtypes.back(), static_cast<uint64_t>(first.numel())) * t.parts.size();
  }
  CLOVER_TRY(g.Begin(path));
  // One buffer, grown to the largest re-typed tensor: the only copy of output data in memory.
  std::vector<uint8_t> buffer;
  std::map<std::string, OutTensor> part_tensors;
  int part = -1;
  uint64_t done = 0;
  Progress progress("write", total_bytes);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const OutTensor& t = tensors[i];
    if (PartOf(t.name) != part) {
      part = PartOf(t.name);
      CLOVER_ASSIGN_OR_RETURN(const model::ModelWeights* pw, parts(part));
      part_tensors.clear();
      for (OutTensor& o : OutputTensors(*pw))
        if (PartOf(o.name) == part) part_tensors.emplace(o.name, std::move(o));
    }
    auto found = part_tensors.find(t.name);
    if (found == part_tensors.end() || found->second.parts.size() != t.parts.size() ||
        found->second.parts.front().shape != t.parts.front().shape) {
      return Internal("GGUF export: part " + std::to_string(part) + " does not hold tensor '" +
                      t.name + "' as the layout declares it");
    }
    const std::vector<TensorView>& src = found->second.parts;
    const DType dtype = dtypes[i];
    const uint64_t part_bytes = *DTypeBytes(dtype, static_cast<uint64_t>(src.front().numel()));
    const uint64_t nbytes = part_bytes * src.size();
    if (src.size() == 1 && src.front().dtype == dtype) {
      CLOVER_TRY(
          g.WriteTensor(GgufName(t.name), src.front().data, nbytes));  // straight from the source
    } else {
      buffer.resize(nbytes);
      for (size_t e = 0; e < src.size(); ++e)
        CLOVER_TRY(Retype(src[e], dtype, buffer.data() + e * part_bytes, t.name));
      CLOVER_TRY(g.WriteTensor(GgufName(t.name), buffer.data(), nbytes));
    }
    done += nbytes;
    progress.Update(done);
  }
  progress.Finish();
  return g.Finish();
}

}  // namespace clover::cli
