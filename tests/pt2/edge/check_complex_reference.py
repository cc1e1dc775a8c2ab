#!/usr/bin/env python3
"""`aotrun check --reference` on complex outputs (issue #38): the tolerance
rule, not bytes.

    check_complex_reference.py AOTRUN PT2 INPUT EAGER_OUT0 EAGER_OUT1 WORKDIR

1. Against eager PyTorch's outputs (complex64 and float32) with PyTorch's
   default tolerances: passes.
2. Against the same references with the first complex element's imaginary
   part nudged by 1e-7 (inside complex64's atol 1e-5): passes, "within".
3. Nudged by 1e-2: fails (exit 1), naming the element as a complex number
   and the modulus of the difference.
No numpy: a .npy file is a header and the raw little-endian elements.
"""
import os
import shutil
import struct
import subprocess
import sys


def nudged_copy(src, dst, delta):
    data = bytearray(open(src, "rb").read())
    assert data[:6] == b"\x93NUMPY" and b"'<c8'" in data[:128], src
    start = 10 + struct.unpack("<H", data[8:10])[0]
    re, im = struct.unpack("<ff", data[start:start + 8])
    data[start:start + 8] = struct.pack("<ff", re, im + delta)
    with open(dst, "wb") as f:
        f.write(data)


def check(aotrun, pt2, inp, ref):
    p = subprocess.run([aotrun, "check", pt2, "--input", "arg1_1=" + inp, "--reference", ref],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


def main():
    aotrun, pt2, inp, out0, out1, work = sys.argv[1:7]
    failures = []
    for name, delta in (("eager", 0.0), ("near", 1e-7), ("far", 1e-2)):
        ref = os.path.join(work, name)
        shutil.rmtree(ref, ignore_errors=True)
        os.makedirs(ref)
        shutil.copyfile(out1, os.path.join(ref, "output1.npy"))
        nudged_copy(out0, os.path.join(ref, "output0.npy"), delta)
        rc, text = check(aotrun, pt2, inp, ref)
        print("--- %s (rc %d)\n%s" % (name, rc, text))
        if name == "far":
            if rc != 1 or "output0  reference  MISMATCH" not in text.replace("   ", "  "):
                failures.append("far: expected exit 1 and output0 MISMATCH")
            elif "j (0x" not in text or "max abs diff" not in text:
                failures.append("far: the mismatch does not name a complex value and the difference")
        elif rc != 0 or "result  passed" not in text:
            failures.append("%s: expected the check to pass" % name)
        elif name == "near" and "within rtol 1.3e-06, atol 1e-05" not in text:
            failures.append("near: expected output0 within complex64's default tolerance")
    for f in failures:
        print("FAILED: " + f)
    print("complex reference checks: %s" % ("failed" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
