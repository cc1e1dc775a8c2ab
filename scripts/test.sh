#!/usr/bin/env bash
# Every test: the full build (GoogleTest, C ABI programs, compat matrix, Rust
# crates, CLI) under ctest, then the threading suites under ThreadSanitizer and
# the whole suite under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
JOBS=$(nproc)

echo "=== main build + ctest ==="
cmake --preset default >/dev/null
cmake --build --preset default -j"$JOBS"
ctest --preset default -j"$JOBS"

echo "=== ThreadSanitizer (threading, async, graph suites) ==="
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j"$JOBS"
ctest --preset tsan -j"$JOBS"

echo "=== AddressSanitizer + UBSan (whole C++ suite) ==="
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$JOBS"
ctest --preset asan -j"$JOBS"
