#!/usr/bin/env python3
"""End-to-end tests of the `aotrun` command line.

Each test case runs the built CLI against the example packages that the sdk
helper builds under <build>/packages/ (target `aotrun_packages`) and checks
exit codes, stdout and stderr. Usage:

    cli_test.py --cli PATH --packages DIR --work DIR CASE

Only the standard library is used: .npy and .safetensors files are read and
written here independently of the CLI's own code, so the two check each other.
"""

import argparse
import glob
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import time

ARGS = None
SINGLE = "aotrun_pkg_container_run_single_threaded"
REQUIRED_SYMBOLS = [
    "aotrun_pkg_abi_version",
    "aotrun_pkg_get_last_error",
    "aotrun_pkg_container_create",
    "aotrun_pkg_container_destroy",
    "aotrun_pkg_container_get_num_inputs",
    "aotrun_pkg_container_get_num_outputs",
    "aotrun_pkg_container_get_input_spec",
    "aotrun_pkg_container_get_output_spec",
    "aotrun_pkg_container_get_output_shapes",
    "aotrun_pkg_container_run",
]
DTYPES = {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "float16",
          "bfloat16", "bool", "uint16", "uint32", "uint64"}


class TestFailure(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        details = "\n".join(str(c) for c in context)
        raise TestFailure(what + ("\n" + details if details else ""))


def env(extra=None):
    e = dict(os.environ)
    e.pop("AOTRUN_LOG", None)  # the default level (warn) is part of what is tested
    e.pop("AOTRUN_TEST_FAULT_EVERY", None)  # fault_sync must fail on its default run
    e.pop("AOTRUN_TEST_SPIN_US", None)
    e.update(extra or {})
    return e


def cli(*args, expect=None, extra_env=None):
    """Runs the CLI; returns (rc, stdout, stderr). Checks rc if expect is set."""
    proc = subprocess.run([ARGS.cli, *args], capture_output=True, text=True,
                          env=env(extra_env), timeout=100)
    if expect is not None:
        check(proc.returncode == expect,
              f"aotrun {' '.join(args)}: exit {proc.returncode}, expected {expect}",
              "stdout:", proc.stdout, "stderr:", proc.stderr)
    return proc.returncode, proc.stdout, proc.stderr


def cli_json(*args, expect=0, extra_env=None):
    _, out, err = cli(*args, expect=expect, extra_env=extra_env)
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise TestFailure(f"aotrun {' '.join(args)}: stdout is not JSON: {e}\n{out}\n{err}")


def pkg(name):
    path = os.path.join(ARGS.packages, name)
    check(os.path.exists(path),
          f"package {path} does not exist: build the packages first "
          f"(cmake --build <build> --target aotrun_packages)")
    return path


def missing_symbols_pkg():
    hits = sorted(glob.glob(os.path.join(ARGS.packages, "**", "*missing_symbols*.so"),
                            recursive=True))
    check(hits, f"no *missing_symbols*.so under {ARGS.packages}: build aotrun_packages first")
    return hits[0]


def nonexistent():
    return os.path.join(ARGS.packages, "no_such_package_here")


def workdir(name):
    path = os.path.join(ARGS.work, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def manifest(name):
    with open(os.path.join(pkg(name), "manifest.json")) as f:
        return json.load(f)


def safetensors_totals(path):
    """(tensor count, data bytes) of a safetensors file, read from its header."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    count, nbytes = 0, 0
    for key, value in header.items():
        if key == "__metadata__":
            continue
        begin, end = value["data_offsets"]
        count += 1
        nbytes += end - begin
    return count, nbytes


def safetensors_write_f32(path, tensors):
    """Writes float32 tensors {name: (shape, values)} as a .safetensors file."""
    header, offset = {}, 0
    for name, (shape, values) in tensors.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + 4 * len(values)]}
        offset += 4 * len(values)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, values in tensors.values():
            f.write(struct.pack("<%df" % len(values), *values))


def weight_id_set(path, s, names=("w", "b")):
    """weight_id's weights for set s (every w = s, every b = 1000 s): its
    output is then y = x + 1001 s."""
    all_ = {"w": ([4096], [float(s)] * 4096), "b": ([4], [1000.0 * s] * 4)}
    safetensors_write_f32(path, {n: all_[n] for n in names})
    return path


# --- .npy, written and read independently of the CLI -----------------------

NPY_DESCR = {"float32": "<f4", "float64": "<f8", "int32": "<i4", "int64": "<i8"}
NPY_FMT = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q"}


def npy_read(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:6] == b"\x93NUMPY", f"{path}: no .npy magic")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    check((start + hlen) % 64 == 0, f"{path}: data not 64-byte aligned ({start + hlen})")
    header = data[start:start + hlen].decode("latin1")
    check(header.endswith("\n"), f"{path}: header does not end with a newline", header)
    meta = eval(header, {"__builtins__": {}}, {"True": True, "False": False})  # a dict literal
    body = data[start + hlen:]
    fmt = NPY_FMT[meta["descr"]]
    count = 1
    for d in meta["shape"]:
        count *= d
    check(len(body) == count * struct.calcsize(fmt), f"{path}: {len(body)} data bytes for "
          f"shape {meta['shape']}")
    return meta, list(struct.unpack("<%d%s" % (count, fmt), body))


def npy_write(path, descr, shape, values, major=1, fortran=False):
    shape_txt = "(" + "".join(f"{d}, " for d in shape).rstrip(", ") + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_txt)
    lb = 2 if major == 1 else 4
    pad = (64 - (6 + 2 + lb + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, 0]))
        f.write(struct.pack("<H" if major == 1 else "<I", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), NPY_FMT[descr]), *values))


# --- cases ------------------------------------------------------------------

def case_usage_errors():
    cases = [
        ([], "missing command"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["run", "--bogus", "x"], "unknown option '--bogus'"),
        (["inspect", "--json=yes", "x"], "takes no value"),
        (["run"], "missing package path"),
        (["inspect", "a", "b"], "unexpected argument 'b'"),
        (["run", "--batch", "abc", "x"], "--batch"),
        (["run", "--mode", "turbo", "x"], "unknown mode 'turbo'"),
        (["run", "--input", "nofile", "x"], "NAME=FILE"),
        (["run", "--input", "a=1.npy", "--input", "a=2.npy", "x"], "given twice"),
        (["bench", "--iters", "5", "--duration", "1", "x"], "exclude each other"),
        (["bench", "--threads", "0", "x"], "--threads"),
        (["--log", "loud", "inspect", "x"], "unknown log level 'loud'"),
        (["inspect", "--log", "loud", "x"], "unknown log level 'loud'"),
        (["--bogus"], "unknown option '--bogus'"),
        (["bench", "--inflight", "2", "x"], "--inflight needs --mode async"),
        (["bench", "--depth", "2", "x"], "--depth needs --mode async"),
        (["bench", "--mode", "async", "--inflight", "0", "x"], "--inflight"),
        (["bench", "--mode", "async", "--async-mode", "async", "x"], "unknown --async-mode 'async'"),
        (["bench", "--mode", "turbo", "x"], "graph, async)"),
        (["check", "--runs", "0", "x"], "--runs"),
        (["check", "--mode", "graph", "x"], "unknown option '--mode'"),
        (["check"], "missing package path"),
        # How options are read (args.cpp, CLI11 underneath).
        (["--log"], "option '--log' needs a value"),
        (["run", "x", "--values"], "option '--values' needs a value"),
        (["--version", "--version"], "option '--version' given more than once"),
        (["inspect", "--json", "--json", "x"], "option '--json' given more than once"),
        (["inspect", "--no-verify=1", "x"], "option '--no-verify' takes no value"),
        (["inspect", "--bogus=1", "x"], "unknown option '--bogus'"),
        (["inspect", "-x", "x"], "unknown option '-x'"),
        (["run", "-5"], "unknown option '-5'"),
        (["--log", "warn", "--bogus", "run", "x"], "unknown option '--bogus'"),
    ]
    for args, needle in cases:
        _, out, err = cli(*args, expect=2)
        check(needle in err, f"aotrun {' '.join(args)}: stderr lacks '{needle}'", err)
        check("--help" in err, f"aotrun {' '.join(args)}: stderr does not point to --help", err)
        check(out == "", f"aotrun {' '.join(args)}: usage error wrote to stdout", out)
    # `--` ends the options, of the tool and of a command: what follows is
    # the command, or the package path, whatever it looks like.
    for args in (["--log", "off", "--", "inspect", "--", "-5"], ["inspect", "--", "--json"]):
        _, out, err = cli(*args, expect=1)
        check("NOT_FOUND" in err and f"'{args[-1]}'" in err, f"aotrun {' '.join(args)}: {err}")


def case_help():
    _, out, _ = cli("--help", expect=0)
    check("Usage: aotrun" in out and "Exit status" in out, "tool help incomplete", out)
    for cmd in ("inspect", "run", "bench", "check"):
        _, out, _ = cli(cmd, "--help", expect=0)
        check(f"Usage: aotrun {cmd}" in out, f"{cmd} --help", out)
        _, out2, _ = cli("help", cmd, expect=0)
        check(out == out2, f"'aotrun help {cmd}' differs from '{cmd} --help'")
    _, out, _ = cli("--version", expect=0)
    check(out.startswith("aotrun "), "--version", out)


def check_common_inspect(j, name):
    for key in ("format", "name", "device", "abi_version", "symbols", "modes", "inputs",
                "outputs", "constants", "hashes_verified", "load_ns"):
        check(key in j, f"inspect --json of {name}: key '{key}' missing", j)
    check(j["format"] == "aotrun-dir", f"{name}: format {j['format']}")
    m = manifest(name)
    check(j["name"] == m["name"], f"{name}: name {j['name']} != manifest {m['name']}")
    check(j["device"] == m["device"], f"{name}: device {j['device']} != manifest {m['device']}")
    check(j["abi_version"] == m["abi_version"], f"{name}: abi {j['abi_version']} != manifest")
    for sym in REQUIRED_SYMBOLS:
        check(j["symbols"].get(sym) is True, f"{name}: required symbol {sym} not found", j["symbols"])
    details = {d["name"]: d for d in j["symbol_details"]}
    check(details[SINGLE]["required"] is False and details[SINGLE]["since"] == "1.1",
          f"{name}: {SINGLE} should be optional since 1.1", details[SINGLE])
    for sym in REQUIRED_SYMBOLS:
        check(details[sym]["required"] is True and details[sym]["since"] == "1.0",
              f"{name}: {sym} should be required since 1.0", details[sym])
    for mode in ("threaded", "single_threaded", "graph"):
        check(isinstance(j["modes"][mode]["available"], bool), f"{name}: modes.{mode}")
        check(j["modes"][mode]["available"] or j["modes"][mode]["reason"],
              f"{name}: mode {mode} unavailable without a reason", j["modes"][mode])
    check(j["modes"]["threaded"]["available"] is True, f"{name}: threaded unavailable")
    for t in j["inputs"] + j["outputs"]:
        check(set(t) >= {"name", "dtype", "shape"}, f"{name}: tensor entry {t}")
        check(t["dtype"] in DTYPES, f"{name}: dtype {t['dtype']}")
        check(all(isinstance(d, int) and d >= -1 for d in t["shape"]), f"{name}: shape {t}")
    # Constants: what the loader reports must match the weight files themselves.
    count, nbytes = 0, 0
    for w in m.get("weights", []):
        c, b = safetensors_totals(os.path.join(pkg(name), w))
        count, nbytes = count + c, nbytes + b
    c = j["constants"]
    check((c["count"], c["bytes"]) == (count, nbytes) and len(c["list"]) == count and
          sum(e["bytes"] for e in c["list"]) == nbytes,
          f"{name}: constants {c}, weight files hold {count} tensors, {nbytes} bytes")
    check(j["hashes_verified"] is True, f"{name}: hashes not verified by default")
    load = j["load_ns"]
    check(set(load) == {"open", "verify", "dlopen", "weights", "metadata"}, f"load_ns {load}")
    check(load["open"] > 0 and load["open"] >= load["dlopen"], f"{name}: load_ns {load}")
    # --no-verify is passed through to the library.
    j2 = cli_json("inspect", "--json", "--no-verify", pkg(name))
    check(j2["hashes_verified"] is False, f"{name}: --no-verify still verified hashes")


def case_inspect_json_abi11():
    j = cli_json("inspect", "--json", pkg("mlp"))
    check_common_inspect(j, "mlp")
    check(j["abi_version"] == "1.1", f"mlp abi {j['abi_version']}")
    check(j["symbols"][SINGLE] is True, f"mlp: {SINGLE} not found", j["symbols"])
    st = j["modes"]["single_threaded"]
    check(st == {"available": True, "reason": ""}, f"mlp: single_threaded {st}")
    check(len(j["inputs"]) >= 1 and len(j["outputs"]) >= 1, "mlp has no inputs/outputs", j)


def case_inspect_json_abi10():
    j = cli_json("inspect", "--json", pkg("mlp_abi10"))
    check_common_inspect(j, "mlp_abi10")
    check(j["abi_version"] == "1.0", f"mlp_abi10 abi {j['abi_version']}")
    check(j["symbols"][SINGLE] is False, f"mlp_abi10: {SINGLE} reported found")
    for mode in ("single_threaded", "graph"):
        m = j["modes"][mode]
        check(m["available"] is False, f"mlp_abi10: {mode} available", m)
        check(SINGLE in m["reason"], f"mlp_abi10: {mode} reason does not name {SINGLE}", m)
    # Same model, older ABI: the interface must be the same as mlp's.
    j11 = cli_json("inspect", "--json", pkg("mlp"))
    check(j["inputs"] == j11["inputs"] and j["outputs"] == j11["outputs"],
          "mlp and mlp_abi10 differ in inputs/outputs")


def case_inspect_text():
    j = cli_json("inspect", "--json", pkg("mlp"))
    _, out, _ = cli("inspect", pkg("mlp"), expect=0)
    for needle in ("abi", "1.1", "aotrun-dir", SINGLE, "single_threaded", "verified"):
        check(needle in out, f"inspect text lacks '{needle}'", out)
    for t in j["inputs"] + j["outputs"]:
        check(t["name"] in out and t["dtype"] in out, f"inspect text lacks {t}", out)
        if t["shape"] and t["shape"][0] == -1:
            check("[batch" in out, "dynamic leading dim not shown as 'batch'", out)
        shape = ", ".join("batch" if (d == -1 and i == 0) else "?" if d == -1 else str(d)
                          for i, d in enumerate(t["shape"]))
        check(f"[{shape}]" in out, f"inspect text lacks shape [{shape}]", out)
    check("-1" not in out.split("symbols")[0].split("inputs")[1],
          "text output shows -1 for a dynamic dim", out)


def case_inspect_noop():
    for name, abi in (("noop", "1.1"), ("noop_abi10", "1.0")):
        j = cli_json("inspect", "--json", pkg(name))
        check_common_inspect(j, name)
        check(j["abi_version"] == abi, f"{name}: abi {j['abi_version']}")
        check(j["symbols"][SINGLE] is (abi == "1.1"), f"{name}: {SINGLE} = {j['symbols'][SINGLE]}")
        check(j["modes"]["single_threaded"]["available"] is (abi == "1.1"),
              f"{name}: single_threaded availability", j["modes"])


def case_inspect_missing_symbols():
    path = missing_symbols_pkg()
    rc, out, err = cli("inspect", "--json", path, expect=1)
    check(err.startswith("aotrun: MISSING_SYMBOL: "), "missing-symbols package", err)
    check("aotrun_pkg_" in err, "MISSING_SYMBOL message does not name the symbol", err)
    # stdout: the refusal and the pre-dlopen findings, which found nothing to refuse it for.
    j = json.loads(out)
    check(j["error"]["code"] == "MISSING_SYMBOL" and j["path"] == path, "refusal in stdout", j)
    check(j["link_findings"]["ok"] is True, "findings of a refused package", j)


def case_inspect_link_findings():
    # An aotrun package: its symbol-version needs, each against this process's library.
    j = cli_json("inspect", "--json", pkg("mlp"))
    f = j["link_findings"]
    check(f["library"] == manifest("mlp")["library"] and f["ok"] is True and f["elf_error"] is None,
          "findings of mlp", f)
    families = {v["family"]: v for v in f["symbol_versions"]}
    for fam in ("GLIBCXX", "GLIBC"):
        check(fam in families, f"no {fam} needs listed", f)
        v = families[fam]
        check(v["newest_needed"].startswith(fam + "_") and v["loaded"] and v["newest_available"]
              and v["missing"] == [], f"{fam} row", v)
    check(f["shim"]["called"] == 0 and f["cpu"]["isa"] is None, "an aotrun package calls no shim", f)
    _, out, _ = cli("inspect", pkg("mlp"), expect=0)
    block = out.split("pre-dlopen checks")[1]
    check("GLIBCXX" in block and "needs up to GLIBCXX_3.4." in block and ": ok" in block, "text GLIBCXX row", out)
    check("nothing found that refuses it" in block, "text verdict", out)


def case_inspect_not_found():
    _, out, err = cli("inspect", nonexistent(), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "nonexistent path", err)
    check("no_such_package_here" in err, "NOT_FOUND message does not name the path", err)
    check(out == "", "failure printed to stdout", out)


def case_run_summary():
    j = cli_json("inspect", "--json", pkg("mlp"))
    _, out, err = cli("run", pkg("mlp"), expect=0)
    check("outputs" in out and "MIN" in out and "MEAN" in out, "run summary", out)
    for t in j["outputs"]:
        shape = "[" + ", ".join("1" if d == -1 else str(d) for d in t["shape"]) + "]"
        check(t["name"] in out and shape in out and t["dtype"] in out,
              f"run summary lacks output {t['name']} {t['dtype']} {shape}", out)
    check("mode" in out and "threaded" in out, "run summary lacks the mode", out)
    check("warn" not in err, "plain run of a 1.1 package warned", err)


def case_run_json():
    spec = cli_json("inspect", "--json", pkg("mlp"))
    a = cli_json("run", "--json", "--batch", "3", pkg("mlp"))
    check(a["batch"] == 3 and a["mode"] == "threaded", "run --json header", a)
    check(a["stats"]["runs"] == 1 and a["stats"]["failures"] == 0, "run stats", a["stats"])
    load = a["load_ns"]
    check(set(load) == {"open", "verify", "dlopen", "weights", "metadata"}, "run load_ns keys", load)
    check(load["open"] > 0 and load["open"] >= load["dlopen"], "run load_ns", load)
    for s, o in zip(spec["outputs"], a["outputs"]):
        want = [3 if d == -1 else d for d in s["shape"]]
        check(o["shape"] == want, f"output {o['name']} shape {o['shape']}, want {want}")
        numel = 1
        for d in want:
            numel *= d
        check(len(o["first_values"]) == min(6, numel), "first_values length", o)
        check(o["min"] <= o["mean"] <= o["max"], "min <= mean <= max", o)
        check(o["min"] <= min(o["first_values"]) and max(o["first_values"]) <= o["max"],
              "first values outside [min, max]", o)
    for i in a["inputs"]:
        check(i["source"] == "random (seed 0)", "input source", i)
    b = cli_json("run", "--json", "--batch", "3", pkg("mlp"))
    check(a["outputs"] == b["outputs"], "same seed, different outputs", a["outputs"], b["outputs"])
    c = cli_json("run", "--json", "--batch", "3", "--seed", "99", pkg("mlp"))
    check(a["outputs"] != c["outputs"], "--seed had no effect")


def case_run_fallback_warning():
    _, out, err = cli("run", "--mode", "single_threaded", pkg("mlp_abi10"), expect=0)
    check(SINGLE in err, "fallback warning on stderr does not name the symbol", err)
    check("1.0" in err, "fallback warning does not give the package's ABI version", err)
    check(SINGLE not in out.split("outputs")[1], "warning leaked into the output table", out)
    check("requested single_threaded" in out, "run output does not show the fallback", out)
    # --log maps to aotrun_set_log_level, both as a global and a command option.
    for args in (["--log", "off", "run"], ["--log=error", "run"], ["run", "--log", "off"]):
        _, _, err = cli(*args, "--mode", "single_threaded", pkg("mlp_abi10"), expect=0)
        check(SINGLE not in err, f"{args}: warning printed despite the log level", err)
    j = cli_json("run", "--json", "--mode", "single_threaded", pkg("mlp_abi10"))
    check(j["stats"]["requested_mode"] == "single_threaded", "requested mode", j["stats"])
    check(j["stats"]["fallback_runs"] == 1 and SINGLE in j["stats"]["fallback_reason"],
          "fallback not counted in stats", j["stats"])


def case_run_strict_unsupported():
    _, out, err = cli("run", "--strict", "--mode", "single_threaded", pkg("mlp_abi10"), expect=1)
    check(err.startswith("aotrun: UNSUPPORTED: "), "strict fallback", err)
    check(out == "", "failure printed to stdout", out)
    # Strict with a mode the package has is fine.
    cli("run", "--strict", "--mode", "single_threaded", pkg("mlp"), expect=0)


def case_run_not_found():
    _, out, err = cli("run", nonexistent(), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "run nonexistent", err)
    _, _, err = cli("bench", "--iters", "1", nonexistent(), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "bench nonexistent", err)


def case_run_bad_input():
    d = workdir("bad_input")
    spec = cli_json("inspect", "--json", pkg("mlp"))
    first = spec["inputs"][0]
    _, _, err = cli("run", "--input", "nosuch=x.npy", pkg("mlp"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "'nosuch'" in err and first["name"] in err,
          "unknown input name", err)
    missing = os.path.join(d, "missing.npy")
    _, _, err = cli("run", "--input", f"{first['name']}={missing}", pkg("mlp"), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: ") and "missing.npy" in err, "missing npy", err)
    garbage = os.path.join(d, "garbage.npy")
    with open(garbage, "wb") as f:
        f.write(b"definitely not numpy")
    _, _, err = cli("run", "--input", f"{first['name']}={garbage}", pkg("mlp"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "garbage.npy" in err, "garbage npy", err)
    shape = [2 if s == -1 else s for s in first["shape"]]
    n = 1
    for s in shape:
        n *= s
    other = "<i8" if first["dtype"] != "int64" else "<f8"
    wrong = os.path.join(d, "wrong_dtype.npy")
    npy_write(wrong, other, shape, [0] * n)
    _, _, err = cli("run", "--input", f"{first['name']}={wrong}", pkg("mlp"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "dtype" in err, "wrong dtype", err)
    if first["dtype"] in NPY_DESCR:
        fortran = os.path.join(d, "fortran.npy")
        npy_write(fortran, NPY_DESCR[first["dtype"]], shape, [0] * n, fortran=True)
        _, _, err = cli("run", "--input", f"{first['name']}={fortran}", pkg("mlp"), expect=1)
        check("Fortran" in err, "Fortran-order file accepted", err)
        short = os.path.join(d, "short.npy")
        npy_write(short, NPY_DESCR[first["dtype"]], shape + [1], [0] * n)
        _, _, err = cli("run", "--input", f"{first['name']}={short}", pkg("mlp"), expect=1)
        check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "shape" in err, "wrong rank", err)


def case_runtime_failure():
    """A model that fails at run time: exit 1 with the library's PACKAGE code."""
    _, out, err = cli("run", pkg("throwing"), expect=1)
    check(err.startswith("aotrun: PACKAGE: ") and "throwing" in err, "throwing package", err)
    check(out == "", "failure printed to stdout", out)
    # fault_sync fails its 7th run: once in the warm-up, once in the measured loop.
    for extra in ([], ["--warmup", "0", "--threads", "2"]):
        _, out, err = cli("bench", "--iters", "20", *extra, pkg("fault_sync"), expect=1)
        check(err.startswith("aotrun: PACKAGE: ") and "injected failure" in err,
              f"bench {extra} on a failing package", err)
        check(out == "", "failure printed to stdout", out)


def case_npy_round_trip():
    d = workdir("round_trip")
    a = cli_json("run", "--json", "--batch", "4", "--seed", "5", "--save-inputs",
                 os.path.join(d, "in"), "--output-dir", os.path.join(d, "out_a"), pkg("mlp"))
    inputs = []
    for i in a["inputs"]:
        meta, _ = npy_read(i["file"])
        check(list(meta["shape"]) == i["shape"] and meta["fortran_order"] is False,
              "saved input header", meta, i)
        inputs += ["--input", f"{i['name']}={i['file']}"]
    # No --batch: the batch comes from the files.
    b = cli_json("run", "--json", *inputs, "--output-dir", os.path.join(d, "out_b"), pkg("mlp"))
    check(b["batch"] == 4, "batch not taken from the input files", b)
    for i in b["inputs"]:
        check(i["source"].startswith("file "), "input not read from file", i)
    check(len(a["outputs"]) == len(b["outputs"]), "output count")
    for oa, ob in zip(a["outputs"], b["outputs"]):
        meta, values = npy_read(oa["file"])
        check(meta["descr"] == NPY_DESCR[oa["dtype"]] and list(meta["shape"]) == oa["shape"],
              "output .npy header", meta, oa)
        check(len(values) and abs(min(values) - oa["min"]) < 1e-6 * max(1, abs(oa["min"])),
              ".npy data does not match the printed min", oa)
        with open(oa["file"], "rb") as fa, open(ob["file"], "rb") as fb:
            check(fa.read() == fb.read(), f"output {oa['name']} differs between random and "
                  ".npy inputs with the same data")


def case_npy_external():
    """Files written by this script (format 1.0 and 2.0) are read like the CLI's own."""
    d = workdir("external")
    a = cli_json("run", "--json", "--batch", "2", "--save-inputs", os.path.join(d, "in"),
                 "--output-dir", os.path.join(d, "out_a"), pkg("mlp"))
    for major in (1, 2):
        inputs = []
        for i in a["inputs"]:
            meta, values = npy_read(i["file"])
            path = os.path.join(d, f"{i['name']}_v{major}.npy")
            npy_write(path, meta["descr"], list(meta["shape"]), values, major=major)
            inputs += ["--input", f"{i['name']}={path}"]
        out_dir = os.path.join(d, f"out_v{major}")
        b = cli_json("run", "--json", *inputs, "--output-dir", out_dir, pkg("mlp"))
        for oa, ob in zip(a["outputs"], b["outputs"]):
            check(npy_read(oa["file"]) == npy_read(ob["file"]),
                  f"format {major}.0 input gave different output {oa['name']}")


def case_bench_text():
    _, out, _ = cli("bench", "--iters", "50", "--warmup", "2", "--threads", "2", pkg("mlp"),
                    expect=0)
    for needle in ("latency", "p50", "p90", "p99", "throughput", "calls/s", "load", "open",
                   "100 in", "runs 104"):
        check(needle in out, f"bench text lacks '{needle}'", out)


def case_bench_json():
    j = cli_json("bench", "--json", "--iters", "30", "--warmup", "2", "--threads", "2",
                 pkg("mlp"))
    check(j["calls"] == 60, "calls", j)
    check(j["stats"]["runs"] == 60 + 2 * 2, "runner stats count warmup + measured", j["stats"])
    check(j["config"]["num_models"] == 2, "num_models defaults to threads", j["config"])
    lat = j["latency_ns"]
    check(0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], "latency", lat)
    check(j["throughput"]["calls_per_s"] > 0 and j["wall_s"] > 0, "throughput", j)
    check(j["load_ns"]["open"] > 0, "load timings", j["load_ns"])
    check(j["effective_mode"] == "threaded", "mode", j)
    f = cli_json("bench", "--json", "--iters", "10", "--warmup", "0", "--mode", "single_threaded",
                 pkg("mlp_abi10"))
    check(f["stats"]["requested_mode"] == "single_threaded", "requested", f["stats"])
    check(f["stats"]["fallback_runs"] == f["stats"]["runs"] == 10, "fallback runs", f["stats"])
    s = cli_json("bench", "--json", "--duration", "0.3", "--batch", "2", pkg("mlp"))
    check(s["calls"] > 0 and 0.25 < s["wall_s"] < 5, "--duration", s)
    check(abs(s["throughput"]["samples_per_s"] - 2 * s["throughput"]["calls_per_s"]) < 1e-6 *
          s["throughput"]["samples_per_s"], "samples/s = batch * calls/s", s["throughput"])


def case_bench_graph():
    j = cli_json("bench", "--json", "--mode", "graph", "--iters", "20", "--warmup", "0", pkg("mlp"))
    g = j["stats"]["graph"]
    check(j["effective_mode"] == "graph" and j["stats"]["runs"] == 20, "graph bench", j["stats"])
    # One input shape: one capture, one cached graph, replays after the warm-up.
    check(g["captures"] == 1 and g["cached"] == 1 and g["replays"] >= 1 and g["warmups"] >= 1,
          "graph counters", g)
    _, out, _ = cli("bench", "--mode", "graph", "--iters", "5", pkg("mlp"), expect=0)
    check("graph" in out and "1 capture " in out and "1 cached" in out, "graph line in text", out)
    # Without run_single_threaded, graph mode runs eagerly through run.
    f = cli_json("bench", "--json", "--mode", "graph", "--iters", "10", "--warmup", "0",
                 "--log", "off", pkg("mlp_abi10"))
    check(f["effective_mode"] == "threaded" and f["stats"]["fallback_runs"] == 10, "graph fallback",
          f["stats"])
    check(f["stats"]["graph"]["captures"] == 0 and SINGLE in f["stats"]["fallback_reason"],
          "graph fallback counters", f["stats"])


def case_bench_piped_no_progress():
    _, out, err = cli("bench", "--duration", "1.5", pkg("mlp"), expect=0)
    check("\r" not in err and "bench:" not in err, "progress drawn on a pipe", repr(err))
    # On a terminal, a run longer than a second draws the progress line.
    master, slave = pty.openpty()
    proc = subprocess.Popen([ARGS.cli, "bench", "--duration", "1.8", pkg("mlp")],
                            stdout=subprocess.PIPE, stderr=slave, env=env())
    os.close(slave)
    chunks = []
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    tty = b"".join(chunks).decode(errors="replace")
    check(proc.returncode == 0, "bench on a terminal failed", tty)
    check("bench:" in tty and "\r" in tty, "no progress line on a terminal", repr(tty))
    check("latency" in out.decode(), "bench output missing with a terminal stderr")


# --- asynchronous bench ------------------------------------------------------

SPIN = {"AOTRUN_TEST_SPIN_US": "200"}


def check_async_counts(j, what):
    a = j["stats"]["async"]
    total = j["calls"] + j["config"]["warmup"] * j["config"]["threads"]
    check(a["submitted"] == a["completed"] == total and a["failed"] == 0 and a["inflight"] == 0,
          f"{what}: every submitted run (measured + warm-up) completes", a, j["calls"])
    check(j["stats"]["runs"] == total, f"{what}: runner runs", j["stats"])
    check(a["would_block"] == 0, f"{what}: blocking submissions are never refused", a)


def case_bench_async_window():
    """counting spins 200 us per run: the window bounds what is in flight."""
    # Four submitting threads, two runs in flight each: 8 wanted, 2 allowed.
    # (With two threads a submitter blocked only if the scheduler let both
    # want a slot at once; on a fast 2-core host it once did not.)
    j = cli_json("bench", "--json", "--mode", "async", "--inflight", "2", "--threads", "4",
                 "--iters", "20", "--warmup", "3", pkg("counting"), extra_env=SPIN)
    c = j["config"]
    check(c["mode"] == "async" and c["async_mode"] == "threaded" and c["max_inflight"] == 2
          and c["depth"] == 2, "async config", c)
    check(j["calls"] == 80, "measured runs", j)
    check_async_counts(j, "counting")
    a = j["stats"]["async"]
    check(j["stats"]["max_inflight"] == 2, "window size in stats", j["stats"])
    # Four threads keep two runs each: the window (2) is what limits, and it is reached.
    check(1 <= a["peak_inflight"] <= 2, "peak in-flight exceeds --inflight", a)
    check(a["submit_blocked_ns"] > 0, "8 wanted in flight, 2 allowed: submitters must block", a)
    lat = j["latency_ns"]
    # Submit to completion can be no shorter than the package's 200 us spin.
    check(200_000 <= lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"], "async latency", lat)
    # The default window is 2 x models and the ring follows it.
    d = cli_json("bench", "--json", "--mode", "async", "--num-models", "3", "--iters", "20",
                 "--warmup", "0", pkg("counting"), extra_env=SPIN)
    check(d["stats"]["max_inflight"] == 6 and d["config"]["depth"] == 6, "default window", d["config"])
    check(d["stats"]["async"]["peak_inflight"] <= 6, "peak within the default window", d["stats"])
    check_async_counts(d, "default window")
    _, out, _ = cli("bench", "--mode", "async", "--inflight", "2", "--iters", "20", pkg("counting"),
                    expect=0, extra_env=SPIN)
    for needle in ("async over threaded (window 2, 2 in flight per thread)", "submit to completion",
                   "completed 30", "peak in-flight ", "of 2", "submit blocked"):
        check(needle in out, f"async bench text lacks '{needle}'", out)


def case_bench_async_modes():
    """Asynchronous runs work over every runner mode."""
    for mode in ("threaded", "single_threaded", "graph"):
        j = cli_json("bench", "--json", "--mode", "async", "--async-mode", mode, "--iters", "15",
                     "--warmup", "2", "--depth=3", pkg("mlp"))
        check(j["effective_mode"] == mode and j["config"]["depth"] == 3, f"async over {mode}", j)
        check_async_counts(j, f"async over {mode}")
        if mode == "graph":
            g = j["stats"]["graph"]
            check(g["captures"] == 1 and g["replays"] >= 1, "async graph replays", g)
    s = cli_json("bench", "--json", "--mode", "async", "--duration", "0.3", pkg("mlp"))
    check(s["calls"] > 0 and s["config"]["duration_s"] == 0.3, "async --duration", s)
    check_async_counts(s, "async --duration")
    # A run that fails on its stream is reported through its event.
    _, out, err = cli("bench", "--mode", "async", "--iters", "20", pkg("fault_async"), expect=1)
    check(err.startswith("aotrun: PACKAGE: ") and "injected failure" in err, "async failure", err)
    check(out == "", "failure printed to stdout", out)


# --- check --------------------------------------------------------------------

MODES = ("threaded", "single_threaded", "graph", "async")


def case_check_all_modes():
    j = cli_json("check", "--json", "--batch", "3", pkg("mlp"))
    check(j["identical"] is True and j["mismatches"] == 0 and j["compared_modes"] == 4, "check", j)
    check(list(j["modes"]) == list(MODES), "modes reported", list(j["modes"]))
    outputs = [o["name"] for o in cli_json("inspect", "--json", pkg("mlp"))["outputs"]]
    for mode in MODES:
        m = j["modes"][mode]
        check(m["status"] == "compared", f"{mode} not compared", m)
        check(m["stats"]["runs"] == j["runs"] == 3, f"{mode}: runs", m["stats"])
        check([o["name"] for o in m["outputs"]] == outputs, f"{mode}: outputs", m)
        for o in m["outputs"]:
            want = 2 if mode == "threaded" else 3  # threaded run 1 is the baseline itself
            check(o["vs_threaded"] == {"identical": True, "runs": want, "mismatched_runs": 0},
                  f"{mode}: {o['name']}", o)
    check(j["modes"]["async"]["async"] is True and j["modes"]["async"]["stats"]["async"]["completed"] == 3,
          "async mode went through run_async", j["modes"]["async"])
    g = j["modes"]["graph"]["stats"]["graph"]
    check(g["captures"] == 1 and g["replays"] >= 1, "graph mode compared no replay", g)
    _, out, err = cli("check", pkg("mlp"), expect=0)
    check("identical in all 4 compared modes (0 skipped)" in out, "check text", out)
    check("replay" in out and "[1, 256]" in out, "check text details", out)
    check(err == "", "check wrote to stderr", err)


def case_check_skipped_modes():
    j = cli_json("check", "--json", pkg("mlp_abi10"))
    check(j["identical"] is True and j["compared_modes"] == 2, "mlp_abi10 check", j)
    spec = cli_json("inspect", "--json", pkg("mlp_abi10"))
    for mode in ("single_threaded", "graph"):
        m = j["modes"][mode]
        check(m == {"status": "skipped", "reason": spec["modes"][mode]["reason"]},
              f"{mode}: not skipped with the library's reason", m)
        check(SINGLE in m["reason"], f"{mode}: reason does not name {SINGLE}", m)
    for mode in ("threaded", "async"):
        check(j["modes"][mode]["status"] == "compared", f"{mode} skipped", j["modes"][mode])
    _, out, err = cli("check", pkg("mlp_abi10"), expect=0)
    check("skipped: " + spec["modes"]["graph"]["reason"] in out, "skip reason in text", out)
    check("(2 skipped)" in out, "skip count in text", out)
    check(err == "", "skipped modes must not warn (strict runners)", err)
    # Asynchronous runs over a mode the package lacks are skipped too.
    k = cli_json("check", "--json", "--async-mode", "graph", pkg("mlp_abi10"))
    check(k["modes"]["async"] == {"status": "skipped", "reason": spec["modes"]["graph"]["reason"]},
          "async over graph on ABI 1.0", k["modes"]["async"])


def npy_patch(path, index, value):
    """Overwrites element `index` of a float32 .npy file written by the CLI."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    (hlen,) = struct.unpack("<H", data[8:10])
    struct.pack_into("<f", data, 10 + hlen + 4 * index, value)
    with open(path, "wb") as f:
        f.write(data)


def case_check_reference_mismatch():
    d = workdir("check_reference")
    ref = os.path.join(d, "ref")
    r = cli_json("run", "--json", "--batch", "2", "--seed", "4", "--output-dir", ref, pkg("mlp"))
    out = r["outputs"][0]
    check(out["dtype"] == "float32" and len(out["shape"]) == 2, "mlp output layout", out)
    # Saved by `run` from the same inputs: every mode matches it.
    j = cli_json("check", "--json", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"))
    check(j["identical"] is True, "check against a matching reference", j)
    for mode in MODES:
        v = j["modes"][mode]["outputs"][0]["vs_reference"]
        check(v["identical"] is True and v["runs"] == 3 and v["file"] == out["file"],
              f"{mode} vs reference", v)
    # Perturb one element: every mode now differs from the reference there.
    meta, values = npy_read(out["file"])
    cols = out["shape"][1]
    index = cols + 5  # [1, 5]
    original = values[index]
    npy_patch(out["file"], index, original + 0.5)
    _, patched = npy_read(out["file"])
    expected = patched[index]
    rc, text, err = cli("check", "--json", "--batch", "2", "--seed", "4", "--reference", ref,
                        pkg("mlp"))
    check(rc == 1, f"perturbed reference: exit {rc}", err)
    check(err.startswith("aotrun: MISMATCH: ") and err.count("\n") == 1, "MISMATCH message", err)
    check(f"index {index} [1, 5]" in err and "y.npy" in err and "1 element differs" in err,
          "MISMATCH message lacks the index or file", err)
    check("%.9g" % original in err and "%.9g" % expected in err, "values not in the message", err)
    j = json.loads(text)  # the report is still printed
    check(j["identical"] is False and j["mismatches"] == 4, "mismatch count", j)
    for mode in MODES:
        o = j["modes"][mode]["outputs"][0]
        check(o["vs_threaded"]["identical"] is True, f"{mode}: modes still agree", o)
        v = o["vs_reference"]
        check(v["identical"] is False and v["mismatched_runs"] == 3 and v["first_run"] == 1,
              f"{mode}: vs reference", v)
        check(v["index"] == index and v["multi_index"] == [1, 5] and v["differing_elements"] == 1,
              f"{mode}: first mismatch position", v)
        check(v["value"] == original and v["expected"] == expected, f"{mode}: values", v, original,
              expected)
        check(abs(v["max_abs_diff"] - abs(expected - original)) < 1e-12, f"{mode}: max abs diff", v)
        check(v["bits"] == "0x%08x" % struct.unpack("<I", struct.pack("<f", original))[0],
              f"{mode}: bits", v)
    _, text, _ = cli("check", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"),
                     expect=1)
    check("MISMATCH in 3 of 3 runs" in text and "4 comparisons differ" in text, "text report", text)
    # A reference of another shape differs as a whole; a missing one is an error.
    meta, values = npy_read(out["file"])
    npy_write(out["file"], "<f4", [1, cols], values[:cols])
    _, _, err = cli("check", "--batch", "2", "--seed", "4", "--reference", ref, pkg("mlp"), expect=1)
    check(err.startswith("aotrun: MISMATCH: ") and f"shape [2, {cols}], expected [1, {cols}]" in err,
          "shape mismatch", err)
    os.remove(out["file"])
    _, text, err = cli("check", "--reference", ref, pkg("mlp"), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: ") and "y.npy" in err and "'y'" in err,
          "missing reference file", err)
    check(text == "", "failure printed to stdout", text)


def case_check_failures():
    _, out, err = cli("check", pkg("throwing"), expect=1)
    check(err.startswith("aotrun: PACKAGE: ") and "throwing" in err, "check on a failing model", err)
    check(out == "", "failure printed to stdout", out)
    _, _, err = cli("check", nonexistent(), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "check nonexistent", err)


def case_inspect_constants():
    j = cli_json("inspect", "--json", pkg("weight_id"))
    listed = {c["name"]: c for c in j["constants"]["list"]}
    check(set(listed) == {"w", "b"}, "inspect --json constants", j["constants"])
    check(listed["w"] == {"name": "w", "original_name": "w", "dtype": "float32", "shape": [4096],
                          "bytes": 16384, "folded": False}, "constant w", listed["w"])
    check(listed["b"]["shape"] == [4] and listed["b"]["bytes"] == 16, "constant b", listed["b"])
    check(j["constants"]["count"] == 2 and j["constants"]["bytes"] == 16400, "constant totals", j["constants"])
    _, out, _ = cli("inspect", pkg("weight_id"), expect=0)
    check("constants  2 (16.0 KiB)" in out, "constants summary line", out)
    table = out.split("constants (2)\n")[1].split("\n\n")[0].splitlines()
    check(table[0].split() == ["NAME", "DTYPE", "SHAPE", "BYTES"], "constants table header", out)
    rows = {r.split()[0]: r.split() for r in table[1:]}
    check(rows.get("w") == ["w", "float32", "[4096]", "16.0", "KiB"], "constants row w", out)
    check(rows.get("b") == ["b", "float32", "[4]", "16", "B"], "constants row b", out)
    _, all_out, _ = cli("inspect", "--constants", pkg("weight_id"), expect=0)
    check(all_out.replace(all_out.split("load ")[1].split("\n")[0], "") ==
          out.replace(out.split("load ")[1].split("\n")[0], ""), "--constants changes a short list", all_out)
    j = cli_json("inspect", "--json", pkg("mlp"))
    check(len(j["constants"]["list"]) == j["constants"]["count"], "mlp constants listed", j["constants"])


def y_minus_x(d, *args):
    """Runs weight_id with `args`; returns the set of y - x over all elements."""
    out_dir = os.path.join(d, "out")
    in_dir = os.path.join(d, "in")
    cli("run", "--batch", "3", "--output-dir", out_dir, "--save-inputs", in_dir, *args, pkg("weight_id"),
        expect=0)
    _, x = npy_read(os.path.join(in_dir, "x.npy"))
    _, y = npy_read(os.path.join(out_dir, "y.npy"))
    return {round(b - a) for a, b in zip(x, y)}


def case_run_weights():
    d = workdir("run_weights")
    check(y_minus_x(d) == {0}, "weight_id's own weights are set 0")
    three = weight_id_set(os.path.join(d, "three.safetensors"), 3)
    check(y_minus_x(d, "--weights", three) == {3003}, "--weights with set 3")
    j = cli_json("run", "--json", "--weights", three, pkg("weight_id"))
    check(j["weights"] == three and j["outputs"][0]["min"] > 3000, "run --json with --weights", j)
    _, out, _ = cli("run", "--weights", three, pkg("weight_id"), expect=0)
    check(f"weights  {three}" in out, "run text names the weights file", out)
    only_w = weight_id_set(os.path.join(d, "only_w.safetensors"), 3, names=("w",))
    check(y_minus_x(d, "--weights", only_w, "--partial-weights") == {3}, "--partial-weights keeps b")
    for mode in ("single_threaded", "graph"):
        check(y_minus_x(d, "--mode", mode, "--weights", three) == {3003}, f"--weights in {mode} mode")
    _, out, _ = cli("check", "--weights", three, pkg("weight_id"), expect=0)
    check("identical" in out, "check --weights", out)
    cli("bench", "--iters", "2", "--warmup", "0", "--weights", three, pkg("weight_id"), expect=0)


def case_run_weights_errors():
    d = workdir("run_weights_errors")
    only_w = weight_id_set(os.path.join(d, "only_w.safetensors"), 3, names=("w",))
    _, out, err = cli("run", "--weights", only_w, pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: --weights: ") and "'b'" in err and "only_w" in err,
          "a full update that leaves out b", err)
    check(out == "", "failure printed to stdout", out)
    stranger = os.path.join(d, "stranger.safetensors")
    safetensors_write_f32(stranger, {"v": ([4], [1.0] * 4)})
    _, _, err = cli("run", "--weights", stranger, "--partial-weights", pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "no constant 'v'" in err, "unknown constant", err)
    wrong = os.path.join(d, "wrong_shape.safetensors")
    safetensors_write_f32(wrong, {"w": ([4], [1.0] * 4)})
    _, _, err = cli("run", "--weights", wrong, "--partial-weights", pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and "'w'" in err, "wrong shape", err)
    junk = os.path.join(d, "junk.safetensors")
    with open(junk, "wb") as f:
        f.write(b"not a safetensors file")
    _, _, err = cli("run", "--weights", junk, pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: INVALID_ARGUMENT: ") and junk in err, "junk weights file", err)
    missing = os.path.join(d, "missing.safetensors")
    _, _, err = cli("run", "--weights", missing, pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: ") and missing in err, "missing weights file", err)
    _, _, err = cli("bench", "--iters", "1", "--weights", missing, pkg("weight_id"), expect=1)
    check(err.startswith("aotrun: NOT_FOUND: "), "bench with a missing weights file", err)
    _, _, err = cli("run", "--partial-weights", pkg("weight_id"), expect=2)
    check("--partial-weights needs --weights" in err, "--partial-weights alone", err)
    _, _, err = cli("run", "--weights", pkg("weight_id"), expect=2)
    check("package path" in err or "PKG" in err, "--weights without a file", err)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--packages", required=True)
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
    except TestFailure as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
