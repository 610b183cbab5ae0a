// The shared test device and the bound check (see cuda_test_util.h).
#include "kernels_cuda/cuda_test_util.h"

#include <memory>

namespace clover::kernels::cuda::testing {

Device* TestDevice(Status* why) {
  // Opened once: creating a context and a cuBLAS handle per test would dominate the run time.
  static Result<std::unique_ptr<Device>> device = Device::Open();
  if (!device.ok()) {
    *why = device.status();
    return nullptr;
  }
  return device->get();
}

void ExpectWithinBounds(const std::vector<float>& actual, const std::vector<double>& want,
                        const std::vector<double>& bound, const char* what) {
  ASSERT_EQ(actual.size(), want.size()) << what;
  ASSERT_EQ(bound.size(), want.size()) << what;
  size_t worst = 0, n_bad = 0;
  double worst_ratio = -1.0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(double{actual[i]} - want[i]);
    // NaN compares false both ways, so a NaN output counts as a failure.
    const bool ok = err <= bound[i];
    const double ratio = ok ? err / bound[i] : HUGE_VAL;
    if (!ok) ++n_bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  EXPECT_EQ(n_bad, 0u) << what << ": " << n_bad << " of " << want.size()
                       << " elements outside their bound; worst at " << worst << ": got "
                       << actual[worst] << ", want " << want[worst] << ", bound " << bound[worst];
}

}  // namespace clover::kernels::cuda::testing
