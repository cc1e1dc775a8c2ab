#!/usr/bin/env python3
"""Tests of `aotrun compat` (the compatibility sweep) and of the tolerances of
`aotrun check --reference`, plus what `inspect` and `bench` say about .pt2
archives. Usage:

    compat_test.py --cli PATH --packages DIR --fixtures DIR --work DIR CASE

Cases that need libtorch (the committed .pt2 corpus) exit 77 when
AOTRUN_LIBTORCH is unset or empty; ctest shows them as skipped
(SKIP_RETURN_CODE 77). Only the standard library is used.
"""

import argparse
import json
import os
import re
import pty
import shutil
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

ARGS = None
SKIP = 77
MODES = ["threaded", "single_threaded", "graph"]


class TestFailure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        details = "\n".join(str(c) for c in context)
        raise TestFailure(what + ("\n" + details if details else ""))


def env(extra=None):
    e = dict(os.environ)
    e.pop("AOTRUN_LOG", None)
    e.pop("AOTRUN_TEST_FAULT_EVERY", None)
    e.update(extra or {})
    return e


def cli(*args, expect=None, timeout=250, extra_env=None):
    start = time.monotonic()
    proc = subprocess.run([ARGS.cli, *args], capture_output=True, text=True, env=env(extra_env),
                          timeout=timeout)
    elapsed = time.monotonic() - start
    if expect is not None:
        check(proc.returncode == expect,
              f"aotrun {' '.join(args)}: exit {proc.returncode}, expected {expect}",
              "stdout:", proc.stdout, "stderr:", proc.stderr)
    return proc.returncode, proc.stdout, proc.stderr, elapsed


def pkg(name):
    path = os.path.join(ARGS.packages, name)
    check(os.path.exists(path), f"package {path} does not exist: build aotrun_packages first")
    return path


def workdir(name):
    path = os.path.join(ARGS.work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def copy_pkg(name, dest_dir, new_name=None):
    src = pkg(name)
    dst = os.path.join(dest_dir, new_name or os.path.basename(src))
    if os.path.isdir(src):
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)
    return dst


def libtorch():
    lt = os.environ.get("AOTRUN_LIBTORCH", "")
    if not lt:
        raise Skip("no libtorch: set AOTRUN_LIBTORCH to torch/lib (scripts/fetch-libtorch.sh) "
                   "to sweep the .pt2 corpus")
    return lt


