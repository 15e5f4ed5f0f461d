#!/usr/bin/python3
"""Compare two lists of numbers, one per line, within a relative tolerance.

Usage:
  compare_numbers.py REF OUT [--tol 1e-4]

REF and OUT are outputs in the format of torch_export.py (`--reference`, or
the step's @main run by remat-run): one number per line. Lines starting with
`remat-run:` and blank lines are ignored. Line k matches when

  |out_k - ref_k| <= tol * max(1, |ref_k|)

Prints one line per mismatch, then a summary with the largest error seen;
exits 1 if a line differs, the counts differ or a line is not a number.
Standard library only.
"""

import argparse
import math
import sys


def read_numbers(path):
    """(line number, text) of every line that carries a number."""
    out = []
    with open(path) as f:
        for k, line in enumerate(f, 1):
            text = line.strip()
            if text and not text.startswith("remat-run:"):
                out.append((k, text))
    return out


def parse(path, lineno, text):
    try:
        return float(text)
    except ValueError:
        raise SystemExit("compare_numbers.py: error: %s:%d: not a number: %r"
                         % (path, lineno, text))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ref")
    p.add_argument("out")
    p.add_argument("--tol", type=float, default=1e-4)
    a = p.parse_args(argv)
    ref, out = read_numbers(a.ref), read_numbers(a.out)
    mismatches = 0
    worst, worst_at = 0.0, None
    for k, ((rl, rt), (ol, ot)) in enumerate(zip(ref, out)):
        r, o = parse(a.ref, rl, rt), parse(a.out, ol, ot)
        err = abs(o - r) / max(1.0, abs(r)) if math.isfinite(r) and math.isfinite(o) \
            else (0.0 if r == o or (math.isnan(r) and math.isnan(o)) else math.inf)
        if err > worst:
            worst, worst_at = err, k + 1
        if not err <= a.tol:
            mismatches += 1
            print("mismatch at number %d: reference %s, got %s (error %.3g)"
                  % (k + 1, rt, ot, err))
    if len(ref) != len(out):
        mismatches += 1
        print("count mismatch: %d numbers in %s, %d in %s"
              % (len(ref), a.ref, len(out), a.out))
    where = " (number %d)" % worst_at if worst_at else ""
    print("%s: %d numbers, %d mismatches, max error %.3g%s, tolerance %g"
          % ("FAIL" if mismatches else "OK", min(len(ref), len(out)), mismatches,
             worst, where, a.tol))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
