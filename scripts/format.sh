#!/usr/bin/env bash
# Formats the tree's C and C++ sources with .clang-format, or (--check)
# lists the files that differ from it and fails. clang-format 14 exactly:
# another version formats differently, and CI must agree with developers.
# Not formatted: the frozen headers of released versions (compat/abi, never
# edited), files other tools generate (rust/aotrun-package/include: cbindgen),
# and build outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${CLANG_FORMAT:-clang-format-14}
command -v "$tool" >/dev/null 2>&1 || { echo "format: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cc' '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v -e '^compat/abi/' -e '^rust/aotrun-package/include/')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    "$tool" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  "$tool" --style=file -i "${files[@]}"
fi
