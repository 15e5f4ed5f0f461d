#!/usr/bin/env python3
"""Peak memory of reading large node-link graph files (issue 13, item 5).

Writes node-link files with bench/gen_big_nodelink.py and loads each with
`remat-solve FILE --solver=checkpoint-all` (the cheapest run that reads the
whole graph) under `/usr/bin/time -v`, reporting the peak resident set size
against the file size. The goal: at most 20x the file. Not a test: it never
fails on a figure. Standard library only.

    python3 bench/bench_graph_io.py [--remat-solve PATH] [--baseline PATH]
        [--cases checkmate:10000:1380000,checkmate:20000:2900000,...]
        [--json PATH] [--keep DIR]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# dialect:nodes:links. The first two are the shapes of issue 13's 47 MB and
# 99 MB files (about 50 MB and 107 MB as the generator writes them).
DEFAULT_CASES = ("checkmate:10000:1380000,checkmate:20000:2900000,"
                 "remat:20000:2900000,remat:200000:400000")


def measure(binary, path):
    """Runs binary on path under /usr/bin/time -v: (rss_bytes, wall_s, ok, err)."""
    proc = subprocess.run(
        ["/usr/bin/time", "-v", binary, path, "--solver=checkpoint-all"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): "
                     r"(?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    wall_s = None
    if wall:
        h, m, s = wall.groups()
        wall_s = int(h or 0) * 3600 + int(m) * 60 + float(s)
    ok = proc.returncode == 0
    err = "" if ok else (proc.stderr.strip().splitlines() or ["?"])[0][:200]
    return (int(rss.group(1)) * 1024 if rss else None, wall_s, ok, err)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.path.join(ROOT, "build", "bin", "remat-solve")
    parser.add_argument("--remat-solve", default=default)
    parser.add_argument("--baseline", help="a second remat-solve to compare "
                        "(e.g. one built before the change)")
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--keep", help="write the files here and keep them")
    args = parser.parse_args()

    binaries = [("current", args.remat_solve)]
    if args.baseline:
        binaries.append(("baseline", args.baseline))
    for _, b in binaries:
        if not os.access(b, os.X_OK):
            parser.error("not an executable: %s" % b)
    cases = []
    for case in args.cases.split(","):
        try:
            dialect, nodes, links = case.split(":")
            cases.append((dialect, int(nodes), int(links)))
        except ValueError:
            parser.error("bad case %r (dialect:nodes:links)" % case)

    directory = args.keep or tempfile.mkdtemp(prefix="bench_graph_io.")
    os.makedirs(directory, exist_ok=True)
    rows = []
    for dialect, nodes, links in cases:
        path = os.path.join(directory, "%s-%d-%d.json" % (dialect, nodes, links))
        subprocess.run([sys.executable, os.path.join(HERE, "gen_big_nodelink.py"),
                        "--dialect", dialect, "--nodes", str(nodes),
                        "--links", str(links), "-o", path],
                       check=True, stderr=subprocess.DEVNULL)
        size = os.path.getsize(path)
        for name, binary in binaries:
            rss, wall_s, ok, err = measure(binary, path)
            rows.append({"binary": name, "dialect": dialect, "nodes": nodes,
                         "links": links, "file_bytes": size,
                         "peak_rss_bytes": rss, "wall_s": wall_s,
                         "ratio": rss / size if rss else None,
                         "ok": ok, "error": err})
        if not args.keep:
            os.remove(path)
    if not args.keep:
        os.rmdir(directory)

    header = ("binary    dialect     nodes    links  file_MB  peak_MB   ratio"
              "  wall_s  <=20x  ok")
    print(header)
    print("-" * len(header))
    for r in rows:
        print("%-8s  %-9s  %6d  %7d  %7.1f  %7.1f  %6.1f  %6.2f  %-5s  %s"
              % (r["binary"], r["dialect"], r["nodes"], r["links"],
                 r["file_bytes"] / 1e6, (r["peak_rss_bytes"] or 0) / 1e6,
                 r["ratio"] or 0, r["wall_s"] or 0,
                 "yes" if r["ratio"] and r["ratio"] <= 20 else "no",
                 "yes" if r["ok"] else "no: " + r["error"]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"rows": rows}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
