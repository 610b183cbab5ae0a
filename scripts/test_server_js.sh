#!/usr/bin/env bash
# Runs the JavaScript suites of `clover serve` (tests/server/js): the official openai client,
# a bounded load test and headless Chromium against the real server binary.
# CLOVER_BINARY (default build/clover) and CLOVER_MODEL (default models/clover-demo) are taken
# relative to the repository root; the dashboard screenshot goes to CLOVER_ARTIFACTS_DIR
# (default build/artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
export CLOVER_BINARY=$(realpath -m "${CLOVER_BINARY:-build/clover}")
export CLOVER_MODEL=$(realpath -m "${CLOVER_MODEL:-models/clover-demo}")
export CLOVER_ARTIFACTS_DIR=$(realpath -m "${CLOVER_ARTIFACTS_DIR:-build/artifacts}")
if [[ ! -x $CLOVER_BINARY ]]; then
  echo "test_server_js: no clover binary at $CLOVER_BINARY (build it first, or set CLOVER_BINARY)" >&2
  exit 1
fi
cd tests/server/js
# Exactly the versions in package-lock.json; the npm cache makes a repeat run work offline.
npm ci --no-audit --no-fund --prefer-offline --loglevel=error
# One file at a time: each starts its own servers, and the machine has few cores.
exec node --test --test-concurrency=1 --test-timeout=120000 ./*.test.js
