#!/usr/bin/env python3
"""`aotrun inspect` and the library's open read a .pt2 by the same rules.

Each case builds an archive from a corpus fixture (torch 2.15's mlp.pt2,
everything under its "mlp/" folder) with the standard library's zipfile and
runs `aotrun inspect` on it, as text and as JSON. The open is the library's
(through the C API); the archive facts and the library examined before
dlopen are the CLI's reading of the same archive (package/pt2/archive). They
must agree: both refuse, naming the same thing, or both accept.

  nested_model        the model folder one level deeper than torch writes it
                      (outer/mlp/data/aotinductor/model/): both refuse
  unsafe_name         an entry of the model named with ".." or absolute:
                      both refuse, naming the entry
  sources_over_limit  a .cpp that takes the model's sources past 64 MiB:
                      both accept; open warns and inspect lists it, both
                      naming the entry

Usage: pt2_reader_test.py --cli PATH --fixture MLP_PT2 --work DIR CASE
(AOTRUN_LIBTORCH=shim: the accepted archive runs on aotrun's own shim.)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import zipfile

ARGS = None
MODEL = "mlp/data/aotinductor/model/"
SOURCE_LIMIT = 64 << 20  # kMaxModelSourceBytes (cpp/package/pt2/archive/model_sources.hpp)


class TestFailure(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise TestFailure(what + "".join("\n" + str(c) for c in context))


def inspect(path, *flags):
    env = dict(os.environ)
    env.pop("AOTRUN_LOG", None)
    env.pop("AOTRUN_PROVIDER", None)
    env["AOTRUN_LIBTORCH"] = "shim"
    p = subprocess.run([ARGS.cli, "inspect", *flags, path], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def workdir():
    d = os.path.join(ARGS.work, ARGS.case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def rebuild(name, rename=lambda n: n, extra=()):
    """The fixture's entries (renamed), then `extra` (name, bytes) stored."""
    out = os.path.join(workdir(), name)
    with zipfile.ZipFile(ARGS.fixture) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            info.filename = rename(info.filename)
            dst.writestr(info, data)
        for entry, data in extra:
            dst.writestr(zipfile.ZipInfo(entry), data, compress_type=zipfile.ZIP_STORED)
    return out


def both_refuse(path, names):
    """The open's refusal (stderr, JSON error) and the CLI's own reading
    (the library it would examine) each name every one of `names`."""
    rc, out, err = inspect(path)
    check(rc == 1, f"inspect {path}: exit {rc}, expected 1 (refused)", out, err)
    check(err.startswith("aotrun: BAD_PACKAGE: "), "open refuses with BAD_PACKAGE", err)
    examined = [line for line in out.splitlines() if line.strip().startswith("library")]
    check(len(examined) == 1 and "not examined" in examined[0], "inspect examines no library", out)
    rc, out, _ = inspect(path, "--json")
    check(rc == 1, "inspect --json refuses too", out)
    j = json.loads(out)
    opened, read = j["error"]["message"], j["link_findings"]["error"]
    for name in names:
        check(name in err and name in opened, f"open names '{name}'", err, opened)
        check(name in examined[0] and name in read, f"inspect's reader names '{name}'", out)
    print(f"both refuse {os.path.basename(path)}: {opened}")


def case_nested_model():
    # The old CLI found data/aotinductor/model/ at any depth and examined the
    # library; open takes at most one leading folder (torch writes none or one).
    path = rebuild("nested.pt2", rename=lambda n: "outer/" + n)
    both_refuse(path, ["not an AOTInductor package", "data/aotinductor/<model>/"])


def case_unsafe_name():
    for label, entry in (("dotdot", MODEL + "../escape.cpp"), ("absolute", "/data/aotinductor/model/evil.cpp")):
        path = rebuild(f"unsafe_{label}.pt2", extra=[(entry, b"// not extracted\n")])
        both_refuse(path, [f"entry '{entry}'", "unsafe name"])


def case_sources_over_limit():
    # Stored, so that the archive's index does not call it a decompression bomb.
    filler = MODEL + "zz_over_the_limit.cpp"
    path = rebuild("big_sources.pt2", extra=[(filler, b"/" * (SOURCE_LIMIT + 1))])
    try:
        rc, out, err = inspect(path)
        check(rc == 0, f"inspect: exit {rc}, expected 0 (both accept)", out, err)
        warned = [line for line in err.splitlines() if filler in line]
        check(len(warned) == 1 and "not read" in warned[0] and "64 MiB" in warned[0], "open warns, naming it", err)
        listed = [line for line in out.splitlines() if line.strip().startswith("not read")]
        check(len(listed) == 1 and filler in listed[0] and "64 MiB" in listed[0], "inspect lists it", out)
        check("nothing found that refuses it" in out, "the library inspect examines is open's", out)
        rc, out, _ = inspect(path, "--json")
        check(rc == 0, "inspect --json accepts too", out)
        j = json.loads(out)
        check(j["request_checks"]["sources_not_read"] == [filler], "JSON lists it", j["request_checks"])
        check(j["request_checks"]["sources"] is True, "the model's own sources are read", j["request_checks"])
        check(j["link_findings"]["library"].startswith(MODEL), "JSON: the model's library", j["link_findings"])
        print(f"both accept, naming {filler}: {warned[0]}")
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)  # 64 MiB


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("case")
    ARGS = parser.parse_args()
    fn = globals().get("case_" + ARGS.case)
    if fn is None:
        print(f"unknown case {ARGS.case}", file=sys.stderr)
        return 2
    try:
        fn()
    except TestFailure as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
