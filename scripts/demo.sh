#!/usr/bin/env bash
# Main job: build aotrun and its example MLP package, then show the loader's
# probing and fallback at work through the `aotrun` command line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Its own build tree (the `demo` preset: build-demo/, Release, no tests), so
# the demo and scripts/test.sh never share a cache, in either order.
BUILD=${BUILD:-build-demo}
cmake --preset demo -B "$BUILD" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target aotrun_cli aotrun_packages
CLI="$BUILD/tools/aotrun"
PKG="$BUILD/packages"
set -x
"$CLI" inspect "$PKG/mlp"
"$CLI" run "$PKG/mlp" --mode single_threaded --batch 8
"$CLI" inspect "$PKG/mlp_abi10"
# A 1.0 package asked for single_threaded: one warning, then the threaded run.
"$CLI" run "$PKG/mlp_abi10" --mode single_threaded --batch 8
"$CLI" bench "$PKG/mlp" --mode single_threaded --batch 16 --iters 200
