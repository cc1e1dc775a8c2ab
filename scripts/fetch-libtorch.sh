#!/usr/bin/env bash
# Fetches the libtorch runtime libraries that an AOTInductor model .so needs,
# from PyPI, into a cache dir, and prints that dir on the last stdout line.
#
#   scripts/fetch-libtorch.sh [VERSION]          # default 2.15.0
#   LIBDIR=$(scripts/fetch-libtorch.sh | tail -1)
#
# What it does: `pip download --no-deps torch==VERSION` (the manylinux x86_64
# wheel for this Python), extracts only libtorch_cpu.so and the libraries it
# NEEDs from the wheel (libc10.so, the bundled libgomp), then downloads the
# small NVIDIA wheels that provide the two CUDA libraries libtorch_cpu.so
# NEEDs even on CPU (libcudart.so.N, libcupti.so.N) at the exact versions the
# torch wheel pins, and extracts just those. Everything lands flat in
#
#   ${AOTRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aotrun}/libtorch-VERSION/lib
#
# libtorch_cpu.so has DT_RPATH $ORIGIN, so dlopen("<dir>/libtorch_cpu.so")
# finds the rest without LD_LIBRARY_PATH. It also builds a stub libtorch.so
# (empty, SONAME libtorch.so): model .so files NEED libtorch.so, whose real
# version NEEDs libtorch_cuda.so (GBs of CUDA), while every aoti_torch_* symbol
# they use lives in libtorch_cpu.so. dlopen the stub by path before the model.
# Set AOTRUN_NO_LIBTORCH_STUB=1 to skip it (no C compiler needed then).
#
# Idempotent: a complete dir (stamp file .aotrun-complete listing every file
# and its size) is reused without network. Downloads go to a temp dir inside
# the cache root and the result is renamed into place, so an interrupted run
# leaves nothing half-done behind. Concurrent runs serialize on a lock file.
#
# Env: AOTRUN_CACHE_DIR, AOTRUN_PYTHON (default python3; its pip is used),
#      AOTRUN_PIP_ARGS (extra pip download args, e.g. --index-url ...), CC.
# Exit codes: 0 ok, 2 usage, 3 pip/network failure, 4 unexpected wheel content,
#             5 missing tool.
set -euo pipefail

