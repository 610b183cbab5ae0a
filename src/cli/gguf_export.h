// Writing ModelWeights as a GGUF file (`clover convert`, `clover synth`): canonical tensors under
// their GGUF names, experts stacked, each tensor re-typed by a --type policy (docs/formats.md).
#pragma once

#include <functional>
#include <string>

#include "core/status.h"
#include "model/weights.h"
#include "tokenizer/gguf_tokenizer_writer.h"

namespace clover::cli {

// The per-tensor type policies of --type.
enum class TypePolicy { kF32, kBF16, kQ8_0, kQ4_K_M, kMixed };

inline constexpr const char* kTypePolicyHelp =
    "f32 | bf16 | q8_0 | q4_k_m (Q4_K, Q6_K for head/embeddings/attn_v/ffn_down) | mixed "
    "(experts Q4_K, other matrices Q8_0); norms, router, gates, conv stay F32";

// Returns the policy named `name` (f32, bf16, q8_0, q4_k_m, mixed); errors name --type.
Result<TypePolicy> TypePolicyFromName(const std::string& name);

// Writes `w` to `path` as a GGUF of architecture `arch` (qwen35moe or clover_moe) with the
// `<arch>.*` hyper-parameter keys, the config's bos/eos/padding/mask ids, `general.name` = `name`
// and `tokenizer_kv` (tokenizer metadata; an id key the config already set is left out, so the
// file reads back as the config the engine loaded), streaming tensor by tensor: memory beyond `w`
// is the largest re-typed tensor (tensors that keep their type need none).
Status WriteModelGguf(const model::ModelWeights& w, TypePolicy policy, const std::string& arch,
                      const std::string& name, const std::string& path,
                      const tokenizer::GgufKvList& tokenizer_kv = {});

// The data of a model given part by part, so that only one part need be in memory: part 0 holds
// the embeddings, final norm and head, part 1 + i layer i. Returns weights that hold part `p`'s
// tensors with the layout's shapes (other tensors may be empty), valid until the next call.
// Parts are asked for in increasing order.
using ModelPartFn = std::function<Result<const model::ModelWeights*>(int p)>;

// As above for a model whose tensor names, shapes and dtypes are `layout`'s (its data is not
// read) and whose data comes from `parts`.
Status WriteModelGguf(const model::ModelWeights& layout, const ModelPartFn& parts,
                      TypePolicy policy, const std::string& arch, const std::string& name,
                      const std::string& path, const tokenizer::GgufKvList& tokenizer_kv = {});

}  // namespace clover::cli
