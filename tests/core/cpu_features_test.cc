// The ISA names, which ISAs imply which, and CLOVER_FORCE_ISA.
#include "core/cpu_features.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace clover {
namespace {

constexpr Isa kAllIsas[] = {Isa::kRef, Isa::kAvx2, Isa::kAvx512, Isa::kAmx};

TEST(CpuFeaturesTest, NamesRoundTrip) {
  for (Isa isa : kAllIsas) {
    ASSERT_TRUE(IsaFromName(IsaName(isa)).has_value()) << IsaName(isa);
    EXPECT_EQ(*IsaFromName(IsaName(isa)), isa);
  }
  EXPECT_FALSE(IsaFromName("avx512amx").has_value());
}

// Each table builds on the one below it (kernels/registry.cc), so a wider ISA must imply the
// narrower ones on every CPU.
TEST(CpuFeaturesTest, WiderIsasImplyNarrowerOnes) {
  const CpuFeatures& f = DetectCpuFeatures();
  EXPECT_TRUE(IsaSupported(Isa::kRef, f));
  if (IsaSupported(Isa::kAmx, f)) EXPECT_TRUE(IsaSupported(Isa::kAvx512, f));
  if (IsaSupported(Isa::kAvx512, f)) EXPECT_TRUE(IsaSupported(Isa::kAvx2, f));
  CpuFeatures amx_without_avx512;
  amx_without_avx512.amx_int8 = true;
  EXPECT_FALSE(IsaSupported(Isa::kAmx, amx_without_avx512));
}

TEST(CpuFeaturesTest, SelectsTheWidestSupportedIsa) {
  unsetenv("CLOVER_FORCE_ISA");
  const Result<Isa> isa = SelectIsa();
  ASSERT_TRUE(isa.ok());
  for (Isa wider : kAllIsas)
    if (static_cast<int>(wider) > static_cast<int>(*isa))
      EXPECT_FALSE(IsaSupported(wider, DetectCpuFeatures())) << IsaName(wider);
}

TEST(CpuFeaturesTest, ForcedIsaIsHonouredOrRejectedByName) {
  for (Isa isa : kAllIsas) {
    setenv("CLOVER_FORCE_ISA", IsaName(isa), 1);
    const Result<Isa> selected = SelectIsa();
    if (IsaSupported(isa, DetectCpuFeatures())) {
      ASSERT_TRUE(selected.ok()) << IsaName(isa);
      EXPECT_EQ(*selected, isa);
    } else {
      ASSERT_FALSE(selected.ok()) << IsaName(isa);
      EXPECT_NE(selected.status().message().find("does not support"), std::string::npos);
    }
  }
  setenv("CLOVER_FORCE_ISA", "sse9", 1);
  const Result<Isa> unknown = SelectIsa();
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("expected ref, avx2, avx512 or amx"),
            std::string::npos);
  unsetenv("CLOVER_FORCE_ISA");
}

}  // namespace
}  // namespace clover
