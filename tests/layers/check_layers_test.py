#!/usr/bin/env python3
"""check_layers.py must refuse each kind of violation and pass a clean tree.

Builds small trees in a temporary folder (one file per case) and runs the
check on them: an upward include, a climb with "..", two folders of one layer
that include each other, a leaf library that reaches into the stack, and a
folder in no layer each fail; the clean tree passes.
"""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")

CLEAN = {
    "base/error.hpp": "",
    "linkinfo/elf.hpp": '#include "base/error.hpp"\n',
    "device/runner_device.hpp": '#include "base/error.hpp"\n',
    "device/cpu/stream.cpp": '#include "device/runner_device.hpp"\n#include <vector>\n',
    "package/package.hpp": '#include "device/runner_device.hpp"\n#include "linkinfo/elf.hpp"\n',
    "runner/runner.hpp": '#include "package/package.hpp"\n#include "runner/async/window.hpp"\n',
    "runner/async/window.hpp": '#include "base/error.hpp"\n',
    "shim/shim.cpp": '#include "base/error.hpp"\n#include <aotrun/package_abi.h>\n',
}

BROKEN = {
    "upward include": ("device/cpu/stream.cpp", '#include "runner/runner.hpp"\n', "may not include layer 'runner'"),
    "climb with ..": ("package/package.cpp", '#include "../runner/runner.hpp"\n', "climb"),
    "folders include each other": ("runner/async/window.cpp", '#include "runner/runner.hpp"\n', "include each other"),
    "leaf reaches into the stack": ("shim/shim.hpp", '#include "device/runner_device.hpp"\n', "layer 'shim' may not"),
    "folder in no layer": ("util/old.hpp", "", "in no layer"),
}


def run(tree):
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    failures = 0
    rc, out = run(CLEAN)
    if rc != 0:
        print("FAIL clean tree refused:\n" + out)
        failures += 1
    for name, (rel, text, expect) in BROKEN.items():
        rc, out = run(dict(CLEAN, **{rel: text}))
        if rc != 1 or expect not in out:
            print(f"FAIL {name}: exit {rc}, expected 1 and '{expect}' in:\n{out}")
            failures += 1
        else:
            print(f"ok   {name}: {out.splitlines()[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
