#!/bin/sh
# Builds and tests one frozen client crate (compat/rust/<version>/) against
# the current aotrun crate; what ctest rust_compat_<version> runs.
#
#   run_client.sh <client dir> <rust workspace dir> <work dir> [cargo]
#
# The client is copied to <work dir>/src (its Cargo.lock is written there,
# never in the source tree) and built in <work dir>/target. Its dependency
# `aotrun = "<version>"` is patched to <rust workspace dir>/aotrun, so cargo
# itself checks that the current crate's version still matches the client's
# requirement. Offline, with the workspace's directory source (Debian's
# librust-*-dev). Needs AOTRUN_PACKAGES_DIR (and AOTRUN_LIB_DIR or
# AOTRUN_BUILD_DIR for the library), as ctest sets them.
set -eu
client=$1
rust=$2
work=$3
cargo=${4:-cargo}

[ -f "$client/Cargo.toml" ] || { echo "run_client.sh: no client crate at $client" >&2; exit 2; }
[ -n "${AOTRUN_PACKAGES_DIR:-}" ] || { echo "run_client.sh: AOTRUN_PACKAGES_DIR is not set" >&2; exit 2; }
rm -rf "$work/src"
mkdir -p "$work"
cp -R "$client" "$work/src"
rm -rf "$work/src/target" "$work/src/Cargo.lock"
cd "$work/src"
export CARGO_TARGET_DIR="$work/target"
set -- --offline --config "$rust/.cargo/config.toml" --config "patch.crates-io.aotrun.path=\"$rust/aotrun\""

echo "== $(basename "$client"): cargo test against $rust/aotrun"
"$cargo" test "$@"
echo "== $(basename "$client"): feature link compiles"
"$cargo" check "$@" --all-targets --features link