def npy_write_f32(path, shape, values):
    shape_txt = "(" + "".join(f"{d}, " for d in shape).rstrip(", ") + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_txt
    pad = (64 - (6 + 2 + 2 + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


def npy_read_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<H", data[8:10])
    header = data[10:10 + hlen].decode("latin1")
    meta = eval(header, {"__builtins__": {}}, {"True": True, "False": False})
    body = data[10 + hlen:]
    return meta["shape"], list(struct.unpack("<%df" % (len(body) // 4), body))


def mlp_with_references(d, stem="mlp"):
    """A copy of the example mlp package directory named `stem`, with
    references beside it written by `aotrun run` (inputs and outputs)."""
    dst = copy_pkg("mlp", d, stem)
    tmp = os.path.join(d, "_ref_" + stem)
    _, out, _, _ = cli("run", "--json", "--batch", "3", "--save-inputs", os.path.join(tmp, "in"),
                       "--output-dir", os.path.join(tmp, "out"), dst, expect=0)
    j = json.loads(out)
    for i, inp in enumerate(j["inputs"]):
        shutil.copy(inp["file"], os.path.join(d, f"{stem}.in{i}.npy"))
    for i, o in enumerate(j["outputs"]):
        shutil.copy(o["file"], os.path.join(d, f"{stem}.out{i}.npy"))
    shutil.rmtree(tmp)
    return dst


def rows_of(report, label_end):
    for p in report["packages"]:
        if p["label"].endswith(label_end):
            return p, {r["mode"]: r for r in p["rows"]}
    raise TestFailure(f"no package ending in {label_end} in the report: "
                      f"{[p['label'] for p in report['packages']]}")


def misbehaving_dir(name):
    d = workdir(name)
    mlp_with_references(d)
    for b in ("crash", "hang", "abort"):
        copy_pkg(f"libcompat_{b}.so", d)
    with open(os.path.join(d, "not_a_package.so"), "wb") as f:
        f.write(b"this is not an ELF shared object\n")
    return d


# --- cases ------------------------------------------------------------------

def case_usage():
    for args, needle in [([], "missing what to sweep"),
                         (["--modes", "turbo", "x"], "unknown mode 'turbo'"),
                         (["-j", "0", "x"], "--jobs"),
                         (["--timeout", "-1", "x"], "--timeout"),
                         (["--bogus", "x"], "unknown option '--bogus'")]:
        rc, out, err, _ = cli("compat", *args, expect=2)
        check(needle in err and "--help" in err, f"compat {args}: {err}")
    rc, out, err, _ = cli("compat", os.path.join(ARGS.work, "no_such_dir"), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "missing sweep root", err)
    rc, out, err, _ = cli("check", "--rtol", "0", pkg("mlp"), expect=2)
    check("--reference" in err, "check --rtol without --reference", err)


def case_help():
    _, out, _, _ = cli("compat", "--help", expect=0)
    for needle in ("Usage: aotrun compat", "--timeout", "--jobs", "--junit", "--json", "--manifest",
                   "torch.testing.assert_close", "Exit status"):
        check(needle in out, f"compat --help lacks '{needle}'", out)
    _, top, _, _ = cli("--help", expect=0)
    check("compat" in top and "compat-one" not in top, "tool help lists compat, not compat-one", top)
    _, out, _, _ = cli("check", "--help", expect=0)
    check("--rtol 0 --atol 0 compares bit for bit" in out, "check --help on bit-exact", out)


def case_sweep_misbehaving():
    d = misbehaving_dir("sweep")
    report = os.path.join(ARGS.work, "sweep.json")
    junit = os.path.join(ARGS.work, "sweep.xml")
    rc, out, err, elapsed = cli("compat", "--timeout", "3", "--json", report, "--junit", junit, d)
    check(rc == 1, f"sweep with failures: exit {rc}", out, err)
    check(err.startswith("aotrun: COMPAT_FAILED: 4 of 5 packages"), "failure line", err)
    # The hang costs its 3 s limit; everything else is quick.
    check(elapsed < 30, f"sweep took {elapsed:.1f} s", out)
    j = json.load(open(report))
    check(len(j["packages"]) == 5 and j["passed"] is False, "five packages", j)

    p, rows = rows_of(j, "/mlp")
    check(p["met"] is True and p["package"]["format"] == "aotrun-dir", "mlp met", p)
    for m in MODES:
        check(rows[m]["outcome"] == "pass" and rows[m]["met"] is True, f"mlp {m}", rows[m])
        check(rows[m]["vs_reference"]["identical"] is True, f"mlp {m} vs reference", rows[m])
    for m in ("single_threaded", "graph"):
        check(rows[m]["vs_threaded"]["identical"] is True, f"mlp {m} vs threaded", rows[m])

    p, rows = rows_of(j, "libcompat_crash.so")
    r = rows["threaded"]
    check(r["outcome"] == "crash" and r["code"] == "SIGSEGV" and not r["met"], "crash row", r)
    check(p["child"]["signal"] == 11 and p["child"]["signal_name"] == "SIGSEGV", "crash child", p["child"])
    check("about to write through a NULL pointer" in p["child"]["stderr_tail"], "crash stderr", p["child"])
    check("not run: single_threaded, graph" in r["message"], "modes after the crash", r)

    p, rows = rows_of(j, "libcompat_hang.so")
    r = rows["threaded"]
    check(r["outcome"] == "timeout" and not r["met"] and p["child"]["timed_out"] is True, "hang row", r, p)
    check(2.9 <= p["child"]["wall_s"] < 10, "time limit honoured", p["child"])
    check("sleeping forever" in p["child"]["stderr_tail"], "hang stderr", p["child"])

    p, rows = rows_of(j, "libcompat_abort.so")
    r = rows["threaded"]
    check(r["outcome"] == "crash" and r["code"] == "SIGABRT", "abort row", r)
    check("calling abort()" in p["child"]["stderr_tail"], "abort stderr", p["child"])

    p, rows = rows_of(j, "not_a_package.so")
    r = rows["open"]
    check(r["outcome"] == "refused" and r["code"] == "LOAD_FAILED" and not r["met"],
          "an unexpected refusal fails", r)
    check(p["package"] is None, "refused: no package info", p)

    s = j["summary"]
    check(s == {"packages": 5, "packages_met": 1, "rows": 7, "passed": 3, "skipped": 0,
                "refused_as_expected": 0, "failed": 4}, "summary", s)
    # The table.
    for needle in ("PACKAGE", "VS REFERENCE", "FAIL: crash SIGSEGV", "FAIL: timeout", "FAIL: crash SIGABRT",
                   "FAIL: refused LOAD_FAILED", "failures", "| compat_crash: about to write",
                   "5 packages, 7 rows: 3 passed, 0 skipped, 0 refused as expected, 4 failed"):
        check(needle in out, f"table lacks '{needle}'", out)
    # No stray children: the hanging one's group was killed.
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    check("compat-one" not in ps or d not in ps, "a child outlived the sweep", ps)


def case_manifest_expectations():
    d = misbehaving_dir("manifest")
    shutil.copy(pkg("libfuture_major.so"), d)
    m = {
        "defaults": {"timeout_s": 3},
        "packages": [
            {"path": "mlp", "references": "auto"},
            {"path": "not_a_package.so", "expect": {"outcome": "refused", "code": "LOAD_FAILED"}},
            {"path": "libfuture_major.so", "expect": {"outcome": "refused", "code": "ABI_MISMATCH"}},
            {"path": "mlp", "name": "mlp-explicit",
             "inputs": ["mlp.in0.npy"], "outputs": ["mlp.out0.npy"], "modes": ["threaded", "graph"],
             "rtol": 0, "atol": 0},
        ],
    }
    path = os.path.join(d, "compat.json")
    json.dump(m, open(path, "w"))
    report = os.path.join(ARGS.work, "manifest.json")
    rc, out, err, _ = cli("compat", "--manifest", path, "--json", report, expect=0)
    j = json.load(open(report))
    check(j["passed"] is True and j["summary"]["refused_as_expected"] == 2, "expectations met", j["summary"])
    p, rows = rows_of(j, "mlp-explicit")
    check(set(rows) == {"threaded", "graph"} and p["rtol"] == 0, "explicit modes and tolerance", p)
    check("4 packages" in out and "2 refused as expected" in out and "0 failed" in out, "table", out)
    # Wrong expectations fail: another code, a package that opens, a crash
    # where a refusal is expected, an unknown mode in the manifest.
    m["packages"] = [
        {"path": "not_a_package.so", "expect": {"outcome": "refused", "code": "ABI_MISMATCH"}},
        {"path": "mlp", "expect": {"outcome": "refused"}},
        {"path": "libcompat_abort.so", "expect": {"outcome": "refused"}},
    ]
    json.dump(m, open(path, "w"))
    rc, out, err, _ = cli("compat", "--manifest", path, "--json", report, expect=1)
    j = json.load(open(report))
    check(j["summary"]["packages_met"] == 0, "all three miss their expectation", j["summary"])
    _, rows = rows_of(j, "not_a_package.so")
    check("refused with LOAD_FAILED, expected ABI_MISMATCH" in rows["open"]["message"], "code mismatch", rows)
    _, rows = rows_of(j, "mlp")
    check(rows["open"]["outcome"] == "opened" and not rows["open"]["met"], "opened unexpectedly", rows)
    m["packages"] = [{"path": "mlp", "modes": ["turbo"]}]
    json.dump(m, open(path, "w"))
    _, _, err, _ = cli("compat", "--manifest", path, expect=1)
    check("INVALID_ARGUMENT" in err and "packages[0].modes" in err, "bad manifest named", err)
    # A mode a package lacks, when asked for by name, fails; unasked it is skipped.
    m["packages"] = [{"path": os.path.abspath(pkg("mlp_abi10")), "modes": ["single_threaded"]}]
    json.dump(m, open(path, "w"))
    _, out, _, _ = cli("compat", "--manifest", path, expect=1)
    check("FAIL: unavailable" in out, "explicit unavailable mode", out)
    rc, out, _, _ = cli("compat", pkg("mlp_abi10"), expect=0)
    check("skipped" in out and "falls back" in out, "unavailable mode skipped", out)


def case_junit_xml():
    d = misbehaving_dir("junit")
    junit = os.path.join(ARGS.work, "junit.xml")
    cli("compat", "--timeout", "3", "--junit", junit, d, expect=1)
    root = ET.parse(junit).getroot()
    check(root.tag == "testsuites" and root.get("tests") == "7", "testsuites", ET.tostring(root))
    cases = root.findall("./testsuite/testcase")
    check(len(cases) == 7, "one testcase per package and mode", len(cases))
    by = {(c.get("classname").split("/")[-1], c.get("name")): c for c in cases}
    for m in MODES:
        c = by[("mlp", m)]
        check(c.find("failure") is None and c.find("error") is None, f"mlp {m} passes", ET.tostring(c))
    c = by[("libcompat_crash.so", "threaded")]
    e = c.find("error")
    check(e is not None and e.get("type") == "crash" and "SIGSEGV" in e.get("message"), "crash testcase",
          ET.tostring(c))
    check("about to write through a NULL pointer" in c.find("system-err").text, "system-err", ET.tostring(c))
    c = by[("libcompat_hang.so", "threaded")]
    check(c.find("error").get("type") == "timeout", "hang testcase", ET.tostring(c))
    c = by[("not_a_package.so", "open")]
    check(c.find("failure") is not None and "LOAD_FAILED" in c.find("failure").get("message"),
          "refused testcase", ET.tostring(c))
    check(root.get("failures") == "1" and root.get("errors") == "3", "counts", root.attrib)


def case_json_report():
    d = workdir("json")
    mlp_with_references(d)
    rc, out, err, _ = cli("compat", "--json", "-", d, expect=0)
    j = json.loads(out)  # stdout is only the JSON
    check(j["tolerance_defaults"]["float32"] == {"rtol": 1.3e-6, "atol": 1e-5}, "defaults", j)
    p = j["packages"][0]
    check(p["sets"][0]["name"] == "default" and p["sets"][0]["inputs"][0].endswith("mlp.in0.npy"), "sets", p)
    check(p["package"]["modes"]["threaded"]["available"] is True, "modes", p)
    r = p["rows"][0]
    check(r["sets"][0]["outputs"][0]["vs_reference"]["rtol"] == 1.3e-6, "per-output tolerance", r)


def case_every_set_reported():
    """A set the model refuses (1 row to dyn_mlp, compiled for 2 and up) fails
    that set only: the other sets of the mode still run and are reported
    (issue #28: a mode stopped at its first failing set). No libtorch needed:
    the .pt2 runs on aotrun's shim."""
    d = workdir("every_set")
    fx = os.path.join(ARGS.fixtures, "torch-2.15.0")
    for f in ("dyn_mlp.pt2", "dyn_mlp.in0.npy", "dyn_mlp.out0.npy"):
        shutil.copy(os.path.join(fx, f), d)
    for kind, cols in (("in0", 64), ("out0", None)):
        shape, values = npy_read_f32(os.path.join(fx, "dyn_mlp.%s.npy" % kind))
        npy_write_f32(os.path.join(d, "dyn_mlp.b1.%s.npy" % kind), (1, shape[1]), values[:shape[1]])
    extra = {"AOTRUN_LIBTORCH": "", "AOTRUN_PROVIDER": "shim"}
    rc, out, err, _ = cli("compat", "--json", "-", d, extra_env=extra)
    check(rc == 1, "a refused set fails the sweep", rc, out, err)
    j = json.loads(out)
    p, rows = rows_of(j, "dyn_mlp.pt2")
    for m in ("threaded", "single_threaded", "graph"):
        r = rows[m]
        sets = {s["set"]: s for s in r["sets"]}
        check(r["outcome"] == "error" and r["sets_passed"] == 1 and set(sets) == {"default", "b1"},
              f"{m}: every set reported", r)
        check(sets["default"]["status"] == "pass", f"{m}: the good set passed", sets["default"])
        check(sets["b1"]["status"] == "error" and sets["b1"]["code"] == "INVALID_ARGUMENT" and
              "dim 0 is 1" in sets["b1"]["message"], f"{m}: the 1-row set refused, saying why", sets["b1"])
    rc, out, err, _ = cli("compat", d, extra_env=extra)
    check("(1/2 sets passed)" in out and "set default: pass" in out and "set b1: error INVALID_ARGUMENT" in out,
          "the text report shows every set", out)


def case_jobs_parallel():
    d = workdir("jobs")
    for i in range(3):
        shutil.copy(pkg("libcompat_hang.so"), os.path.join(d, f"hang{i}.so"))
    rc, out, err, elapsed = cli("compat", "-j", "3", "--timeout", "2", d, expect=1)
    check(elapsed < 5.5, f"three 2 s hangs with -j 3 took {elapsed:.1f} s", out)
    check(out.count("FAIL: timeout") == 3, "three timeouts", out)


def case_tolerances():
    d = workdir("tol")
    mlp_with_references(d)
    shape, values = npy_read_f32(os.path.join(d, "mlp.out0.npy"))
    # A relative error of 1e-7: inside PyTorch's float32 default, not bit for bit.
    values[0] = values[0] * (1 + 1e-7) + 1e-7
    npy_write_f32(os.path.join(d, "mlp.out0.npy"), shape, values)
    report = os.path.join(ARGS.work, "tol.json")
    cli("compat", "--json", report, d, expect=0)
    j = json.load(open(report))
    r = j["packages"][0]["rows"][0]
    check(r["outcome"] == "pass" and r["vs_reference"]["identical"] is False, "within tolerance", r)
    rc, out, err, _ = cli("compat", "--rtol", "0", "--atol", "0", "--json", report, d, expect=1)
    j = json.load(open(report))
    r = j["packages"][0]["rows"][0]
    check(r["outcome"] == "mismatch" and "1 element differs" in r["message"], "bit for bit", r)
    # Far off: outside any default.
    values[1] += 0.5
    npy_write_f32(os.path.join(d, "mlp.out0.npy"), shape, values)
    rc, out, _, _ = cli("compat", d, expect=1)
    check("FAIL: mismatch" in out and "beyond rtol 1.3e-06, atol 1e-05" in out, "mismatch message", out)


def case_check_tolerance():
    d = workdir("check_tol")
    ref = os.path.join(d, "ref")
    _, out, _, _ = cli("run", "--json", "--batch", "2", "--seed", "4", "--output-dir", ref, pkg("mlp"), expect=0)
    f = json.loads(out)["outputs"][0]["file"]
    shape, values = npy_read_f32(f)
    values[3] = values[3] * (1 + 2e-7)
    npy_write_f32(f, shape, values)
    _, out, _, _ = cli("check", "--json", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"), expect=0)
    j = json.loads(out)
    v = j["modes"]["threaded"]["outputs"][0]["vs_reference"]
    check(v["within_tolerance"] is True and v["identical"] is False and v["rtol"] == 1.3e-6, "within", v)
    check(j["passed"] is True and j["identical"] is False, "passed but not identical", j)
    _, text, _, _ = cli("check", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"), expect=0)
    check("within rtol 1.3e-06, atol 1e-05" in text and "PyTorch's defaults" in text, "text", text)
    _, _, err, _ = cli("check", "--rtol", "0", "--atol", "0", "--batch", "2", "--seed", "4",
                       "--reference", ref, pkg("mlp"), expect=1)
    check(err.startswith("aotrun: MISMATCH: "), "bit for bit with --rtol 0 --atol 0", err)
    cli("check", "--rtol", "1e-3", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"), expect=0)


def safetensors_write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, shape, values in tensors:
        data = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def case_safetensors_references():
    d = workdir("st")
    mlp_with_references(d)
    ins, outs = [], []
    for kind, lst in (("in", ins), ("out", outs)):
        shape, values = npy_read_f32(os.path.join(d, f"mlp.{kind}0.npy"))
        lst.append((f"{kind}0", list(shape), values))
        os.remove(os.path.join(d, f"mlp.{kind}0.npy"))
    safetensors_write(os.path.join(d, "mlp.inputs.safetensors"), ins)
    safetensors_write(os.path.join(d, "mlp.outputs.safetensors"), outs)
    report = os.path.join(ARGS.work, "st.json")
    cli("compat", "--json", report, d, expect=0)
    j = json.load(open(report))
    r = j["packages"][0]["rows"][0]
    check(r["outcome"] == "pass" and r["vs_reference"]["identical"] is True, "safetensors references", r)


def case_no_progress_when_piped():
    d = workdir("progress")
    mlp_with_references(d)
    _, out, err, _ = cli("compat", d, expect=0)
    check("\r" not in err and err == "", "progress drawn on a pipe", repr(err))
    master, slave = pty.openpty()
    proc = subprocess.Popen([ARGS.cli, "compat", d], stdout=subprocess.PIPE, stderr=slave, env=env())
    os.close(slave)
    out, _ = proc.communicate(timeout=120)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    tty = b"".join(chunks).decode(errors="replace")
    check(proc.returncode == 0 and "[0/1]" in tty and "\r" in tty, "progress on a terminal", repr(tty))
    check("\r" not in out.decode(), "progress on stdout", out)


# Fixtures aotrun computes wrong numbers for today (a library gap, each in
# docs/RELIABILITY.md): their mismatch is expected, and checked to still be
# one, so that fixing it makes these tests say to remove the entry.
KNOWN_WRONG = {
    # A 2.6 archive states no input strides; convnet_cl was compiled for
    # channels_last (RELIABILITY.md 95a').
    "torch-2.6.0/convnet_cl.pt2",
}


def known_wrong(label):
    return any(label.endswith(k) for k in KNOWN_WRONG)


def check_failures_known(out):
    """`aotrun compat` text: every FAIL row is a KNOWN_WRONG mismatch."""
    fails = [l for l in out.splitlines() if "FAIL:" in l]
    check(all(known_wrong(l.split()[0]) and "mismatch" in l for l in fails), "unexpected failures", *fails)
    return fails


def sweep_corpus(release):
    lt = libtorch()
    d = os.path.join(ARGS.fixtures, f"torch-{release}")
    report = os.path.join(ARGS.work, f"corpus-{release}.json")
    junit = os.path.join(ARGS.work, f"corpus-{release}.xml")
    rc, out, err, elapsed = cli("compat", "--timeout", "120", "--json", report, "--junit", junit, d,
                                extra_env={"AOTRUN_LIBTORCH": lt})
    print(out)
    print(f"corpus torch-{release}: {elapsed:.2f} s")
    fails = check_failures_known(out)
    check(rc == (1 if fails else 0), f"corpus sweep of {d}: exit {rc}", out, err)
    j = json.load(open(report))
    for p in j["packages"]:
        if known_wrong(p["label"]):
            check(any(r["outcome"] != "pass" for r in p["rows"]),
                  f"{p['label']} now passes: remove it from KNOWN_WRONG (and fix RELIABILITY.md)", p["rows"])
    j["packages"] = [p for p in j["packages"] if not known_wrong(p["label"])]
    labels = sorted(os.path.basename(p["label"]) for p in j["packages"])
    archives = sorted(f for f in os.listdir(d) if f.endswith(".pt2") and not known_wrong(f"torch-{release}/{f}"))
    check(len(archives) >= 4 and labels == archives, "every archive of the release", labels)
    for p in j["packages"]:
        check(p["package"]["format"] == "pt2", "format pt2", p["package"])
        rows = {r["mode"]: r for r in p["rows"]}
        check(rows["threaded"]["outcome"] == "pass", f"{p['label']} threaded", rows["threaded"])
        if p["label"].endswith("dyn_mlp.pt2"):
            check([s["name"] for s in p["sets"]] == ["default", "b3"], "dyn_mlp's two sets", p["sets"])
    return j


def case_corpus_torch_2_15():
    j = sweep_corpus("2.15.0")
    # 2.15 has RunSingleThreaded: every mode runs.
    for p in j["packages"]:
        rows = {r["mode"]: r for r in p["rows"]}
        check(all(rows[m]["outcome"] == "pass" for m in MODES), f"{p['label']}: all modes", rows)


def case_corpus_torch_2_6():
    j = sweep_corpus("2.6.0")
    # 2.6 lacks RunSingleThreaded: those modes are skipped, saying why.
    for p in j["packages"]:
        rows = {r["mode"]: r for r in p["rows"]}
        check(rows["single_threaded"]["outcome"] == "skipped" and
              "RunSingleThreaded" in rows["single_threaded"]["message"], f"{p['label']}: skipped", rows)


def case_corpus_manifest():
    # The fixture manifests themselves are compat manifests ("models" with sets).
    lt = libtorch()
    args = []
    for release in ("2.15.0", "2.6.0"):
        args += ["--manifest", os.path.join(ARGS.fixtures, f"torch-{release}", "manifest.json")]
    rc, out, err, elapsed = cli("compat", "-j", "2", *args, extra_env={"AOTRUN_LIBTORCH": lt})
    print(out)
    print(f"corpus (both releases, -j 2): {elapsed:.2f} s")
    fails = check_failures_known(out)
    check(rc == (1 if fails else 0), f"corpus manifests: exit {rc}", out, err)
    n = sum(len(json.load(open(m))["models"]) for m in args[1::2])
    check(f"\n{n} packages" in out and f" {len(fails)} failed" in out, "both fixture manifests", out)


def case_inspect_pt2():
    lt = libtorch()
    for release, isa in (("2.15.0", "AVX2"), ("2.6.0", None)):
        path = os.path.join(ARGS.fixtures, f"torch-{release}", "mlp.pt2")
        _, out, err, _ = cli("inspect", path, extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
        check("AOTInductor .pt2 (bridged to package ABI 1.1)" in out, f"{release}: abi line", out)
        check("4 (40.6 KiB, held by the model library)" in out, f"{release}: constants", out)
        check("net.2.weight" in out, f"{release}: constants listed by their names in the model", out)
        check("not recorded in the archive" in out, f"{release}: torch release", out)
        check("0.0" not in out.split("symbols")[1].split("modes")[0], f"{release}: since 0.0", out)
        if isa:
            check(f"AOTI_CPU_ISA {isa}" in out, f"{release}: ISA", out)
        _, out, _, _ = cli("inspect", "--json", path, extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
        j = json.loads(out)
        check(j["format"] == "pt2" and j["pt2"]["torch_version"] is None, "inspect --json pt2", j.get("pt2"))
        check(j["constants"]["in_model_library"] is True, "constants in the .so", j["constants"])
        check(all(d["since"] is None for d in j["symbol_details"]), "no since for AOTInductor", j["symbol_details"])


def libtorch_release(lt):
    m = re.search(r"libtorch-(\d+\.\d+\.\d+)", os.path.realpath(lt))
    return m.group(1) if m else None


def case_inspect_link_findings_pt2():
    # A corpus package on the libtorch of its own release: every check satisfied.
    lt = libtorch()
    release = libtorch_release(lt)
    path = os.path.join(ARGS.fixtures, f"torch-{release}", "mlp.pt2") if release else ""
    if not os.path.exists(path):
        raise Skip(f"no corpus fixture for the release of AOTRUN_LIBTORCH={lt}")
    _, out, _, _ = cli("inspect", "--json", path, extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
    f = json.loads(out)["link_findings"]
    check(f["ok"] is True and f["shim"]["called"] > 0 and f["shim"]["missing"] == [], "shim satisfied", f)
    check(f["shim"]["libtorch"].endswith("libtorch_cpu.so"), "libtorch named", f)
    # The provider, as libaotrun answers it (aotrun_package_preview_provider):
    # the path in AOTRUN_LIBTORCH forces libtorch, whose library was checked.
    check(f["provider"]["name"] == "libtorch" and f["provider"]["library"] == f["shim"]["libtorch"]
          and "AOTRUN_LIBTORCH=" in f["provider"]["reason"], "provider", f)
    check(f["cpu"]["isa"] and f["cpu"]["missing"] == [], "cpu isa", f)
    check(any(v["family"] == "GLIBCXX" and v["missing"] == [] for v in f["symbol_versions"]), "GLIBCXX", f)
    _, out, _, _ = cli("inspect", path, extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
    check("all exported by" in out and "nothing found that refuses it" in out, "text findings", out)


def case_inspect_provider_shim():
    # Nothing set: the provider open would choose is aotrun's shim, asked of
    # libaotrun, and the model's imports are checked against its library.
    path = os.path.join(ARGS.fixtures, "torch-2.15.0", "mlp.pt2")
    unset = {"AOTRUN_LIBTORCH": "", "AOTRUN_PROVIDER": ""}
    _, out, _, _ = cli("inspect", "--json", path, extra_env=unset, expect=0)
    f = json.loads(out)["link_findings"]
    p = f["provider"]
    check(p["name"] == "shim" and "libaotrun_shim.so.1" in p["library"] and p["library"] == f["shim"]["libtorch"],
          "the shim and its library", f)
    check(f["ok"] is True and f["shim"]["missing"] == [], "all imports exported by the shim", f)
    _, out, _, _ = cli("inspect", path, extra_env=unset, expect=0)
    check("provider       shim: aotrun's shim implements all" in out, "text provider row", out)
    # Forcing libtorch with none configured: open refuses; inspect names the refusal as the provider's.
    _, out, err, _ = cli("inspect", "--json", path, extra_env={"AOTRUN_LIBTORCH": "", "AOTRUN_PROVIDER": "libtorch"},
                         expect=1)
    p = json.loads(out)["link_findings"]["provider"]
    check(p["name"] is None and p["library"] is None and "no libtorch is configured" in p["reason"]
          and p["reason"] in err, "the refusal as the provider", p, err)


def case_inspect_refused_pt2():
    # A 2.8 package against libtorch 2.6: refused, and inspect still says why, naming
    # the missing shim function and the release that first has it.
    lt = libtorch()
    old = os.environ.get("AOTRUN_LIBTORCH_2_6") or os.path.join(
        os.path.expanduser("~"), ".cache", "aotrun", "libtorch-2.6.0", "lib")
    if not os.path.exists(os.path.join(old, "libtorch_cpu.so")):
        raise Skip(f"no libtorch 2.6 at {old} (scripts/fetch-libtorch.sh 2.6.0, or set AOTRUN_LIBTORCH_2_6)")
    del lt
    path = os.path.join(ARGS.fixtures, "torch-2.8.0", "mlp.pt2")
    _, out, err, _ = cli("inspect", "--json", path, extra_env={"AOTRUN_LIBTORCH": old}, expect=1)
    check(err.startswith("aotrun: LOAD_FAILED: ") and "aoti_torch_new_tensor_handle" in err, "refusal", err)
    check("first in: aoti_torch_new_tensor_handle (torch 2.7 to 2.8)" in err, "release in the refusal", err)
    j = json.loads(out)
    check(j["error"]["code"] == "LOAD_FAILED", "error in stdout", j)
    f = j["link_findings"]
    check(f["ok"] is False and f["shim"]["missing"] ==
          [{"name": "aoti_torch_new_tensor_handle", "first_release": "torch 2.7 to 2.8"}], "missing shim", f)
    _, out, err, _ = cli("inspect", path, extra_env={"AOTRUN_LIBTORCH": old}, expect=1)
    check("was refused (LOAD_FAILED)" in out and "1 MISSING from" in out and
          "aoti_torch_new_tensor_handle (first in torch 2.7 to 2.8)" in out and "refused before dlopen" in out,
          "text findings of a refused package", out)


def case_bench_dynamic_dim():
    # An aotrun package with a dynamic leading dim says "batch".
    _, out, _, _ = cli("bench", "--iters", "5", "--warmup", "0", "--batch", "2", pkg("mlp"), expect=0)
    check("batch 2" in out, "mlp: batch", out)
    lt = libtorch()
    d = os.path.join(ARGS.fixtures, "torch-2.15.0")
    _, out, _, _ = cli("bench", "--iters", "5", "--warmup", "0", "--batch", "3", os.path.join(d, "dyn_mlp.pt2"),
                       extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
    check("batch 3" in out, "dyn_mlp: batch (dim 0)", out)
    _, out, _, _ = cli("bench", "--iters", "5", "--warmup", "0", os.path.join(d, "mlp.pt2"),
                       extra_env={"AOTRUN_LIBTORCH": lt}, expect=0)
    check("batch" not in out.split("config")[1].split("\n")[0] and "static shapes" in out,
          "mlp.pt2: no dynamic dim, no batch", out)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--packages", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("case")
    ARGS = parser.parse_args()
    fn = globals().get("case_" + ARGS.case)
    if fn is None:
        print(f"unknown case {ARGS.case}", file=sys.stderr)
        return 2
    os.makedirs(ARGS.work, exist_ok=True)
    try:
        fn()
    except Skip as e:
        print(f"SKIP {ARGS.case}: {e}")
        return SKIP
    except TestFailure as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
