// Device buffers and the launchers' argument checks.
#include "kernels/cuda/device.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <string>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/delta_rule.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/rms_norm.h"
#include "kernels_cuda/cuda_test_util.h"

namespace clover::kernels::cuda {
namespace {

using testing::CudaTest;

using DeviceBufferTest = CudaTest<size_t>;

TEST_P(DeviceBufferTest, RoundTripsAndRejectsOversizedCopies) {
  const size_t n = GetParam();
  std::vector<uint8_t> bytes(n);
  std::iota(bytes.begin(), bytes.end(), uint8_t{1});
  CLOVER_ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, DeviceBuffer::Allocate(n, "round trip"));
  EXPECT_EQ(buffer.bytes(), n);
  CLOVER_ASSERT_OK(buffer.Upload(device(), bytes.data(), n));
  // Moving the buffer keeps the memory (and frees nothing twice).
  DeviceBuffer moved = std::move(buffer);
  CLOVER_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> back,
                              DownloadVector<uint8_t>(device(), moved, n));
  EXPECT_EQ(back, bytes);
  std::vector<uint8_t> more(n + 1);
  const Status too_big = moved.Upload(device(), more.data(), n + 1);
  EXPECT_EQ(too_big.code(), StatusCode::kOutOfRange);
  EXPECT_NE(too_big.message().find("'round trip'"), std::string::npos) << too_big.message();
}

INSTANTIATE_TEST_SUITE_P(cuda, DeviceBufferTest, ::testing::Values(0, 1, 7, 4099));

// A launcher call with one bad argument, the code it must return and a fragment of its message.
struct BadCall {
  std::string name;
  std::function<Status(Device&)> call;
  StatusCode code;
  std::string fragment;
};

std::vector<BadCall> BadCalls() {
  // Argument checks run before any pointer is touched, so null device pointers are enough.
  std::vector<BadCall> calls;
  calls.push_back(
      {"RmsNormStride",
       [](Device& d) { return RmsNorm(d, nullptr, 3, nullptr, 4, 1, 1e-6f, nullptr, 4); },
       StatusCode::kInvalidArgument, "x_stride = 3, expected >= 4"});
  calls.push_back({"MatMulQ4_K",
                   [](Device& d) {
                     return MatMul(d, nullptr, 1, 256,
                                   DeviceMatrix{DType::kQ4_K, nullptr, 1, 256, 144}, nullptr, 1);
                   },
                   StatusCode::kUnimplemented, "Q4_K"});
  calls.push_back({"MatMulQ8_0PartialBlock",
                   [](Device& d) {
                     return MatMul(d, nullptr, 1, 40,
                                   DeviceMatrix{DType::kQ8_0, nullptr, 1, 40, 68}, nullptr, 1);
                   },
                   StatusCode::kInvalidArgument, "multiple of 32"});
  calls.push_back({"DeltaRuleHeadTooWide",
                   [](Device& d) {
                     DeltaRuleArgs a;
                     a.hk = a.hv = 1, a.dk = 512, a.dv = 8, a.n_rows = 1;
                     a.qk_stride = 512, a.v_stride = 8, a.gate_stride = 1, a.out_stride = 8;
                     return DeltaRuleRecurrent(d, a);
                   },
                   StatusCode::kInvalidArgument, "dk = 512, expected <= 256"});
  calls.push_back({"AttentionGroups",
                   [](Device& d) {
                     return Attention(d, AttentionParams{6, 4, 64, 1.0f, MaskMode::kCausal},
                                      nullptr, 384, 1, 0, DeviceKv{nullptr, nullptr, 256, 1},
                                      nullptr, 384);
                   },
                   StatusCode::kInvalidArgument, "not a multiple of n_head_kv"});
  return calls;
}

std::string Name(const BadCall& c) { return c.name; }
void PrintTo(const BadCall& c, std::ostream* os) { *os << c.name; }

using BadArgumentTest = CudaTest<BadCall>;

TEST_P(BadArgumentTest, IsRejectedByName) {
  const Status status = GetParam().call(device());
  EXPECT_EQ(status.code(), GetParam().code) << status.ToString();
  EXPECT_NE(status.message().find(GetParam().fragment), std::string::npos) << status.message();
}

INSTANTIATE_TEST_SUITE_P(cuda, BadArgumentTest, ::testing::ValuesIn(BadCalls()),
                         testing::CaseName());

}  // namespace
}  // namespace clover::kernels::cuda
