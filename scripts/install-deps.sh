#!/usr/bin/env bash
# Installs the Debian packages aotrun builds and tests with. Idempotent: asks
# apt only for what is missing, so a machine that has everything is not
# touched (and no network is needed).
set -euo pipefail

pkgs=(cmake g++ clang make pkg-config python3 python3-venv git
      libgtest-dev libgmock-dev libbenchmark-dev
      libdlpack-dev libopenblas-dev libdnnl-dev libsleef-dev nlohmann-json3-dev libzip-dev libdeflate-dev libkissfft-dev
      libssl-dev libcli11-dev clang-format-14
      abigail-tools bindgen cbindgen libclang-rt-14-dev
      librust-serde-json-dev librust-tokio-dev librust-half-dev)  # crate sources for the Rust crates and tests (rust/.cargo/config.toml)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# Rust: the image's rustup toolchain if present, else Debian's.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: installing Debian's cargo and rustc"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq cargo rustc
fi
