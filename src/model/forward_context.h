// ForwardContext and ForwardScratch: what the layer blocks of one forward call share.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "kernels/kernel_context.h"
#include "model/append_capture.h"
#include "model/config.h"
#include "model/preview_cache.h"
#include "model/sequence_state.h"

namespace clover::model {

// Receives named intermediate activations (llama.cpp names: "attn_norm", "l_out", ...; layer -1
// for model-level tensors), `rows` x `cols` row-major, for comparison with reference dumps.
using DebugHook = std::function<void(std::string_view name, int layer, const float* data,
                                     int64_t rows, int64_t cols)>;

// How GDN layers scan a group: chunked for more than one row (kAuto), or forced (tests).
enum class GdnScan { kAuto, kRecurrent, kChunked };

// Reusable buffers of a forward call; grow to the largest batch seen, never shrink.
class ForwardScratch {
 public:
  enum Slot {
    kHidden,
    kNormed,
    kMixer,
    kProjA,
    kProjB,
    kProjC,
    kProjD,
    kCore,
    kGated,
    kRouter,
    kExpertIn,
    kExpertGate,
    kExpertUp,
    kExpertOut,
    kSharedGate,
    kSharedUp,
    kSharedOut,
    kHeadIn,
    kPreviewK,  // preview attention: scratch KV pages (tail of the prefix + block rows)
    kPreviewV,
    kPreviewConv,  // preview GDN: copies of the committed conv / recurrent state
    kPreviewState,
    kPreviewBwdConv,  // preview GDN backward branch: conv output, gates, core output
    kPreviewBwdGates,
    kPreviewBwdCore,
    kReuseQkv,  // preview with a cache: the normed q/k/v and core output of every block row
    kReuseCore,
    kSlotCount
  };
  // Returns a buffer of at least `n` floats (contents unspecified).
  float* Get(Slot slot, int64_t n) {
    std::vector<float>& b = buffers_[slot];
    if (static_cast<int64_t>(b.size()) < n) b.resize(n);
    return b.data();
  }

 private:
  std::vector<float> buffers_[kSlotCount];
};

// The rows of one group inside the batch: rows [begin, begin + count). Append groups set
// `state` (written); preview groups set `committed` (read only, clover-spec.md I1).
struct GroupRows {
  SequenceState* state = nullptr;
  const SequenceState* committed = nullptr;
  int64_t begin = 0;
  int64_t count = 0;
  int64_t first_pos = 0;
  AppendCapture* capture = nullptr;  // append groups only: record for a later truncation
  // Preview groups with a cache: the pass holds only the live block rows (`count` of them) and
  // the layers read the other rows from the cache (clover-decoding.md §9.1).
  const PreviewPass* reuse = nullptr;
  bool preview() const { return committed != nullptr; }
};

// What the MoE layers of one pass report: per layer, how many distinct experts ran, and per
// preview group (in pass order) the coreset's kept experts (descending votes).
struct PassStats {
  std::vector<int> distinct_experts;                       // [layer], 0 for no MoE
  std::vector<std::vector<std::vector<int32_t>>> coreset;  // [group][layer]
};

struct ForwardContext {
  const kernels::KernelContext& kc;
  const ModelConfig& config;
  const std::vector<GroupRows>& groups;
  int64_t n_rows = 0;
  GdnScan gdn_scan = GdnScan::kAuto;
  const DebugHook* hook = nullptr;  // null when no hook is set
  // Preview groups (GroupRows::preview()) get bidirectional block attention, GDN on scratch
  // copies of the committed state (plus the backward scan when `preview_bidirectional`) and
  // coreset MoE. Append groups come first in a pass, so a preview group of a sequence that also
  // appends in the pass reads the state after that append, layer by layer.
  bool preview_bidirectional = false;
  PassStats* stats = nullptr;  // null: not collected

  // Calls `fn(begin, end)` over row ranges of [0, n) on the pool; rows are cheap, so tasks get at
  // least 16 of them.
  void ForRows(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const {
    kc.pool.ParallelFor(n, fn, 16);
  }

  void Dump(std::string_view name, int layer, const float* data, int64_t rows, int64_t cols) const {
    if (hook != nullptr) (*hook)(name, layer, data, rows, cols);
  }
};

}  // namespace clover::model
