"""Compares remat-run outputs of the same step under several plans.

Usage: compare_runs.py REFERENCE RUN... [--smaller A B] [--larger A B]
                       [--at-most A BYTES] [--exact A]
Every RUN must print the same `result:` lines as REFERENCE (bit-identical
results: the lines carry an FNV-1a hash of every element's bits). With
--smaller A B, the measured peak of run A must be below that of run B (runs
named by their position among RUN..., from 0); --larger likewise. Prints one
line per check and exits non-zero on the first failure. --at-most A BYTES
requires run A's measured peak to be at most BYTES; --exact A requires run A's
measured peak to equal its predicted peak.
"""
import re
import sys


def parse(path):
    results, measured, predicted = [], None, None
    with open(path) as f:
        for line in f:
            if line.startswith("result:"):
                results.append(line.strip())
            m = re.match(r"remat-run: measured_peak_bytes=(\d+) "
                         r"predicted_peak_bytes=(\d+|none)", line)
            if m:
                measured = int(m.group(1))
                predicted = None if m.group(2) == "none" else int(m.group(2))
    if measured is None:
        sys.exit(f"{path}: no remat-run peak line")
    return results, measured, predicted


def main(argv):
    files, order = [], []
    i = 0
    while i < len(argv):
        if argv[i] in ("--smaller", "--larger", "--at-most"):
            order.append((argv[i], int(argv[i + 1]), int(argv[i + 2])))
            i += 3
        elif argv[i] == "--exact":
            order.append((argv[i], int(argv[i + 1]), None))
            i += 2
        else:
            files.append(argv[i])
            i += 1
    reference = parse(files[0])
    if not reference[0]:
        sys.exit(f"{files[0]}: no result lines")
    runs = [parse(path) for path in files[1:]]
    for path, run in zip(files[1:], runs):
        if run[0] != reference[0]:
            sys.exit(f"FAIL: {path}: results differ from {files[0]}")
        print(f"identical results: {len(run[0])} lines")
    for kind, a, b in order:
        if kind == "--at-most":
            if runs[a][1] > b:
                sys.exit(f"FAIL: peak {runs[a][1]} ({files[a + 1]}) exceeds {b}")
            print(f"peak within budget: {runs[a][1]} <= {b}")
            continue
        if kind == "--exact":
            if runs[a][1] != runs[a][2]:
                sys.exit(f"FAIL: measured {runs[a][1]} != predicted "
                         f"{runs[a][2]} ({files[a + 1]})")
            print(f"measured == predicted: {runs[a][1]}")
            continue
        pa, pb = runs[a][1], runs[b][1]
        ok = pa < pb if kind == "--smaller" else pa > pb
        if not ok:
            sys.exit(f"FAIL: peak {pa} ({files[a + 1]}) is not "
                     f"{kind[2:]} than {pb} ({files[b + 1]})")
        print(f"peak {kind[2:]}: {pa} vs {pb}")


if __name__ == "__main__":
    main(sys.argv[1:])
