#!/usr/bin/env python3
"""Runs one test stage (a ctest test preset) and says what it really tested.

    ctest_stage.py PRESET [--jobs N] [--summary FILE] [--floor N] [--source DIR]

- ctest runs with the preset (whose execution.noTestsAction is "error": a
  stage that finds no test fails) and writes JUnit XML into the build tree.
- The stage fails when ctest fails, and when it ran fewer tests than the
  floor kept beside the preset in CMakePresets.json
  (vendor.aotrun.minTests): a suite that silently shrinks, or a build tree
  configured without its tests, fails loudly instead of passing.
- It prints one summary line (passed, failed, skipped) and the skipped tests
  grouped by their reason, and appends the summary line to FILE.

Skipped tests count as run for the floor: they are there and say why they
did not run (no GPU, no libtorch); the grouped reasons show what was left out.

Two sanitizer-runtime failures are retried, once each, because they say
nothing about the test:
- a test whose body passed and whose process then died in LeakSanitizer's
  own stop-the-world tracer at exit ("Tracer caught signal 11 ...
  LeakSanitizer has encountered a fatal error": google/sanitizers#1353);
- a process that ThreadSanitizer's runtime stopped because the kernel
  refused it shadow memory ("ThreadSanitizer failed to allocate ...
  (errno: 12)"): the address layout ASLR chose for that process does not
  fit this TSan runtime's fixed shadow ranges, and another process gets
  another layout.
Such a test runs again alone and counts by that run, and the summary names
it. A leak, an ASan or TSan report (a data race), a runtime error or a
failed assertion is never retried.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_presets(root):
    with open(os.path.join(root, "CMakePresets.json")) as f:
        return json.load(f)


def binary_dir(presets, test_preset, root):
    tests = {p["name"]: p for p in presets.get("testPresets", [])}
    configs = {p["name"]: p for p in presets.get("configurePresets", [])}
    if test_preset not in tests:
        sys.exit("ctest_stage: no test preset %r in CMakePresets.json" % test_preset)
    cfg = configs[tests[test_preset]["configurePreset"]]
    while "binaryDir" not in cfg and cfg.get("inherits"):
        parent = cfg["inherits"]
        cfg = configs[parent if isinstance(parent, str) else parent[0]]
    return cfg["binaryDir"].replace("${sourceDir}", root)


def floor_of(presets, test_preset):
    for p in presets.get("testPresets", []):
        if p["name"] == test_preset:
            return int(p.get("vendor", {}).get("aotrun", {}).get("minTests", 1))
    return 1


# What a skipped test says about why, from its output: GoogleTest's
# "Skipped" block, a script's "skipped: ..." line, else the last line.
def skip_reason(output):
    lines = [l.strip() for l in (output or "").splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.endswith(": Skipped") or l == "Skipped":
            if i + 1 < len(lines) and not lines[i + 1].startswith("["):
                return lines[i + 1]
    for l in lines:
        m = re.match(r"(?i)^(skipped|skip|skipping)\b[:\s-]*(.*)$", l)
        if m and m.group(2):
            return m.group(2)
    for l in reversed(lines):
        if not l.startswith("[") and "Skipped" not in l:
            return l
    return "(no reason printed)"


def parse_junit(path):
    root = ET.parse(path).getroot()
    counts = collections.Counter()
    reasons = collections.defaultdict(list)
    failed = {}
    for case in root.iter("testcase"):
        name = case.get("name")
        status = case.get("status", "run")
        out = "".join(e.text or "" for e in case.iter("system-out"))
        if case.find("failure") is not None or status == "fail":
            counts["failed"] += 1
            failed[name] = out
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            counts["skipped"] += 1
            reasons[skip_reason(out)[:200]].append(name)
        else:
            counts["passed"] += 1
    return counts, reasons, failed


# What a test's output must not hold for a sanitizer-runtime failure to be
# retried: any report about the code under test.
REPORTS = ("ERROR: LeakSanitizer: detected memory leaks", "ERROR: AddressSanitizer", "WARNING: ThreadSanitizer:",
           "runtime error:", "[  FAILED  ]")


# Why a failed test's output is a sanitizer-runtime failure worth one retry
# (a phrase for the summary), or None.
def runtime_flake(output):
    if any(m in output for m in REPORTS):
        return None
    if "Tracer caught signal" in output and "LeakSanitizer has encountered a fatal error" in output:
        return "its body passed; LeakSanitizer's tracer crashed at exit"
    if re.search(r"ERROR: ThreadSanitizer failed to allocate .* \(errno: 12\)", output):
        return "ThreadSanitizer's runtime was refused shadow memory for this process's address layout"
    return None


# ctest -R takes CMake's regex: escape what it treats as special.
def exact_name_regex(name):
    return "^" + re.sub(r"([\\^$.\[\]*+?|(){}])", r"\\\1", name) + "$"


def retry_alone(root, preset, build, name):
    junit = os.path.join(build, "ctest-%s.retry.junit.xml" % preset)
    if os.path.exists(junit):
        os.remove(junit)
    subprocess.call(["ctest", "--preset", preset, "-R", exact_name_regex(name), "--output-junit", junit], cwd=root)
    if not os.path.exists(junit):
        return False
    counts, _, failed = parse_junit(junit)
    return counts["passed"] == 1 and not failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("preset")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--summary", help="append the summary line to this file")
    ap.add_argument("--floor", type=int, help="override the preset's vendor.aotrun.minTests")
    ap.add_argument("--source", default=ROOT, help="the source tree whose presets run (default: this checkout)")
    args = ap.parse_args()

    root = os.path.abspath(args.source)
    presets = load_presets(root)
    build = binary_dir(presets, args.preset, root)
    floor = args.floor if args.floor is not None else floor_of(presets, args.preset)
    junit = os.path.join(build, "ctest-%s.junit.xml" % args.preset)
    if os.path.exists(junit):
        os.remove(junit)
    cmd = ["ctest", "--preset", args.preset, "-j%d" % args.jobs, "--no-tests=error", "--output-junit", junit]
    rc = subprocess.call(cmd, cwd=root)

    problems = []
    if not os.path.exists(junit):
        counts, reasons, failed = collections.Counter(), {}, []
        problems.append("ctest wrote no results (exit %d)" % rc)
    else:
        counts, reasons, failed = parse_junit(junit)
    retried = []
    for name, out in list(failed.items()):
        why = runtime_flake(out)
        if why and retry_alone(root, args.preset, build, name):
            del failed[name]
            counts["failed"] -= 1
            counts["passed"] += 1
            retried.append((name, why))
    if retried and not failed and rc == 8:  # ctest's "some tests failed", all of them now passed
        rc = 0
    total = counts["passed"] + counts["failed"] + counts["skipped"]
    if rc != 0:
        problems.append("ctest exited %d" % rc)
    if total < floor:
        problems.append("ran %d tests, fewer than the %d this stage holds (CMakePresets.json, "
                        "testPresets %s, vendor.aotrun.minTests): a suite is missing or was not built" %
                        (total, floor, args.preset))
    line = "stage %s: %s, %d tests: %d passed, %d failed, %d skipped (floor %d)" % (
        args.preset, "FAILED" if problems else "ok", total, counts["passed"], counts["failed"],
        counts["skipped"], floor)
    print("=" * 78)
    print(line)
    for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        print("  skipped %d: %s  [%s]" % (len(names), reason, shown))
    for name, why in retried:
        print("  retried: %s (%s; passed when run again alone)" % (name, why))
    for name in failed:
        print("  failed: %s" % name)
    for p in problems:
        print("  error: %s" % p)
    if total > floor and not problems:
        print("  note: %d tests above the floor; raise minTests of preset %s to %d" %
              (total - floor, args.preset, total))
    if args.summary:
        with open(args.summary, "a") as f:
            f.write(line + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
