#!/usr/bin/env bash
# Installs every Debian package clover.cpp needs to build and test. Idempotent: does nothing when
# everything is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev            # libFuzzer + sanitizers
  nlohmann-json3-dev libcli11-dev     # JSON, command line
  libpcre2-dev libutf8proc-dev        # tokenizer regex + Unicode normalisation
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev                          # SHA-256 (OpenSSL EVP) for `clover verify`: a vetted digest beats our own
  libcpp-httplib-dev                  # HTTP server of `clover serve`
  chromium                            # server tests: headless Chromium for the dashboard
)
# The server tests also need Node.js and npm (the official openai client). An image may bring its
# own Node.js build (with npm inside); Debian's packages are installed only when there is none.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
