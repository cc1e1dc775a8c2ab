#!/usr/bin/env python3
"""Fails unless the ```cpp block of DOC that starts with the example's first
line is the example source, byte for byte (so the documented example is the
compiled and tested one).  Usage: check_doc.py DOC EXAMPLE"""
import re
import sys

doc, example = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
first = example.splitlines()[0]
blocks = [b for b in re.findall(r"```cpp\n(.*?)```", doc, re.S) if b.startswith(first)]
if blocks == [example]:
    print(f"{sys.argv[1]}: example matches {sys.argv[2]}")
    sys.exit(0)
print(f"error: {sys.argv[1]} does not show {sys.argv[2]} verbatim in a ```cpp block "
      f"({len(blocks)} candidate block(s)); paste the file there", file=sys.stderr)
sys.exit(1)
