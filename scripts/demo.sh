#!/usr/bin/env bash
# Main job: build aotrun and its example MLP package, then show the loader's
# probing and fallback at work through the `aotrun` command line; then a real
# PyTorch .pt2 on aotrun's own AOTInductor shim, with no libtorch anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Its own build tree (the `demo` preset: build-demo/, Release, no tests), so
# the demo and scripts/test.sh never share a cache, in either order.
BUILD=${BUILD:-build-demo}
cmake --preset demo -B "$BUILD" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target aotrun_cli aotrun_packages aotrun_shim_all
CLI="$BUILD/tools/aotrun"
PKG="$BUILD/packages"
set -x
"$CLI" inspect "$PKG/mlp"
"$CLI" run "$PKG/mlp" --mode single_threaded --batch 8
"$CLI" inspect "$PKG/mlp_abi10"
# A 1.0 package asked for single_threaded: one warning, then the threaded run.
"$CLI" run "$PKG/mlp_abi10" --mode single_threaded --batch 8
"$CLI" bench "$PKG/mlp" --mode single_threaded --batch 16 --iters 200

# A real PyTorch .pt2 (torch 2.15's export of a small MLP, from the corpus in
# compat/aoti) on aotrun's own AOTInductor shim (docs/SHIM.md): with no
# provider configured aotrun picks the shim by itself, since it implements
# every shim function the model imports (`inspect` says so on its `provider`
# line), so no libtorch is downloaded or loaded. `check` runs it in every
# mode and compares with eager PyTorch's output.
PT2=compat/aoti/fixtures/torch-2.15.0
REF=$(mktemp -d)
cp "$PT2/mlp.out0.npy" "$REF/output0.npy"
unset AOTRUN_LIBTORCH AOTRUN_PROVIDER
"$CLI" inspect "$PT2/mlp.pt2"
"$CLI" check "$PT2/mlp.pt2" --input "arg4_1=$PT2/mlp.in0.npy" --reference "$REF"
rm -rf "$REF"
