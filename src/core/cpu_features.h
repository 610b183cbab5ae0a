// CPU feature detection (CPUID + xgetbv) and the choice of kernel ISA, overridable for tests.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"

namespace clover {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512bf16 = false;
  bool avx512vnni = false;
  // AMX tiles with int8 products, usable only when the OS saves the tile state (XCR0) and has
  // granted this process the tile data (Linux: arch_prctl ARCH_REQ_XCOMP_PERM, asked once here).
  bool amx_int8 = false;
};

// Kernel paths, from the portable reference to the widest vectors; kAmx is kAvx512 with AMX
// int8 tiles for the many-row quantized products.
enum class Isa { kRef, kAvx2, kAvx512, kAmx };

// Returns "ref" / "avx2" / "avx512" / "amx".
const char* IsaName(Isa isa);
// Returns the ISA named `name` ("ref", "avx2", "avx512", "amx"), or nullopt.
std::optional<Isa> IsaFromName(std::string_view name);

// Returns the features this CPU has and the OS enables (AVX state via xgetbv). Cached.
const CpuFeatures& DetectCpuFeatures();
// Returns true when this machine can run kernels compiled for `isa`.
bool IsaSupported(Isa isa, const CpuFeatures& features);
// Returns the best supported ISA, or the one forced by env CLOVER_FORCE_ISA=ref|avx2|avx512|amx;
// an unknown or unsupported forced value is an error naming the variable and value.
Result<Isa> SelectIsa();

}  // namespace clover
