// The ISA-independent half of the gated delta-rule step of one head (DeltaStepFn,
// kernel_table.h), over column stripes of four vectors: the stripe's u and o stay in registers,
// and its dk rows (32 KiB at dk 128 on 512-bit vectors) stay in L1 from the first pass over S to
// the second. Masked loads and stores keep the last stripe inside S, v and o for any dv.
//
// Textually included by gemm_<isa>.cc inside its ISA namespace, beside gemm-inl.h, after the file
// defines `GemmVec` (gemm-inl.h lists its members) with `Mul(a, b)` besides.

void DeltaStep(float* S, int64_t dk, int64_t dv, const float* q, const float* k, const float* v,
               float decay, float beta, float* o) {
  using V = GemmVec;
  constexpr int kVecs = 4;
  constexpr int64_t kStripe = V::kLanes * kVecs;
  const typename V::Reg decay_v = V::Broadcast(decay);
  const typename V::Reg minus_decay_v = V::Broadcast(-decay);
  const typename V::Reg beta_v = V::Broadcast(beta);
  for (int64_t j0 = 0; j0 < dv; j0 += kStripe) {
    typename V::Mask mask[kVecs];
    for (int c = 0; c < kVecs; ++c) mask[c] = V::MaskOf(dv - j0 - V::kLanes * c);
    typename V::Reg u[kVecs], out[kVecs];
    for (int c = 0; c < kVecs; ++c) u[c] = out[c] = V::Zero();
    for (int64_t i = 0; i < dk; ++i) {
      const typename V::Reg ki = V::Broadcast(k[i]);
      const float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c)
        u[c] = V::Fma(ki, V::Load(row + V::kLanes * c, mask[c]), u[c]);
    }
    for (int c = 0; c < kVecs; ++c) {  // u = delta = beta (v - decay u)
      const typename V::Reg vj = V::Load(v + j0 + V::kLanes * c, mask[c]);
      u[c] = V::Mul(beta_v, V::Fma(minus_decay_v, u[c], vj));
    }
    for (int64_t i = 0; i < dk; ++i) {
      const typename V::Reg ki = V::Broadcast(k[i]);
      const typename V::Reg qi = V::Broadcast(q[i]);
      float* row = S + i * dv + j0;
      for (int c = 0; c < kVecs; ++c) {
        const typename V::Reg s =
            V::Fma(ki, u[c], V::Mul(decay_v, V::Load(row + V::kLanes * c, mask[c])));
        V::Store(row + V::kLanes * c, mask[c], s);
        out[c] = V::Fma(qi, s, out[c]);
      }
    }
    for (int c = 0; c < kVecs; ++c) V::Store(o + j0 + V::kLanes * c, mask[c], out[c]);
  }
}
