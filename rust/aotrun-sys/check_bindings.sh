#!/bin/sh
# Fails if src/bindings.rs is not what regen.sh produces from the current
# c_api/include/aotrun/aotrun.h. Run by ctest (rust_bindgen_diff).
#
# Both sides go through the local rustfmt before the diff, so a different
# rustfmt release cannot fail the check; only the declarations count.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
committed=$here/src/bindings.rs
rustfmt=${RUSTFMT:-rustfmt}

fresh=$(mktemp "${TMPDIR:-/tmp}/aotrun-bindings-fresh.XXXXXX")
ours=$(mktemp "${TMPDIR:-/tmp}/aotrun-bindings-committed.XXXXXX")
trap 'rm -f "$fresh" "$ours"' EXIT

"$here/regen.sh" "$fresh"
cp "$committed" "$ours"
"$rustfmt" --edition 2021 "$ours"

if ! diff -u "$ours" "$fresh"; then
  echo "error: rust/aotrun-sys/src/bindings.rs is stale: c_api/include/aotrun/aotrun.h" >&2
  echo "       changed (or the bindgen flags did). Run rust/aotrun-sys/regen.sh and commit." >&2
  exit 1
fi
echo "bindings.rs matches aotrun.h"
