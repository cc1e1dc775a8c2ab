#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds a consumer with
# find_package(aotrun) (C and C++) and a C file with pkg-config, and runs them.
set -euo pipefail
build=$1 src=$2 pkg=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -L "$tmp/prefix/lib/libaotrun.so.1"
cmake -S "$src/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/consumer" "$pkg" | tee "$tmp/out1"
grep -q "abi 1.1 library 1.3.0" "$tmp/out1"
# The C++ header from the installed tree (aotrun.hpp next to aotrun.h).
test -f "$tmp/prefix/include/aotrun/aotrun.hpp"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/consumer_cpp" "$pkg" | tee "$tmp/out2"
grep -q "^c++ .* abi 1.1 library 1.3.0 outputs " "$tmp/out2"
grep -q "^error NOT_FOUND: " "$tmp/out2"
# pkg-config, with the prefix the .pc file was configured for replaced.
sed "s|^prefix=.*|prefix=$tmp/prefix|" "$tmp/prefix/lib/pkgconfig/aotrun.pc" > "$tmp/aotrun.pc"
PKG_CONFIG_PATH="$tmp" cc "$src/consumer/main.c" -o "$tmp/pc_consumer" $(PKG_CONFIG_PATH="$tmp" pkg-config --cflags --libs aotrun)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc_consumer" "$pkg"
echo "install: find_package and pkg-config consumers work"
