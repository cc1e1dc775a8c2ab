#!/bin/sh
# Fails if a generated file of this crate is stale, or if the Rust entry
# points disagree with package_abi.h. Run by ctest:
#   check.sh abi      src/abi.rs vs package_abi.h          (rust_package_bindgen_diff)
#   check.sh header   include/aotrun/rust_affine.h vs src  (rust_cbindgen_diff)
#   check.sh          both
# The header check also compiles rust_affine.h together with package_abi.h's
# own declarations: a C compiler rejects any signature that differs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
what=${1:-all}
rustfmt=${RUSTFMT:-rustfmt}
cc=${CC:-cc}

work=$(mktemp -d "${TMPDIR:-/tmp}/aotrun-pkg-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$here/regen.sh" "$work/abi.rs" "$work/rust_affine.h"
status=0

if [ "$what" = all ] || [ "$what" = abi ]; then
  cp "$here/src/abi.rs" "$work/abi.committed.rs"
  "$rustfmt" --edition 2021 "$work/abi.committed.rs"
  if diff -u "$work/abi.committed.rs" "$work/abi.rs"; then
    echo "src/abi.rs matches package_abi.h"
  else
    echo "error: rust/aotrun-package/src/abi.rs is stale (package_abi.h or the bindgen flags changed)." >&2
    echo "       Run rust/aotrun-package/regen.sh and commit." >&2
    status=1
  fi
fi

if [ "$what" = all ] || [ "$what" = header ]; then
  if diff -u "$here/include/aotrun/rust_affine.h" "$work/rust_affine.h"; then
    echo "include/aotrun/rust_affine.h matches src/exports.rs"
  else
    echo "error: rust/aotrun-package/include/aotrun/rust_affine.h is stale (src/exports.rs changed)." >&2
    echo "       Run rust/aotrun-package/regen.sh and commit." >&2
    status=1
  fi
  printf '#include "aotrun/package_abi.h"\n#include "aotrun/rust_affine.h"\nint main(void) { return 0; }\n' >"$work/both.c"
  extra_inc=
  if [ -n "${DLPACK_INCLUDE_DIR:-}" ]; then extra_inc="-I$DLPACK_INCLUDE_DIR"; fi
  if "$cc" -std=c11 -Wall -Werror -fsyntax-only -I"$repo/abi/include" -I"$here/include" $extra_inc "$work/both.c"; then
    echo "rust_affine.h agrees with package_abi.h"
  else
    echo "error: the Rust entry points' signatures differ from package_abi.h." >&2
    status=1
  fi
fi
exit $status
