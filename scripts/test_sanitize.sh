#!/usr/bin/env bash
# Builds the io and tokenizer test suites with ASan + UBSan (clang) and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
# Shares its build tree with scripts/test_fuzz.sh (same clang + ASan/UBSan flags).
B=build-asan
CC=clang CXX=clang++ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLOVER_FUZZ=ON -DCLOVER_BUILD_BENCH=OFF >/dev/null
targets=()
for t in io_tests tokenizer_tests; do
  [[ -d tests/${t%_tests} ]] && targets+=("$t")
done
cmake --build $B -j "$(nproc)" --target "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${targets[@]}"; do
  echo "== $t (ASan+UBSan)"
  "$B/tests/$t" --gtest_brief=1
done
