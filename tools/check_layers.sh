#!/usr/bin/env bash
# Fails when a src/ layer includes a header of a layer above it (docs/design.md "Layout").
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [core]="core"
  [io]="core io"
  [kernels]="core kernels"
  [tokenizer]="core io tokenizer"
  [model]="core io kernels model"
  [decode]="core io kernels tokenizer model decode"
  [server]="core io kernels tokenizer model decode server"
)
bad=0
for layer in "${!allowed[@]}"; do
  [[ -d src/$layer ]] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    dep=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$line")
    if [[ " ${allowed[$layer]} " != *" $dep "* ]]; then
      echo "layer violation: $file includes $dep/ (src/$layer may use: ${allowed[$layer]})"
      bad=1
    fi
  done < <(grep -rnE '#include "[a-z_]+/' "src/$layer" || true)
done
exit $bad
