#!/usr/bin/env bash
# Builds the AOTInductor compatibility corpus: for each torch release, a
# throwaway venv with torch==VERSION from PyPI, compat/aoti/export_fixtures.py
# run in it (same models, weights and inputs for every release), then the venv
# is deleted. A release that cannot be installed or exported is recorded, not
# fatal.
#
#   scripts/build-aoti-corpus.sh                  # every release in RELEASES
#   scripts/build-aoti-corpus.sh 2.6.0 2.15.0     # just these
#   EXPORT_ARGS="--only frozen_cnn" scripts/build-aoti-corpus.sh 2.15.0
#       # add one model to a release's directory, the others untouched
#
# Writes compat/aoti/fixtures/torch-VERSION/ (archives, .npy references,
# manifest.json with the per-package facts) and records each release's outcome
# in compat/aoti/corpus.json (status, numpy used, message, seconds); the full
# logs go to $LOGDIR (default /tmp/aotrun-corpus-logs).
#
# Env: AOTRUN_CORPUS_VENVS (default /tmp/aotrun-corpus-venvs), LOGDIR,
#      PYTHON (default python3), KEEP_VENV=1 (do not delete the venv),
#      PIP_ARGS (extra pip install args), UV (use this uv instead of pip;
#      `pip install uv` gives one), UV_CACHE_DIR, EXPORT_ARGS (extra
#      export_fixtures.py args, word-split; with --only, the outcome is
#      recorded under the release's "only" entry in corpus.json, keyed by
#      the models, and the release's own status stays as it was).
# Needs: g++ (inductor compiles the models with it), binutils (nm, readelf,
# objdump; the manifest's facts), network access to PyPI. Each venv takes
# 4-5 GB while it exists (torch pulls the nvidia-* wheels); nothing is cached.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXPORT=$ROOT/compat/aoti/export_fixtures.py
STATUS=$ROOT/compat/aoti/corpus.json
VENVS=${AOTRUN_CORPUS_VENVS:-/tmp/aotrun-corpus-venvs}
LOGDIR=${LOGDIR:-/tmp/aotrun-corpus-logs}
PYTHON=${PYTHON:-python3}

