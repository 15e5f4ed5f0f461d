"""Extracts the PTX of every kernel module of a module lowered with
remat-lower-to-gpu format=ptx, and optionally assembles it with ptxas.

Usage: extract_ptx.py LOWERED.mlir [--ptxas PATH --arch sm_XX] [--dump FILE]

Every `gpu.binary` must carry one object with `assembly = "..."` (PTX text,
MLIR string escapes). Prints `kernels: N` and, with --ptxas, runs
`ptxas -arch=ARCH` on each and prints `assembled: N`; --dump writes all PTX
texts, one after the other, to FILE (for FileCheck). Exits non-zero on the
first failure.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BINARY = re.compile(r'gpu\.binary @([\w$.]+)\s.*?assembly = "((?:[^"\\]|\\.)*)"')


def unescape(text):
    # MLIR prints non-printable bytes and quotes/backslashes as \XX (hex).
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                  text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lowered")
    parser.add_argument("--ptxas")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--dump")
    args = parser.parse_args()

    with open(args.lowered) as f:
        text = f.read()
    kernels = [(name, unescape(ptx)) for name, ptx in BINARY.findall(text)]
    binaries = len(re.findall(r"gpu\.binary @", text))
    if not kernels or len(kernels) != binaries:
        sys.exit(f"FAIL: {binaries} gpu.binary ops, {len(kernels)} with PTX")
    print(f"kernels: {len(kernels)}")
    if args.dump:
        with open(args.dump, "w") as f:
            for name, ptx in kernels:
                f.write(f"// ===== {name}\n{ptx}\n")
    if args.ptxas:
        with tempfile.TemporaryDirectory() as tmp:
            for name, ptx in kernels:
                path = os.path.join(tmp, name + ".ptx")
                with open(path, "w") as f:
                    f.write(ptx)
                result = subprocess.run(
                    [args.ptxas, f"-arch={args.arch}", path, "-o",
                     os.path.join(tmp, name + ".cubin")],
                    capture_output=True, text=True)
                if result.returncode != 0:
                    sys.exit(f"FAIL: ptxas rejects {name}:\n{result.stderr}")
        print(f"assembled: {len(kernels)}")


if __name__ == "__main__":
    main()