VERSION=${1:-2.15.0}
if [[ $# -gt 1 || ! $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+([a-z0-9.+-]*)?$ ]]; then
  echo "usage: $0 [TORCH_VERSION]   (e.g. 2.15.0)" >&2
  exit 2
fi

log() { echo "fetch-libtorch: $*" >&2; }
die() { local code=$1; shift; echo "fetch-libtorch: error: $*" >&2; exit "$code"; }

CACHE_ROOT=${AOTRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aotrun}
DEST=$CACHE_ROOT/libtorch-$VERSION
LIB=$DEST/lib
STAMP=$LIB/.aotrun-complete
mkdir -p "$CACHE_ROOT"

# Complete = stamp present and every file it lists exists with its size.
is_complete() {
  [[ -f $STAMP ]] || return 1
  local name size
  while read -r name size; do
    [[ $name == "#"* || -z $name ]] && continue
    [[ -f $LIB/$name && $(stat -c %s "$LIB/$name") == "$size" ]] || return 1
  done <"$STAMP"
}

if is_complete; then
  log "cached: $LIB"
  echo "$LIB"
  exit 0
fi

PY=${AOTRUN_PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || die 5 "$PY not found (set AOTRUN_PYTHON)"
"$PY" -m pip --version >/dev/null 2>&1 || die 5 "'$PY -m pip' does not work (install pip or set AOTRUN_PYTHON)"
command -v readelf >/dev/null 2>&1 || die 5 "readelf not found (install binutils)"

exec 9>"$CACHE_ROOT/.libtorch-$VERSION.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if is_complete; then # another run finished it while we waited
  echo "$LIB"
  exit 0
fi

TMP=$(mktemp -d "$CACHE_ROOT/.fetch-$VERSION.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/wheels" "$TMP/lib"
START=$(date +%s)

# shellcheck disable=SC2086
pip_download() { # args: requirement [--no-deps]
  "$PY" -m pip download --disable-pip-version-check --no-cache-dir --progress-bar off \
    --only-binary=:all: -d "$TMP/wheels" ${AOTRUN_PIP_ARGS:-} "$@" >&2
}

log "downloading torch==$VERSION wheel (no deps) from PyPI ..."
pip_download --no-deps "torch==$VERSION" ||
  die 3 "pip download torch==$VERSION failed (no network/PyPI, unknown version, or no wheel for $("$PY" -c 'import sys;print("cp%d%d" % sys.version_info[:2])') on this platform)"

TORCH_WHL=$(find "$TMP/wheels" -maxdepth 1 -name "torch-$VERSION*.whl" | head -1)
[[ -n $TORCH_WHL ]] || die 4 "no torch-$VERSION*.whl in the download dir"
log "got $(basename "$TORCH_WHL") ($(du -m "$TORCH_WHL" | cut -f1) MB)"

# Helper: extract members whose base name is in NAMES (flat) from a wheel.
extract() { # wheel dir name...
  "$PY" - "$@" <<'EOF'
import os, shutil, sys, zipfile
whl, dest, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
found = set()
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        base = os.path.basename(info.filename)
        if base in names and "/lib/" in "/" + info.filename and base not in found:
            with z.open(info) as src, open(os.path.join(dest, base), "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            os.chmod(os.path.join(dest, base), 0o755)
            found.add(base)
missing = names - found
if missing:
    sys.exit("missing in %s: %s" % (os.path.basename(whl), " ".join(sorted(missing))))
EOF
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
is_system_lib() {
  case $1 in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libutil.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*) return 0 ;;
  esac
  return 1
}

extract "$TORCH_WHL" "$TMP/lib" libtorch_cpu.so || die 4 "torch wheel has no torch/lib/libtorch_cpu.so"

# Libraries from the torch wheel itself (libc10, bundled libgomp), transitively.
WHEEL_LIBS=$("$PY" -c 'import os,sys,zipfile; print("\n".join(os.path.basename(n) for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("torch/lib/")))' "$TORCH_WHL")
CUDA_LIBS=()
queue=(libtorch_cpu.so)
while ((${#queue[@]})); do
  lib=${queue[0]}; queue=("${queue[@]:1}")
  for dep in $(needed "$TMP/lib/$lib"); do
    is_system_lib "$dep" && continue
    [[ -f $TMP/lib/$dep ]] && continue
    if grep -qxF "$dep" <<<"$WHEEL_LIBS"; then
      extract "$TORCH_WHL" "$TMP/lib" "$dep" || die 4 "could not extract $dep"
      queue+=("$dep")
    elif [[ $dep == libcudart.so.* || $dep == libcupti.so.* ]]; then
      [[ " ${CUDA_LIBS[*]-} " == *" $dep "* ]] || CUDA_LIBS+=("$dep")
    else
      die 4 "$lib NEEDs $dep, which is neither in the torch wheel nor a known CUDA wheel library"
    fi
  done
done

if ((${#CUDA_LIBS[@]})); then
  # The exact pins come from the torch wheel's METADATA: either per-library
  # wheels (torch <= 2.8 style: nvidia-cuda-runtime-cu12 (==12.4.127)) or the
  # cuda-toolkit[...] meta package (newer: cuda-toolkit[cudart,cupti,...]==13.2.2).
  mapfile -t REQS < <("$PY" - "$TORCH_WHL" <<'EOF'
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
reqs = [l.split(":", 1)[1].strip() for l in z.read(meta).decode().splitlines() if l.startswith("Requires-Dist:")]
out = []
for r in reqs:
    if ";" in r and "linux" not in r.split(";", 1)[1].lower():
        continue
    spec = r.split(";", 1)[0].strip()
    m = re.match(r"(nvidia-cuda-(?:runtime|cupti)[A-Za-z0-9_.-]*)\s*\(?\s*(==\s*[^\s)]+)", spec)
    if m:
        out.append(("nodeps", m.group(1) + m.group(2).replace(" ", "")))
        continue
    m = re.match(r"cuda-toolkit\s*\[([^\]]*)\]\s*\(?\s*(==\s*[^\s)]+)", spec)
    if m:
        out.append(("deps", "cuda-toolkit[cudart,cupti]" + m.group(2).replace(" ", "")))
for kind, req in out:
    print(kind, req)
EOF
  )
  ((${#REQS[@]})) || die 4 "libtorch_cpu.so NEEDs ${CUDA_LIBS[*]} but the torch METADATA pins no nvidia-cuda-runtime/cupti or cuda-toolkit"
  for line in "${REQS[@]}"; do
    kind=${line%% *}; req=${line#* }
    log "downloading $req ..."
    if [[ $kind == nodeps ]]; then
      pip_download --no-deps "$req" || die 3 "pip download $req failed (network/PyPI?)"
    else
      pip_download "$req" || die 3 "pip download $req failed (network/PyPI?)"
    fi
  done
  for dep in "${CUDA_LIBS[@]}"; do
    ok=0
    for whl in "$TMP"/wheels/nvidia_cuda_*.whl; do
      [[ -e $whl ]] || continue
      if extract "$whl" "$TMP/lib" "$dep" 2>/dev/null; then ok=1; break; fi
    done
    ((ok)) || die 4 "none of the downloaded NVIDIA wheels contains $dep"
  done
fi

if [[ ${AOTRUN_NO_LIBTORCH_STUB:-0} != 1 ]]; then
  CC=${CC:-cc}
  command -v "$CC" >/dev/null 2>&1 || die 5 "no C compiler ($CC) to build the stub libtorch.so (or set AOTRUN_NO_LIBTORCH_STUB=1)"
  printf '/* aotrun stub: satisfies DT_NEEDED libtorch.so of AOTInductor model .so files; the real one NEEDs libtorch_cuda.so. */\nvoid aotrun_libtorch_stub(void) {}\n' >"$TMP/stub.c"
  "$CC" -shared -fPIC -Wl,-soname,libtorch.so -o "$TMP/lib/libtorch.so" "$TMP/stub.c" || die 5 "building the stub libtorch.so failed"
fi

log "downloaded $(du -cm "$TMP"/wheels/*.whl | tail -1 | cut -f1) MB of wheels: $(find "$TMP/wheels" -maxdepth 1 -name '*.whl' -printf '%f ')"

# Everything resolvable from the dir alone?
if command -v ldd >/dev/null 2>&1; then
  missing=$(env -u LD_LIBRARY_PATH ldd "$TMP/lib/libtorch_cpu.so" | grep "not found" || true)
  [[ -z $missing ]] || die 4 "unresolved dependencies of libtorch_cpu.so: $missing"
fi

{
  echo "# torch $VERSION runtime libs for aotrun, from $(basename "$TORCH_WHL")$(for w in "$TMP"/wheels/nvidia_cuda_*.whl; do [[ -e $w ]] && printf ' %s' "$(basename "$w")"; done)"
  for f in "$TMP"/lib/*; do echo "$(basename "$f") $(stat -c %s "$f")"; done
} >"$TMP/lib/.aotrun-complete"

rm -rf "$DEST"
mkdir -p "$DEST"
mv "$TMP/lib" "$LIB"
log "done in $(($(date +%s) - START))s: $(du -sm "$LIB" | cut -f1) MB in $LIB"
echo "$LIB"
