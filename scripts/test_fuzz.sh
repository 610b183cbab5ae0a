#!/usr/bin/env bash
# Builds every libFuzzer target (tests/fuzz/*_fuzz.cc) and runs each for a bounded time from its
# seed corpus (tests/fuzz/corpus/<name>/). A crash, hang, leak or sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
B=build-asan  # shared with scripts/test_sanitize.sh
SECONDS_PER_TARGET=${FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLOVER_FUZZ=ON -DCLOVER_BUILD_TESTS=ON -DCLOVER_BUILD_BENCH=OFF >/dev/null
shopt -s nullglob
names=()
for src in tests/fuzz/*_fuzz.cc; do names+=("$(basename "$src" .cc)"); done
((${#names[@]})) || { echo "no fuzz targets"; exit 0; }
cmake --build $B -j "$(nproc)" --target "${names[@]}"
for n in "${names[@]}"; do
  corpus=$(mktemp -d)
  [[ -d tests/fuzz/corpus/$n ]] && cp -r tests/fuzz/corpus/$n/. "$corpus"/
  echo "== fuzz $n for ${SECONDS_PER_TARGET}s"
  "$B/tests/$n" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=0 "$corpus" 2>&1 | tail -3
  rm -rf "$corpus"
done
