#!/usr/bin/env bash
# The README's two commands and a developer's own build/ must not take each
# other's tests away (issue #24): in a scratch copy of the source, configure
# the way the demo does and the way a developer might by hand, then the
# `default` preset, and check that its tree holds its tests; and the other
# order. Configures only (no build): what is checked is the cache and the
# tests ctest registers.
#
#   presets_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/src"

# The working tree's files (tracked and new, not ignored), not its build trees.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z -co --exclude-standard | xargs -0 tar -cf - --no-recursion 2>/dev/null) |
    tar -xf - -C "$scratch/src"
else
  tar -C "$src" --exclude='./build*' -cf - . | tar -xf - -C "$scratch/src"
fi
cd "$scratch/src"

fail() { echo "FAIL: $*"; exit 1; }

cache_is() {  # build-dir variable value
  grep -q "^$2:[A-Z]*=$3\$" "$1/CMakeCache.txt" || fail "$1: $2 is not $3 ($(grep "^$2:" "$1/CMakeCache.txt" || echo unset))"
}

# The default tree registers the suites the README promises (configure-time
# tests; GoogleTest suites show up as *_NOT_BUILT until built).
default_has_tests() {
  cache_is build AOTRUN_BUILD_TESTS ON
  cache_is build AOTRUN_BUILD_RUST ON
  cache_is build AOTRUN_BUILD_TRITON ON
  local listed
  listed=$(ctest --test-dir build -N)
  for t in source_format compat_matrix rust_cargo_test triton_backend; do
    grep -qE "Test +#[0-9]+: $t\$" <<<"$listed" || fail "$1: the default tree lacks test $t"
  done
  local n
  n=$(sed -n 's/^Total Tests: //p' <<<"$listed")
  [ "${n:-0}" -ge 20 ] || fail "$1: the default tree registers only ${n:-0} tests"
  echo "ok: $1: build/ holds its tests ($n registered before the build)"
}

configure() { cmake "$@" >/dev/null 2>"$scratch/configure.err" || { cat "$scratch/configure.err"; fail "cmake $*"; }; }

# 1. The demo, then the tests.
configure --preset demo
cache_is build-demo AOTRUN_BUILD_TESTS OFF
configure --preset default
default_has_tests "demo, then default"
cache_is build-demo AOTRUN_BUILD_TESTS OFF

# 2. The tests, then the demo: neither tree changes the other.
rm -rf build build-demo
configure --preset default
configure --preset demo
default_has_tests "default, then demo"

# 3. A developer's own build/ configured without tests, then the preset.
rm -rf build
configure -S . -B build -DAOTRUN_BUILD_TESTS=OFF -DAOTRUN_BUILD_RUST=OFF
cache_is build AOTRUN_BUILD_TESTS OFF
configure --preset default
default_has_tests "hand-made build/ with tests OFF, then default"

rm -rf "$scratch"
echo "ok: the demo's and the tests' configurations never take each other's tests away"
