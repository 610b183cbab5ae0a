// CpuFeatures: CPUID leaf 1 / 7 and XCR0 checks for AVX2, FMA, F16C, the AVX-512 subsets and
// AMX.
#include "core/cpu_features.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CLOVER_X86 1
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace clover {
namespace {

#ifdef CLOVER_X86
uint64_t ReadXcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Linux (5.16+) hands out the 8 KiB AMX tile state only on request; without it the first tile
// instruction faults. Other systems: no AMX.
bool RequestTileData() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

CpuFeatures Detect() {
  CpuFeatures f;
#ifdef CLOVER_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  if (!osxsave) return f;
  const uint64_t xcr0 = ReadXcr0();
  const bool os_avx = (xcr0 & 0x6) == 0x6;                 // XMM + YMM state
  const bool os_avx512 = os_avx && (xcr0 & 0xE0) == 0xE0;  // opmask + ZMM state
  const bool avx = (c >> 28) & 1;
  f.fma = os_avx && ((c >> 12) & 1);
  f.f16c = os_avx && ((c >> 29) & 1);
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7 || !avx || !os_avx) return f;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = (b >> 5) & 1;
  if (os_avx512) {
    f.avx512f = (b >> 16) & 1;
    f.avx512dq = (b >> 17) & 1;
    f.avx512bw = (b >> 30) & 1;
    f.avx512vl = (b >> 31) & 1;
    f.avx512vnni = (c >> 11) & 1;
    unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    __cpuid_count(7, 1, a1, b1, c1, d1);
    f.avx512bf16 = (a1 >> 5) & 1;
    const bool os_tiles = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA state
    const bool amx_tile = (d >> 24) & 1, amx_int8 = (d >> 25) & 1;
    f.amx_int8 = os_tiles && amx_tile && amx_int8 && RequestTileData();
  }
#endif
  return f;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kRef:
      return "ref";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAmx:
      return "amx";
  }
  return "?";
}

std::optional<Isa> IsaFromName(std::string_view name) {
  if (name == "ref") return Isa::kRef;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  if (name == "amx") return Isa::kAmx;
  return std::nullopt;
}

const CpuFeatures& DetectCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

bool IsaSupported(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::kRef:
      return true;
    case Isa::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    // The avx512 kernels are compiled with F/BW/VL/DQ/BF16/VNNI (CMakeLists.txt).
    case Isa::kAvx512:
      return IsaSupported(Isa::kAvx2, f) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq &&
             f.avx512bf16 && f.avx512vnni;
    // The amx kernels are compiled with the avx512 flags plus AMX-TILE/INT8.
    case Isa::kAmx:
      return IsaSupported(Isa::kAvx512, f) && f.amx_int8;
  }
  return false;
}

Result<Isa> SelectIsa() {
  const CpuFeatures& f = DetectCpuFeatures();
  if (const char* forced = std::getenv("CLOVER_FORCE_ISA"); forced != nullptr && *forced) {
    std::optional<Isa> isa = IsaFromName(forced);
    if (!isa) {
      return InvalidArgument(std::string("CLOVER_FORCE_ISA: unknown ISA '") + forced +
                             "', expected ref, avx2, avx512 or amx");
    }
    if (!IsaSupported(*isa, f)) {
      return InvalidArgument(std::string("CLOVER_FORCE_ISA=") + forced +
                             ": this CPU does not support it");
    }
    return *isa;
  }
  if (IsaSupported(Isa::kAmx, f)) return Isa::kAmx;
  if (IsaSupported(Isa::kAvx512, f)) return Isa::kAvx512;
  if (IsaSupported(Isa::kAvx2, f)) return Isa::kAvx2;
  return Isa::kRef;
}

}  // namespace clover
