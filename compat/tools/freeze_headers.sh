#!/usr/bin/env bash
# Freezes the current public headers as released version VERSION:
# copies abi/include/aotrun/package_abi.h and c_api/include/aotrun/aotrun.h to
# compat/abi/VERSION/aotrun/ and records their hashes in compat/abi/SHA256SUMS.
# Run once per release (abi/ABI.md, "Releasing a new version"); a frozen
# directory is never rewritten afterwards, so an existing one is refused.
#
# usage: freeze_headers.sh VERSION
#        freeze_headers.sh --initial-release
#   --initial-release  (before 1.0 ships only) rewrites 1.1/ from the current
#                      headers and derives 1.0/ from them: the same host
#                      header, and the package header without
#                      run_single_threaded and with AOTRUN_PKG_ABI_MINOR 0.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
frozen="$root/compat/abi"
pkg_h="$root/abi/include/aotrun/package_abi.h"
host_h="$root/c_api/include/aotrun/aotrun.h"

copy_version() { # VERSION
  mkdir -p "$frozen/$1/aotrun"
  cp "$pkg_h" "$host_h" "$frozen/$1/aotrun/"
}

# The 1.0 package header: today's minus everything 1.1 added.
derive_pkg_1_0() {
  perl -0777 -pe '
    s/^ \*   1\.1  aotrun_pkg_container_run_single_threaded \(probed\)\.\n//m or die "no 1.1 history line\n";
    s/^#define AOTRUN_PKG_ABI_MINOR 1$/#define AOTRUN_PKG_ABI_MINOR 0/m or die "no minor 1\n";
    s{\n/\* 1\.1, optional \(probed\)\.[^\n]*\n(?: \*[^\n]*\n)*typedef int32_t \(\*aotrun_pkg_container_run_single_threaded_fn\)\([^;]*;\n}{}s
      or die "no run_single_threaded typedef\n";
    s/^#define AOTRUN_PKG_SYM_RUN_SINGLE_THREADED [^\n]*\n//m or die "no symbol name macro\n";
    s/^int32_t aotrun_pkg_container_run_single_threaded\([^;]*;\n//m or die "no declaration\n";
  ' "$frozen/1.1/aotrun/package_abi.h" >"$frozen/1.0/aotrun/package_abi.h"
  if grep -q single_threaded "$frozen/1.0/aotrun/package_abi.h"; then
    echo "freeze_headers: the derived 1.0 package header still mentions single_threaded:" >&2
    grep -n single_threaded "$frozen/1.0/aotrun/package_abi.h" >&2
    exit 1
  fi
  cp "$frozen/1.1/aotrun/aotrun.h" "$frozen/1.0/aotrun/aotrun.h"
}

rehash() {
  (cd "$frozen" && find . -path './*/aotrun/*.h' | sed 's|^\./||' | sort | xargs sha256sum >SHA256SUMS)
}

case "${1:-}" in
  --initial-release)
    copy_version 1.1
    mkdir -p "$frozen/1.0/aotrun"
    derive_pkg_1_0
    rehash
    echo "froze 1.0 and 1.1 from the current headers"
    ;;
  [0-9]*.[0-9]*)
    [[ -e "$frozen/$1" ]] && { echo "freeze_headers: $frozen/$1 exists; frozen headers are never rewritten" >&2; exit 1; }
    copy_version "$1"
    rehash
    echo "froze $1; now add it to COMPAT_VERSIONS in compat/CMakeLists.txt"
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
(cd "$frozen" && sha256sum --check --quiet SHA256SUMS)
