// Gated delta rule: recurrent vs a naive double recurrence, chunked vs recurrent (§3.2).
#include "kernels/delta_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/kernel_test_util.h"
#include "kernels/ref/l2_norm.h"

namespace clover::kernels {
namespace {

using testing::AvailableIsas;
using testing::MaxRelError;
using testing::RandomVector;

struct Inputs {
  int hk, hv, dk, dv;
  int64_t T;
  std::vector<float> q, k, v, g, beta, state;
};

Inputs MakeInputs(int hk, int hv, int dk, int dv, int64_t T, uint64_t seed) {
  Inputs in{hk, hv, dk, dv, T, {}, {}, {}, {}, {}, {}};
  in.q = RandomVector(T * hk * dk, seed);
  in.k = RandomVector(T * hk * dk, seed + 1);
  in.v = RandomVector(T * hv * dv, seed + 2);
  for (int64_t t = 0; t < T; ++t)
    for (int h = 0; h < hk; ++h) {
      ref::L2Norm(&in.q[(t * hk + h) * dk], dk, 1e-6f, 1.0f / std::sqrt(float(dk)));
      ref::L2Norm(&in.k[(t * hk + h) * dk], dk, 1e-6f, 1.0f);
    }
  std::vector<float> gr = RandomVector(T * hv, seed + 3), br = RandomVector(T * hv, seed + 4);
  for (size_t i = 0; i < gr.size(); ++i) {
    in.g.push_back(-1.5f * std::abs(gr[i]));  // decays e^g in (0.22, 0.93)
    in.beta.push_back(0.5f + 0.5f * br[i]);   // (0, 1)
  }
  in.state = RandomVector(int64_t{hv} * dk * dv, seed + 5, 0.5f);
  return in;
}

DeltaRuleArgs ArgsFor(Inputs& in, int64_t begin, int64_t count, std::vector<float>& state,
                      std::vector<float>& out) {
  DeltaRuleArgs a;
  a.hk = in.hk;
  a.hv = in.hv;
  a.dk = in.dk;
  a.dv = in.dv;
  a.n_rows = count;
  a.q = in.q.data() + begin * in.hk * in.dk;
  a.k = in.k.data() + begin * in.hk * in.dk;
  a.v = in.v.data() + begin * in.hv * in.dv;
  a.qk_stride = in.hk * in.dk;
  a.v_stride = in.hv * in.dv;
  a.g = in.g.data() + begin * in.hv;
  a.beta = in.beta.data() + begin * in.hv;
  a.gate_stride = in.hv;
  a.state = state.data();
  a.out = out.data() + begin * in.hv * in.dv;
  a.out_stride = in.hv * in.dv;
  return a;
}

TEST(DeltaRuleTest, RecurrentMatchesNaiveDouble) {
  Inputs in = MakeInputs(2, 4, 16, 8, 37, 11);
  ThreadPool pool(2);
  for (Isa isa : AvailableIsas()) {
    KernelContext ctx{pool, GetKernelTable(isa)};
    std::vector<float> state = in.state, out(in.T * in.hv * in.dv);
    DeltaRuleRecurrent(ctx, ArgsFor(in, 0, in.T, state, out));
    std::vector<double> S(in.state.begin(), in.state.end()), want(out.size());
    for (int64_t t = 0; t < in.T; ++t)
      for (int h = 0; h < in.hv; ++h) {
        const int kh = h % in.hk;
        double* s = &S[int64_t{h} * in.dk * in.dv];
        const float* q = &in.q[(t * in.hk + kh) * in.dk];
        const float* k = &in.k[(t * in.hk + kh) * in.dk];
        const float* v = &in.v[(t * in.hv + h) * in.dv];
        const double decay = std::exp(double{in.g[t * in.hv + h]}), beta = in.beta[t * in.hv + h];
        for (int i = 0; i < in.dk * in.dv; ++i) s[i] *= decay;
        for (int j = 0; j < in.dv; ++j) {
          double u = 0;
          for (int i = 0; i < in.dk; ++i) u += s[i * in.dv + j] * k[i];
          const double d = beta * (v[j] - u);
          for (int i = 0; i < in.dk; ++i) s[i * in.dv + j] += k[i] * d;
        }
        for (int j = 0; j < in.dv; ++j) {
          double o = 0;
          for (int i = 0; i < in.dk; ++i) o += s[i * in.dv + j] * q[i];
          want[(t * in.hv + h) * in.dv + j] = o;
        }
      }
    EXPECT_LE(MaxRelError(out, want), 1e-5) << IsaName(isa);
    EXPECT_LE(MaxRelError(state, S), 1e-5) << IsaName(isa);
  }
}

// architecture.md §3.2: the chunked form is algebraically the recurrence; f32 rounding only.
// Every ISA's matmul runs the chunk products; 24 x 40 heads leave tails in every product.
TEST(DeltaRuleTest, ChunkedMatchesRecurrent) {
  ThreadPool pool(2);
  struct Shape {
    int hk, hv, dk, dv, chunk;
  };
  for (Isa isa : AvailableIsas()) {
    KernelContext ctx{pool, GetKernelTable(isa)};
    for (const Shape& sh : {Shape{2, 4, 16, 16, 64}, Shape{1, 3, 24, 40, 16}}) {
      for (int64_t T : {1, 2, 15, 17, 63, 64, 65, 127, 128, 129, 300}) {
        Inputs in = MakeInputs(sh.hk, sh.hv, sh.dk, sh.dv, T, 100 + T);
        std::vector<float> s_rec = in.state, s_chk = in.state;
        std::vector<float> o_rec(T * in.hv * in.dv), o_chk(o_rec.size());
        DeltaRuleRecurrent(ctx, ArgsFor(in, 0, T, s_rec, o_rec));
        DeltaRuleChunked(ctx, ArgsFor(in, 0, T, s_chk, o_chk), sh.chunk);
        const std::string where = std::string(IsaName(isa)) + " dk " + std::to_string(sh.dk) +
                                  " T " + std::to_string(T);
        EXPECT_LE(MaxRelError(o_chk, o_rec), 1e-5) << where;
        EXPECT_LE(MaxRelError(s_chk, s_rec), 1e-5) << where;
      }
    }
  }
}

TEST(DeltaRuleTest, ChunkedInPiecesMatchesWhole) {
  ThreadPool pool(1);
  KernelContext ctx{pool, GetKernelTable(Isa::kRef)};
  Inputs in = MakeInputs(1, 2, 8, 8, 150, 7);
  std::vector<float> s_all = in.state, o_all(150 * 2 * 8);
  DeltaRuleChunked(ctx, ArgsFor(in, 0, 150, s_all, o_all));
  for (int64_t split : {1, 64, 77, 149}) {
    std::vector<float> s = in.state, o(o_all.size());
    DeltaRuleChunked(ctx, ArgsFor(in, 0, split, s, o));
    DeltaRuleChunked(ctx, ArgsFor(in, split, 150 - split, s, o));
    EXPECT_LE(MaxRelError(o, o_all), 1e-5) << split;
  }
}

}  // namespace
}  // namespace clover::kernels
