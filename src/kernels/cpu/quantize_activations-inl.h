// The activation quantizer's loops over rows, scale groups and 32-element blocks, shared by the
// reference and the ISA versions. Textually included (no include guard, like quant_matmul-inl.h)
// by quantize.cc and by quantize_activations_<isa>.cc inside its ISA namespace, after it defines
//   float AbsMax(const float* v, int64_t n)      max |v[i]| over n (a multiple of 32) floats
//   Scale BroadcastScale(float id)                id as the ISA's float vector (or a float)
//   void QuantizeBlock(const float* v, Scale id, ActBlock& a)
// where QuantizeBlock writes a.q (v[i] * id rounded to nearest even, clamped to +-127) and a.sum
// for 32 floats.

void QuantizeActivations(const float* x, int64_t n_rows, int64_t x_stride, int64_t in,
                         ActBlock* out, int64_t scale_block) {
  const int64_t nb = in / kActBlockSize;
  const int64_t per_scale = scale_block / kActBlockSize;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * x_stride;
    for (int64_t s = 0; s < nb / per_scale; ++s) {
      const float* v = xr + s * scale_block;
      const float amax = AbsMax(v, scale_block);
      const float d = amax / 127.0f;
      const auto id = BroadcastScale(amax > 0.0f ? 127.0f / amax : 0.0f);
      for (int64_t b = 0; b < per_scale; ++b) {
        ActBlock& a = out[r * nb + s * per_scale + b];
        a.d = d;
        QuantizeBlock(v + b * kActBlockSize, id, a);
      }
    }
  }
}
