#!/usr/bin/env python3
"""A sanitizer stage that builds only some targets builds every test it runs.

    check_stage_targets.py SOURCE_DIR BUILD_DIR     (BUILD_DIR: a full build)
    check_stage_targets.py --self-test

A build preset in CMakePresets.json may list "targets" (the TSan stage does:
building the whole tree under TSan took minutes for suites it never runs).
Its test preset selects tests by label. In a tree built with only those
targets, a labelled test whose executable is not among them is simply never
discovered, and nothing would notice. So this reads, in a tree built with
everything (BUILD_DIR, the default preset), which executables the test
preset's label filter selects, and fails naming any that the build preset
does not list.
"""

import json
import os
import subprocess
import sys


def stages_with_targets(presets):
    """(build preset name, its targets, the label regex its tests select)."""
    tests = {p.get("configurePreset"): p for p in presets.get("testPresets", [])}
    for b in presets.get("buildPresets", []):
        targets = b.get("targets")
        if not targets:
            continue
        t = tests.get(b["configurePreset"])
        label = ((t or {}).get("filter", {}).get("include", {}) or {}).get("label")
        yield b["name"], set([targets] if isinstance(targets, str) else targets), label


def missing(show_only, targets):
    """Executables of the selected tests (ctest --show-only=json-v1) that are not targets."""
    out = {}
    for test in show_only.get("tests", []):
        command = test.get("command") or []
        exe = os.path.basename(command[0]) if command else "(no command)"
        if exe not in targets:
            out.setdefault(exe, []).append(test["name"])
    return out


def check(source, build):
    with open(os.path.join(source, "CMakePresets.json")) as f:
        presets = json.load(f)
    failures = 0
    for name, targets, label in stages_with_targets(presets):
        if not label:
            print(f"build preset {name!r} lists targets but its test preset selects no label: "
                  "every test of the tree would be expected", file=sys.stderr)
            failures += 1
            continue
        shown = subprocess.run(["ctest", "--test-dir", build, "-L", label, "--show-only=json-v1"],
                               check=True, capture_output=True, text=True).stdout
        selected = json.loads(shown)
        if not selected.get("tests"):
            print(f"build preset {name!r}: label {label!r} selects no test in {build}", file=sys.stderr)
            failures += 1
            continue
        for exe, names in sorted(missing(selected, targets).items()):
            print(f"build preset {name!r} does not build {exe!r}, which runs {len(names)} test(s) its "
                  f"stage selects (label {label!r}), e.g. {names[0]}: add it to \"targets\" in "
                  "CMakePresets.json", file=sys.stderr)
            failures += 1
        print(f"{name}: {len(selected['tests'])} tests selected by {label!r}, all built by its targets"
              if failures == 0 else f"{name}: checked")
    return failures


def self_test():
    presets = {
        "buildPresets": [{"name": "s", "configurePreset": "s", "targets": ["a_tests"]},
                         {"name": "d", "configurePreset": "d"}],
        "testPresets": [{"name": "s", "configurePreset": "s", "filter": {"include": {"label": "x"}}}],
    }
    stages = list(stages_with_targets(presets))
    assert stages == [("s", {"a_tests"}, "x")], stages
    shown = {"tests": [{"name": "A.one", "command": ["/b/tests/a_tests", "--gtest_filter=A.one"]},
                       {"name": "B.two", "command": ["/b/tests/b_tests"]}]}
    assert missing(shown, {"a_tests"}) == {"b_tests": ["B.two"]}
    assert missing(shown, {"a_tests", "b_tests"}) == {}
    print("self-test passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(1 if check(sys.argv[1], sys.argv[2]) else 0)
