#!/usr/bin/env bash
# Makes the private Python venv the Triton backend test and benchmark use,
# and prints its directory on the last stdout line:
#
#   VENV=$(bash scripts/fetch-triton.sh | tail -1)
#   $VENV/bin/python -c 'import tritonclient.http'
#
# It holds PyPI's nvidia-pytriton (its wheel ships Triton Inference Server
# 2.51: the tritonserver binary, libtritonserver and the Python backend) and
# tritonclient[http,grpc]. About 370 MB; 40-90 s cold, instant when cached:
#
#   ${AOTRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aotrun}/triton-venv-PYTRITON_VERSION
#
# Idempotent: a venv with its stamp file (written last) is reused without
# network. It is built in a temp dir and renamed into place, so an
# interrupted run leaves nothing half-done; concurrent runs serialize on a
# lock file.
#
# Env: AOTRUN_CACHE_DIR, AOTRUN_PYTHON (default python3, needs its venv
#      module), AOTRUN_PIP_ARGS (extra pip install args).
# Exit codes: 0 ok, 3 pip/network failure, 5 missing tool.
set -euo pipefail

PYTRITON_VERSION=0.7.0
TRITONCLIENT_VERSION=2.51.0
log() { echo "fetch-triton: $*" >&2; }
die() { local code=$1; shift; echo "fetch-triton: error: $*" >&2; exit "$code"; }

CACHE_ROOT=${AOTRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aotrun}
DEST=$CACHE_ROOT/triton-venv-$PYTRITON_VERSION
STAMP=$DEST/.aotrun-complete
PYTHON=${AOTRUN_PYTHON:-python3}
mkdir -p "$CACHE_ROOT"

if [ -f "$STAMP" ]; then
  echo "$DEST"
  exit 0
fi
exec 9>"$CACHE_ROOT/.triton-venv.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -f "$STAMP" ]; then  # another run finished it while we waited
  echo "$DEST"
  exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || die 5 "$PYTHON not found"
TMP=$(mktemp -d "$CACHE_ROOT/.triton-venv.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log "creating a venv with nvidia-pytriton==$PYTRITON_VERSION (Triton 2.51) and tritonclient (~370 MB)"
"$PYTHON" -m venv "$TMP/venv" >&2 || die 5 "$PYTHON -m venv failed (Debian: apt-get install python3-venv)"
# shellcheck disable=SC2086
"$TMP/venv/bin/python" -m pip install -q --disable-pip-version-check ${AOTRUN_PIP_ARGS:-} \
  "nvidia-pytriton==$PYTRITON_VERSION" "tritonclient[http,grpc]==$TRITONCLIENT_VERSION" >&2 ||
  die 3 "pip install failed"
server=$(find "$TMP/venv" -path '*pytriton/tritonserver/bin/tritonserver' -type f | head -1)
[ -n "$server" ] || die 3 "the pytriton wheel has no tritonserver binary"
# bin/python is a link to the system interpreter and finds the venv through
# pyvenv.cfg beside it, so the venv works from its final place (the entry
# point scripts' shebangs would not: use bin/python -m ...).
rm -rf "$DEST"
mv "$TMP/venv" "$DEST"
touch "$STAMP"
log "ready: $DEST"
echo "$DEST"
