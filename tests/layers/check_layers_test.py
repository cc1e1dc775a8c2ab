#!/usr/bin/env python3
"""check_layers.py must refuse each kind of violation and pass a clean tree.

Builds small repositories in a temporary folder (one file changed per case)
and runs the check on them. In cpp/: an upward include, a climb with "..",
two folders of one layer that include each other, a leaf library that
reaches into the stack, and a folder in no layer each fail. Over the stack:
c_api/ including the .pt2 kind, a public header including cpp/, the CLI or
the Triton backend including an internal header not named for it, the CLI
including an aotrun header outside the public API, a climb with ".." from a
binary, and a backend in no place each fail. The clean tree passes.
"""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")

CLEAN = {
    "cpp/base/error.hpp": "",
    "cpp/base/safetensors_dtype.hpp": "",
    "cpp/linkinfo/elf.hpp": '#include "base/error.hpp"\n',
    "cpp/linkinfo/link_findings.hpp": '#include "base/error.hpp"\n',
    "cpp/device/runner_device.hpp": '#include "base/error.hpp"\n',
    "cpp/device/cpu/stream.cpp": '#include "device/runner_device.hpp"\n#include <vector>\n',
    "cpp/package/package.hpp": '#include "device/runner_device.hpp"\n#include "linkinfo/elf.hpp"\n',
    "cpp/package/package_options.hpp": "",
    "cpp/package/pt2/archive/pt2_archive.hpp": '#include "base/error.hpp"\n',
    "cpp/package/pt2/provider/provider_choice.hpp": '#include "package/package_options.hpp"\n',
    "cpp/runner/runner.hpp": '#include "package/package.hpp"\n#include "runner/async/window.hpp"\n',
    "cpp/runner/async/window.hpp": '#include "base/error.hpp"\n',
    "cpp/shim/shim.cpp": '#include "base/error.hpp"\n#include <aotrun/package_abi.h>\n',
    "c_api/include/aotrun/aotrun.h": "#include <dlpack/dlpack.h>\n",
    "c_api/include/aotrun/aotrun.hpp": "#include <aotrun/aotrun.h>\n",
    "c_api/src/package_api.cpp": ('#include "handles.hpp"\n#include "package/package_options.hpp"\n'
                                  '#include "runner/runner.hpp"\n#include <aotrun/package_abi.h>\n'),
    "c_api/src/handles.hpp": '#include "package/package.hpp"\n',
    "tools/src/inspect.cpp": ('#include <aotrun/aotrun.hpp>\n#include "table.hpp"\n'
                              '#include "linkinfo/link_findings.hpp"\n'
                              '#include "package/pt2/archive/pt2_archive.hpp"\n'
                              '#include "base/safetensors_dtype.hpp"\n'),
    "tools/src/table.hpp": "#include <string>\n",
    "backends/triton/src/model.cpp": '#include <aotrun/aotrun.hpp>\n#include "triton_api.h"\n',
    "backends/triton/src/triton_api.h": "#include <stdint.h>\n",
}

BROKEN = {
    "upward include": ("cpp/device/cpu/stream.cpp", '#include "runner/runner.hpp"\n', "may not include layer 'runner'"),
    "climb with ..": ("cpp/package/package.cpp", '#include "../runner/runner.hpp"\n', "climb"),
    "folders include each other": ("cpp/runner/async/window.cpp", '#include "runner/runner.hpp"\n',
                                   "include each other"),
    "leaf reaches into the stack": ("cpp/shim/shim.hpp", '#include "device/runner_device.hpp"\n',
                                    "layer 'shim' may not"),
    "folder in no layer": ("cpp/util/old.hpp", "", "in no layer"),
    # Over the stack.
    "c_api includes the .pt2 kind": ("c_api/src/package_api.cpp",
                                     '#include "package/pt2/provider/provider_choice.hpp"\n',
                                     "c_api/src may not include package/pt2/"),
    "public header includes cpp/": ("c_api/include/aotrun/aotrun.hpp", '#include "base/error.hpp"\n',
                                    "c_api/include may include nothing of cpp/"),
    "CLI includes an unnamed internal header": ("tools/src/inspect.cpp", '#include "package/package.hpp"\n',
                                                "tools/src may include of cpp/ only the readers"),
    "CLI includes a layer's header by angle": ("tools/src/run.cpp", "#include <runner/runner.hpp>\n",
                                               "tools/src may include of cpp/ only the readers"),
    "CLI includes a non-public aotrun header": ("tools/src/run.cpp", "#include <aotrun/package_abi.h>\n",
                                                "only the public API (c_api/include)"),
    "Triton includes an internal header": ("backends/triton/src/model.cpp",
                                           '#include "package/pt2/archive/pt2_archive.hpp"\n',
                                           "backends/triton/src may include of cpp/ only the readers"),
    "binary climbs with ..": ("tools/src/run.cpp", '#include "../../cpp/base/error.hpp"\n',
                              "tools/src/run.cpp: includes \"../../cpp/base/error.hpp\": no include may climb"),
    "backend in no place": ("backends/onnx/src/backend.cpp", "#include <aotrun/aotrun.h>\n", "in no place"),
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
