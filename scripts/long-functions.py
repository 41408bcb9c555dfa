#!/usr/bin/env python3
"""scripts/long-functions.py [--max N] [--source DIR] [--list]: fails when a
function of the compiler (ir/ ptx/ lower/ codegen/ emu/) is longer than N
lines (150, about three screens) without a reason written above it
(issue 22's acceptance: "no function is longer than a few screens without a
reason").

A reason is a line of the comment just above the function that starts with
"Long:" (after the comment's " * "), saying why the function stays one
piece: a table-like switch that reads best whole, a parser of one grammar
rule with many alternatives ...  Split the function instead where a piece
has a name of its own.

A function is found the way the project writes them: its header starts at
column 0 and its body ends with a '}' at column 0.  --list prints every
long function with its length and whether it has a reason.  Exit status:
0 when every long function has a reason, 1 otherwise.
"""
import argparse
import os
import re
import sys

LAYERS = ["ir", "ptx", "lower", "codegen", "emu"]
HEADER = re.compile(r"^(?![#/ \t{}])[A-Za-z_][^;=]*?\b([A-Za-z_]\w*)\s*\([^;]*$")


def functions(path):
    """(name, first line, length, has reason) of each function in path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i])
        if not m or lines[i].startswith(("typedef", "struct", "enum", "union")) and "(" not in lines[i]:
            i += 1
            continue
        # the header may span lines; the body opens with '{' at a line's end
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith("{"):
            if lines[j].rstrip().endswith(";") or (j > i and lines[j].startswith("}")):
                break
            j += 1
        if j >= len(lines) or not lines[j].rstrip().endswith("{") or "=" in lines[i].split("(")[0]:
            i += 1
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        yield m.group(1), i + 1, k - i + 1, has_reason(lines, i)
        i = k + 1


def has_reason(lines, first):
    """Whether the comment ending just above line index first says Long:."""
    k = first - 1
    if k < 0 or not lines[k].rstrip().endswith("*/"):
        return False
    while k >= 0:
        text = lines[k].strip().lstrip("/*").strip()
        if text.startswith("Long:"):
            return True
        if lines[k].lstrip().startswith("/*"):
            return False
        k -= 1
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--source", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    bad = 0
    for layer in LAYERS:
        d = os.path.join(a.source, layer)
        for name in sorted(os.listdir(d)):
            if not name.endswith(".c"):
                continue
            path = os.path.join(d, name)
            for fn, line, n, reason in functions(path):
                if n <= a.max:
                    continue
                where = f"{layer}/{name}:{line}"
                if a.list:
                    print(f"{where}: {fn}: {n} lines{'' if reason else ' (no reason)'}")
                if not reason:
                    bad += 1
                    if not a.list:
                        print(f"{where}: {fn} has {n} lines and no 'Long:' reason above it", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
