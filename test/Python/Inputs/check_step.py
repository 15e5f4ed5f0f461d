#!/usr/bin/python3
"""Check the conventions of a step written by torch_export.py.

Usage: check_step.py STEP.mlir

In @train_step: every top-level op but constants and the return carries
remat.phase and remat.cost; every tensor.empty has exactly one use; there is
no tensor.concat. Prints a one-line summary, or the violations (exit code 1).
"""

import re
import sys

DEF = re.compile(r"^  (%[\w$.-]+)(?::\d+)? = ([\w.]+)")
USE = re.compile(r"%[\w$.-]+")


def main(path):
    text = open(path).read()
    start = text.index("func.func @train_step(")
    body = text[text.index("\n", text.index(") {", start)) + 1:text.index("\n}", start)]
    ops, uses, errors = [], {}, []
    for line in body.splitlines():
        m = DEF.match(line)
        if m:
            ops.append((m.group(1), m.group(2), line))
            rest = line[m.end():]
        else:
            rest = line
        for name in USE.findall(rest):
            uses[name] = uses.get(name, 0) + 1
    phases = {"forward": 0, "backward": 0}
    for name, opname, line in ops:
        if opname == "arith.constant":
            continue
        phase = re.search(r'remat\.phase = "(\w+)"', line)
        if not phase or "remat.cost = " not in line:
            errors.append("missing remat.phase/remat.cost: " + name)
            continue
        phases[phase.group(1)] += 1
        if opname == "tensor.empty" and uses.get(name, 0) != 1:
            errors.append("%s (tensor.empty) has %d uses" % (name, uses.get(name, 0)))
        if opname == "tensor.concat":
            errors.append("tensor.concat: " + name)
    for e in errors:
        print("error: " + e)
    print("step ok: %d ops, %d forward, %d backward, %d tensor.empty"
          % (len(ops), phases["forward"], phases["backward"],
             sum(1 for o in ops if o[1] == "tensor.empty")) if not errors else
          "step has %d errors" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