# The newest patch release of every minor release from 2.3 on (torch.export
# and cp311 wheels exist from 2.1; aoti_compile_and_package from 2.5).
RELEASES=(2.3.1 2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.1 2.13.0 2.14.1 2.15.0)
if [[ $# -gt 0 ]]; then RELEASES=("$@"); fi

mkdir -p "$VENVS" "$LOGDIR"
UV=${UV:-$(command -v uv || true)}
if [[ -n $UV ]]; then
  export UV_CACHE_DIR=${UV_CACHE_DIR:-/tmp/aotrun-corpus-uv-cache} UV_LINK_MODE=${UV_LINK_MODE:-hardlink}
  trap 'rm -rf "$UV_CACHE_DIR"' EXIT
fi

# numpy that the release was built against: torch < 2.4 needs numpy 1.x;
# 2.4-2.6 predate numpy 2.3.
numpy_spec() {
  local minor=${1#2.}; minor=${minor%%.*}
  if (( minor < 4 )); then echo "numpy<2"; elif (( minor < 7 )); then echo "numpy<2.3"; else echo "numpy"; fi
}

record() {  # VERSION STATUS MESSAGE SECONDS NUMPY
  "$PYTHON" - "$STATUS" "$@" "${EXPORT_ARGS:-}" <<'EOF'
import json, sys, pathlib
path, version, status, message, seconds, numpy, export_args = sys.argv[1:]
p = pathlib.Path(path)
d = json.loads(p.read_text()) if p.exists() else {}
entry = {"status": status, "message": message, "seconds": int(float(seconds)), "numpy": numpy}
args = export_args.split()
if "--only" in args:
    # Models added to an existing release directory: recorded per model
    # set, the release's own (whole-corpus) status untouched.
    only = []
    for a in args[args.index("--only") + 1:]:
        if a.startswith("--"):
            break
        only.append(a)
    d.setdefault(version, {}).setdefault("only", {})[" ".join(only)] = entry
else:
    if export_args:
        entry["export_args"] = export_args
    d[version] = dict(entry, **{k: v for k, v in d.get(version, {}).items() if k == "only"})
d = dict(sorted(d.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("."))))
p.write_text(json.dumps(d, indent=2) + "\n")
EOF
}

# Installs torch VERSION into its venv; exit status and log as pip's.
# With uv (UV=/path/to/uv, or uv on PATH) the venv is `uv venv --seed` and
# the install `uv pip install`: it unpacks the GBs of nvidia-* wheels in
# parallel and hard-links them from its cache ($UV_CACHE_DIR, default
# /tmp/aotrun-corpus-uv-cache) into later venvs that pin the same ones; about
# 4x faster than pip here. The cache is removed at the end.
install() {
  local v=$1 venv=$VENVS/torch-$1 log=$LOGDIR/torch-$1.log
  rm -rf "$venv"
  if [[ -n $UV ]]; then
    "$UV" venv --seed --python "$PYTHON" "$venv" >"$log" 2>&1 || return 1
    # shellcheck disable=SC2086
    "$UV" pip install --python "$venv/bin/python" ${PIP_ARGS:-} "torch==$v" "$(numpy_spec "$v")" >>"$log" 2>&1
  else
    "$PYTHON" -m venv "$venv" >"$log" 2>&1 || return 1
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --no-cache-dir --disable-pip-version-check ${PIP_ARGS:-} "torch==$v" "$(numpy_spec "$v")" >>"$log" 2>&1
  fi
}

# The next release installs (I/O, unpacking GBs) while this one exports (one
# compiler process), so the two overlap.
declare -A PENDING
start_install() {
  [[ -n ${1:-} ]] || return 0
  install "$1" & PENDING[$1]=$!
  date +%s >"$LOGDIR/torch-$1.start"
}

start_install "${RELEASES[0]}"
for i in "${!RELEASES[@]}"; do
  v=${RELEASES[$i]}
  venv=$VENVS/torch-$v
  log=$LOGDIR/torch-$v.log
  np=$(numpy_spec "$v")
  wait "${PENDING[$v]}"; rc=$?
  start=$(cat "$LOGDIR/torch-$v.start")
  start_install "${RELEASES[$((i + 1))]:-}"
  echo "== torch $v ($np): venv $venv, log $log"
  if [[ $rc -ne 0 ]]; then
    msg=$(grep -E "^ERROR" "$log" | head -2 | tr '\n' ' ')
    echo "   install failed: $msg"
    record "$v" install_failed "${msg:-$(tail -1 "$log")}" $(( $(date +%s) - start )) "$np"
    [[ ${KEEP_VENV:-0} == 1 ]] || rm -rf "$venv"
    continue
  fi
  got_np=$("$venv/bin/python" -c "import numpy; print(numpy.__version__)" 2>/dev/null || echo "?")
  out=$ROOT/compat/aoti/fixtures/torch-$v
  # No file of an export is anywhere near 256 MB; a runaway one (torch 2.5's
  # packager zipping its own archive) is stopped by SIGXFSZ, not a full disk.
  # shellcheck disable=SC2086
  (ulimit -f $((256 * 1024)); exec "$venv/bin/python" "$EXPORT" --out "$out" ${EXPORT_ARGS:-}) >>"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [[ $rc -eq 0 ]]; then
    record "$v" ok "" "$secs" "$got_np"
    echo "   ok (${secs}s)"
  else
    msg=$(grep -E "EXPORT FAILED|MISMATCH|Error" "$log" | tail -3 | tr '\n' ' ' | cut -c1-600)
    # Nothing exported at all: drop the empty directory.
    if ! ls "$out"/*.pt2 >/dev/null 2>&1; then rm -rf "$out"; st=export_failed; else st=partial; fi
    # --only: the named models are all that was asked for.
    [[ " ${EXPORT_ARGS:-} " == *" --only "* ]] && st=export_failed
    record "$v" "$st" "$msg" "$secs" "$got_np"
    echo "   $st (rc $rc, ${secs}s): $msg"
  fi
  [[ ${KEEP_VENV:-0} == 1 ]] || rm -rf "$venv"
done
