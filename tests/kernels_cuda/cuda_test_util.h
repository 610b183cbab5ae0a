// Helpers shared by the CUDA kernel tests: the device (or a skip), host<->device copies that fail
// the test on error, and error-bound checks against the CPU references.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/device_buffer.h"

namespace clover::kernels::cuda::testing {

// Unit roundoff of f32: round-to-nearest puts every f32 operation within a relative 2^-24.
inline const double kF32Unit = std::ldexp(1.0, -24);

// Fails the test (fatally) unless `expr`, a Status, is ok.
#define CLOVER_ASSERT_OK(expr)                                               \
  do {                                                                       \
    const ::clover::Status clover_test_status_ = (expr);                     \
    ASSERT_TRUE(clover_test_status_.ok()) << clover_test_status_.ToString(); \
  } while (0)

// `lhs = value of expr` (a Result), or a fatal test failure printing its Status.
#define CLOVER_ASSERT_OK_AND_ASSIGN(lhs, expr)                              \
  auto CLOVER_CONCAT_(clover_test_result_, __LINE__) = (expr);              \
  ASSERT_TRUE(CLOVER_CONCAT_(clover_test_result_, __LINE__).ok())           \
      << CLOVER_CONCAT_(clover_test_result_, __LINE__).status().ToString(); \
  lhs = std::move(CLOVER_CONCAT_(clover_test_result_, __LINE__)).value()

// Returns the process-wide test device, or null when the machine has none (the status says why).
Device* TestDevice(Status* why);

// Base of every CUDA test: opens the device in SetUp and skips the test when there is none.
// With CLOVER_REQUIRE_CUDA=1 in the environment (scripts/device_check.sh sets it) a missing
// device fails the test instead, so a run on a GPU machine cannot pass by skipping. Any other
// error opening the device always fails.
template <typename Param>
class CudaTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    Status why;
    device_ = TestDevice(&why);
    if (device_) return;
    const char* require = std::getenv("CLOVER_REQUIRE_CUDA");
    if (why.code() == StatusCode::kNotFound && !(require && std::string(require) == "1")) {
      GTEST_SKIP() << "no CUDA device on this machine, test skipped: " << why.message();
    }
    FAIL() << why.ToString();
  }
  Device& device() { return *device_; }

 private:
  Device* device_ = nullptr;
};

// Test-name generator for INSTANTIATE_TEST_SUITE_P: `Name(param)`, found by argument-dependent
// lookup beside each case struct, which also defines PrintTo with it so that ctest lists the
// case by the same readable name.
struct CaseName {
  template <typename Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
    return Name(info.param);
  }
};

// Copies `values` into a new device buffer.
template <typename T>
Result<DeviceBuffer> ToDevice(Device& device, const std::vector<T>& values) {
  return UploadSpan(device, std::span<const T>(values), "test data");
}

// Expects |actual[i] - want[i]| <= bound[i] for every i, naming `what` and the worst element
// (largest error / bound) when it fails.
void ExpectWithinBounds(const std::vector<float>& actual, const std::vector<double>& want,
                        const std::vector<double>& bound, const char* what);

}  // namespace clover::kernels::cuda::testing
