#!/usr/bin/env bash
# The device check of the CUDA backend (docs/cuda.md), one call on a lent GPU machine: GPU facts,
# a Release build with CUDA in build-device, kernels_cuda_tests (a missing GPU fails instead of
# skipping), then the CUDA microbenchmarks. Logs go to $OUT when set (the device tool brings them
# back), else to build-device/logs. Exit status: non-zero when the build or a test failed.
#
#   scripts/device_check.sh [--prebuilt DIR]   on the GPU machine
#   scripts/device_check.sh --pack DIR [BUILD] here: put BUILD's (build-cuda) test and bench
#                                              binaries and the shared libraries they need that a
#                                              CUDA image may lack into DIR
#
# --prebuilt DIR: when the project cannot be built on the GPU machine (its image may lack the
# Debian packages the configure step needs), run DIR's binaries, made by --pack, instead.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --pack ]]; then
  dir=${2:?usage: scripts/device_check.sh --pack DIR [BUILD]}
  build=${3:-build-cuda}
  set -e
  cmake --build "$build" -j "$(nproc)" --target kernels_cuda_tests kernels_cuda_bench
  mkdir -p "$dir"
  cp "$build/tests/kernels_cuda_tests" "$build/bench/kernels_cuda_bench" "$dir/"
  # Everything outside the CUDA toolkit and glibc/libstdc++ (Google Benchmark, for one).
  ldd "$build/bench/kernels_cuda_bench" "$build/tests/kernels_cuda_tests" |
    awk '$3 ~ /^\// && $3 !~ /cuda|libc\.so|libm\.so|libstdc|libgcc|ld-linux|libpthread|libdl|librt/ {print $3}' |
    sort -u | xargs -r cp -L -t "$dir/"
  ls -la "$dir"
  exit 0
fi

prebuilt=""
if [[ ${1:-} == --prebuilt ]]; then prebuilt=${2:?usage: scripts/device_check.sh --prebuilt DIR}; fi

B="build-device"
LOGS=${OUT:-$B/logs}
mkdir -p "$LOGS"
section() { printf '\n==== %s\n' "$*"; }
export PATH=$PATH:/usr/local/cuda/bin

section "machine"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit \
    --format=csv
  nvidia-smi
  nvcc --version | tail -2
  cmake --version | head -1
  grep PRETTY_NAME /etc/os-release
  echo "cores: $(nproc)"
} 2>&1 | tee "$LOGS/machine.txt"

section "build ($B, Release, CUDA on)"
tests=$B/tests/kernels_cuda_tests
bench=$B/bench/kernels_cuda_bench
if timeout 300 bash -c "cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLOVER_CUDA=ON &&
    cmake --build $B -j 16 --target kernels_cuda_tests kernels_cuda_bench" >"$LOGS/build.log" 2>&1; then
  echo "built on this machine ($(grep -c 'Building CUDA' "$LOGS/build.log") CUDA objects)"
elif [[ -n $prebuilt ]]; then
  echo "building here failed (tail of build.log below); running the binaries in $prebuilt"
  tail -15 "$LOGS/build.log"
  tests=$prebuilt/kernels_cuda_tests
  bench=$prebuilt/kernels_cuda_bench
  export LD_LIBRARY_PATH=$prebuilt:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  echo "build failed:"
  tail -40 "$LOGS/build.log"
  exit 1
fi

section "kernels_cuda_tests (CLOVER_REQUIRE_CUDA=1: no device fails)"
CLOVER_REQUIRE_CUDA=1 timeout 180 "$tests" --gtest_brief=1 \
  --gtest_output="xml:$LOGS/kernels_cuda_tests.xml" >"$LOGS/kernels_cuda_tests.log" 2>&1
test_status=$?
tail -60 "$LOGS/kernels_cuda_tests.log"
echo "kernels_cuda_tests exit status: $test_status"

section "kernels_cuda_bench"
timeout 150 "$bench" --benchmark_min_time=0.2 --benchmark_out="$LOGS/kernels_cuda_bench.json" \
  --benchmark_out_format=json 2>&1 | tee "$LOGS/kernels_cuda_bench.log"
echo "kernels_cuda_bench exit status: ${PIPESTATUS[0]}"

exit "$test_status"
