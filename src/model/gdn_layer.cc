// GDN layer: projections over the whole batch, conv + delta rule per group, gated norm, out_proj.
#include "model/gdn_layer.h"

#include <algorithm>
#include <cmath>

#include "kernels/delta_rule.h"
#include "kernels/matmul.h"
#include "kernels/ref/activations.h"
#include "kernels/ref/causal_conv.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"
#include "model/preview_gdn.h"

namespace clover::model {

kernels::DeltaRuleArgs GdnDeltaRuleArgs(const ModelConfig& cfg, int64_t rows, const float* qkv,
                                        const float* g, const float* beta, int64_t gate_stride,
                                        float* state, float* out) {
  kernels::DeltaRuleArgs args;
  args.hk = cfg.hk;
  args.hv = cfg.hv;
  args.dk = cfg.dk;
  args.dv = cfg.dv;
  args.n_rows = rows;
  args.q = qkv;
  args.k = qkv + cfg.key_dim();
  args.v = qkv + 2 * cfg.key_dim();
  args.qk_stride = cfg.conv_dim();
  args.v_stride = cfg.conv_dim();
  args.g = g;
  args.beta = beta;
  args.gate_stride = gate_stride;
  args.state = state;
  args.out = out;
  args.out_stride = cfg.value_dim();
  return args;
}

void GdnScanRows(const ForwardContext& fc, const GdnWeights& w, int64_t rows, const float* mixed,
                 int64_t mixed_stride, const float* beta, const float* g, int64_t gate_stride,
                 float* conv_state, float* recurrent, float* qkv, float* core) {
  const ModelConfig& cfg = fc.config;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t key_dim = cfg.key_dim();
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(cfg.dk));
  fc.ForRows(rows, [&](int64_t t0, int64_t t1) {
    kernels::ref::CausalConvSiluRows(mixed, mixed_stride, t0, t1, conv_dim, cfg.conv_kernel,
                                     w.conv.f32(), conv_state, qkv, conv_dim);
    for (int64_t t = t0; t < t1; ++t) {
      float* row = qkv + t * conv_dim;
      for (int h = 0; h < cfg.hk; ++h) {
        kernels::ref::L2Norm(row + h * cfg.dk, cfg.dk, cfg.rms_eps, q_scale);
        kernels::ref::L2Norm(row + key_dim + h * cfg.dk, cfg.dk, cfg.rms_eps, 1.0f);
      }
    }
  });
  kernels::ref::CausalConvShiftState(mixed, mixed_stride, rows, conv_dim, cfg.conv_kernel,
                                     conv_state);
  const kernels::DeltaRuleArgs args =
      GdnDeltaRuleArgs(cfg, rows, qkv, g, beta, gate_stride, recurrent, core);
  const bool chunked =
      fc.gdn_scan == GdnScan::kChunked || (fc.gdn_scan == GdnScan::kAuto && rows > 1);
  if (chunked) {
    kernels::DeltaRuleChunked(fc.kc, args);
  } else {
    kernels::DeltaRuleRecurrent(fc.kc, args);
  }
}

