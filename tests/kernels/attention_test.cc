// Blockwise attention over paged KV against a naive double-precision softmax attention.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernel_test_util.h"

namespace clover::kernels {
namespace {

using testing::AvailableIsas;
using testing::MaxRelError;
using testing::RandomVector;

struct Case {
  int n_head, n_head_kv, head_dim;
  int64_t n_rows, first_pos, page_size;
  MaskMode mask;
};

void RunCase(const Case& c, Isa isa) {
  SCOPED_TRACE(::testing::Message()
               << IsaName(isa) << " heads " << c.n_head << "/" << c.n_head_kv << " dh "
               << c.head_dim << " rows " << c.n_rows << " first " << c.first_pos << " page "
               << c.page_size << " mask " << static_cast<int>(c.mask));
  const int64_t n_pos = c.first_pos + c.n_rows;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  std::vector<float> q = RandomVector(c.n_rows * q_dim, n_pos, 2.0f);
  std::vector<float> k = RandomVector(n_pos * kv_dim, n_pos + 1, 2.0f);
  std::vector<float> v = RandomVector(n_pos * kv_dim, n_pos + 2);
  const int64_t n_pages = (n_pos + c.page_size - 1) / c.page_size;
  std::vector<std::vector<float>> kp(n_pages, std::vector<float>(c.page_size * kv_dim)), vp = kp;
  std::vector<const float*> kptr, vptr;
  for (int64_t p = 0; p < n_pos; ++p) {
    std::copy(k.begin() + p * kv_dim, k.begin() + (p + 1) * kv_dim,
              kp[p / c.page_size].begin() + (p % c.page_size) * kv_dim);
    std::copy(v.begin() + p * kv_dim, v.begin() + (p + 1) * kv_dim,
              vp[p / c.page_size].begin() + (p % c.page_size) * kv_dim);
  }
  for (int64_t i = 0; i < n_pages; ++i) {
    kptr.push_back(kp[i].data());
    vptr.push_back(vp[i].data());
  }
  KvPagesView kv{kptr.data(), vptr.data(), c.page_size, kv_dim, n_pos};
  AttentionParams params{c.n_head, c.n_head_kv, c.head_dim,
                         static_cast<float>(1.0 / std::sqrt(double(c.head_dim))), c.mask};
  ThreadPool pool(2);
  KernelContext ctx{pool, GetKernelTable(isa)};
  std::vector<float> out(c.n_rows * q_dim);
  Attention(ctx, params, q.data(), q_dim, c.n_rows, c.first_pos, kv, out.data(), q_dim);

  std::vector<double> want(out.size());
  const int group = c.n_head / c.n_head_kv;
  for (int64_t r = 0; r < c.n_rows; ++r)
    for (int h = 0; h < c.n_head; ++h) {
      const int64_t visible = c.mask == MaskMode::kCausal ? c.first_pos + r + 1 : n_pos;
      const int64_t off = int64_t{h / group} * c.head_dim;
      std::vector<double> s(visible);
      double m = -1e300, sum = 0;
      for (int64_t p = 0; p < visible; ++p) {
        double d = 0;
        for (int i = 0; i < c.head_dim; ++i)
          d += double{q[r * q_dim + h * c.head_dim + i]} * k[p * kv_dim + off + i];
        s[p] = d / std::sqrt(double(c.head_dim));
        m = std::max(m, s[p]);
      }
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int i = 0; i < c.head_dim; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < visible; ++p) acc += s[p] * v[p * kv_dim + off + i];
        want[r * q_dim + h * c.head_dim + i] = acc / sum;
      }
    }
  // f32 dot products and running sums over a few hundred keys.
  EXPECT_LE(MaxRelError(out, want), 2e-5);
}

TEST(AttentionTest, MatchesNaiveSoftmax) {
  const std::vector<Case> cases = {
      {4, 2, 32, 1, 0, 256, MaskMode::kCausal},   {4, 2, 32, 24, 0, 256, MaskMode::kCausal},
      {4, 2, 32, 8, 16, 16, MaskMode::kCausal},   {8, 1, 7, 65, 63, 7, MaskMode::kCausal},
      {2, 2, 64, 3, 130, 64, MaskMode::kCausal},  {4, 4, 16, 8, 20, 16, MaskMode::kPrefixBlock},
      {4, 1, 65, 130, 0, 256, MaskMode::kCausal},
  };
  for (Isa isa : AvailableIsas())
    for (const Case& c : cases) RunCase(c, isa);
}

}  // namespace
}  // namespace clover::kernels