void GdnForward(const ForwardContext& fc, int layer, const GdnWeights& w, const float* x,
                float* out, ForwardScratch& scratch) {
  const ModelConfig& cfg = fc.config;
  const kernels::KernelContext& kc = fc.kc;
  const int64_t n = fc.n_rows;
  const int64_t hidden = cfg.hidden;
  const int64_t conv_dim = cfg.conv_dim();
  const int64_t value_dim = cfg.value_dim();
  const int hv = cfg.hv;

  float* mixed = scratch.Get(ForwardScratch::kProjA, n * conv_dim);
  float* z = scratch.Get(ForwardScratch::kProjB, n * value_dim);
  float* b = scratch.Get(ForwardScratch::kProjC, n * hv);
  float* a = scratch.Get(ForwardScratch::kProjD, n * hv);
  kernels::MatMul(kc, x, n, hidden, w.qkv, mixed, conv_dim);
  kernels::MatMul(kc, x, n, hidden, w.z, z, value_dim);
  kernels::MatMul(kc, x, n, hidden, w.beta, b, hv);
  kernels::MatMul(kc, x, n, hidden, w.alpha, a, hv);

  float* conv_out = scratch.Get(ForwardScratch::kCore, n * conv_dim);
  float* core = scratch.Get(ForwardScratch::kGated, n * value_dim);
  const float* dt_bias = w.dt_bias.f32();
  const float* ssm_a = w.a.f32();
  for (int64_t r = 0; r < n; ++r) {
    for (int h = 0; h < hv; ++h) {
      const float bt = b[r * hv + h];
      const float at = a[r * hv + h];
      b[r * hv + h] = kernels::ref::Sigmoid(bt);                           // beta
      a[r * hv + h] = ssm_a[h] * kernels::ref::Softplus(at + dt_bias[h]);  // log-decay g
    }
  }
  const int64_t conv_state_floats = int64_t{cfg.conv_kernel - 1} * conv_dim;
  const int64_t recurrent_floats = int64_t{hv} * cfg.dk * cfg.dv;
  for (const GroupRows& g : fc.groups) {
    // A preview scans from copies of the committed states (clover-spec.md I1).
    float* conv_state = nullptr;
    float* recurrent = nullptr;
    if (g.preview()) {
      conv_state = scratch.Get(ForwardScratch::kPreviewConv, conv_state_floats);
      recurrent = scratch.Get(ForwardScratch::kPreviewState, recurrent_floats);
      const float* cs = g.committed->conv_state(layer);
      const float* rs = g.committed->recurrent_state(layer);
      std::copy(cs, cs + conv_state_floats, conv_state);
      std::copy(rs, rs + recurrent_floats, recurrent);
    } else {
      conv_state = g.state->conv_state(layer);
      recurrent = g.state->recurrent_state(layer);
    }
    if (g.reuse != nullptr) {
      GdnPreviewReuse(fc, layer, w, g, x, mixed, b, a, conv_state, recurrent, conv_out, core,
                      scratch);
      continue;
    }
    GdnRowCapture* capture = g.capture != nullptr ? &g.capture->layers[layer] : nullptr;
    if (capture != nullptr) {
      capture->conv_before.assign(conv_state, conv_state + conv_state_floats);
      capture->recurrent_before.assign(recurrent, recurrent + recurrent_floats);
      const float* pre = mixed + g.begin * conv_dim;
      capture->pre_conv.assign(pre, pre + g.count * conv_dim);
    }
    GdnScanRows(fc, w, g.count, mixed + g.begin * conv_dim, conv_dim, b + g.begin * hv,
                a + g.begin * hv, hv, conv_state, recurrent, conv_out + g.begin * conv_dim,
                core + g.begin * value_dim);
    if (capture != nullptr) {
      const float* qkv = conv_out + g.begin * conv_dim;
      capture->qkv.assign(qkv, qkv + g.count * conv_dim);
      capture->gate.assign(a + g.begin * hv, a + (g.begin + g.count) * hv);
      capture->beta.assign(b + g.begin * hv, b + (g.begin + g.count) * hv);
    }
  }
  fc.Dump("gdn_core_out", layer, core, n, value_dim);
  const bool any_preview =
      std::any_of(fc.groups.begin(), fc.groups.end(), [](const GroupRows& g) { return g.preview(); });
  if (any_preview && fc.preview_bidirectional && !w.conv_bwd.empty()) {
    fc.Dump("gdn_qkv_normed", layer, conv_out, n, conv_dim);
    GdnPreviewBackward(fc, layer, w, x, mixed, conv_out, core, scratch);
    fc.Dump("gdn_mixed_core_out", layer, core, n, value_dim);
  }

  fc.ForRows(n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      for (int h = 0; h < hv; ++h) {
        float* o = core + r * value_dim + h * cfg.dv;
        kernels::ref::GatedRmsNorm(o, z + r * value_dim + h * cfg.dv, w.norm.f32(), cfg.dv,
                                   cfg.rms_eps, o);
      }
    }
  });
  kernels::MatMul(kc, core, n, value_dim, w.out, out, hidden);
  fc.Dump("linear_attn_out", layer, out, n, hidden);
}

}  // namespace clover::model
