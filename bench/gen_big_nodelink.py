#!/usr/bin/env python3
"""Writes a large node-link training graph for the graph-reader benchmark.

The graph is a dense DAG: node ids are a topological order, the first half of
the nodes is the forward pass and the second half the backward, and each node
reads up to `--fan-in` earlier nodes (so no backward node feeds a forward
one). Two dialects (docs/formats.md):

- `checkmate`: nodes {id, name, backward, cost_cpu, cost_ram}, links
  {source, target} -- the shape of issue 13's 47 MB and 99 MB files;
- `remat`: the project's own export (graph.format "remat-training-graph"):
  nodes with `outputs`, links {source, target, value}.

The file is written in one pass, without holding the graph in memory, and is
deterministic for a given set of arguments (`--seed`). Standard library only.

    python3 bench/gen_big_nodelink.py --nodes 20000 --links 2900000 -o big.json
"""

import argparse
import random
import sys


def write_graph(out, nodes, links, dialect, seed):
    rng = random.Random(seed)
    half = nodes // 2
    out.write('{"directed": true, "multigraph": %s, "graph": {%s},\n'
              % ("true" if dialect == "remat" else "false",
                 '"format": "remat-training-graph"' if dialect == "remat"
                 else '"name": "gen_big_nodelink"'))
    out.write(' "nodes": [\n')
    for i in range(nodes):
        backward = "true" if i >= half else "false"
        size = 1024 * rng.randint(1, 64)
        if dialect == "checkmate":
            out.write('  {"id": %d, "name": "n%d", "backward": %s, '
                      '"cost_cpu": %d, "cost_ram": %d}'
                      % (i, i, backward, rng.randint(1, 100), size))
        else:
            out.write('  {"id": %d, "name": "n%d", "op": "op", "backward": %s, '
                      '"cost_cpu": %d, "cost_ram": %d, "workspace": 0, '
                      '"outputs": [{"value": %d, "name": "v%d", "bytes": %d, '
                      '"output": false}]}'
                      % (i, i, backward, rng.randint(1, 100), size, i, i, size))
        out.write(",\n" if i + 1 < nodes else "\n")
    out.write(' ],\n "links": [\n')
    # Spread the links over the targets 1..nodes-1: target t gets about
    # links / (nodes - 1) distinct sources among 0..t-1 (fewer where t is
    # small), always including t - 1 so that the graph is connected.
    per_target = links / max(1, nodes - 1)
    written = 0
    first = True
    for t in range(1, nodes):
        want = min(t, int(round(per_target * t)) - written)
        if t == nodes - 1:
            want = min(t, links - written)
        sources = {t - 1}
        if want > 1:
            sources.update(rng.sample(range(t - 1), min(t - 1, want - 1))
                           if want - 1 < t - 1 else range(t - 1))
        for s in sorted(sources):
            if not first:
                out.write(",\n")
            first = False
            if dialect == "checkmate":
                out.write('  {"source": %d, "target": %d}' % (s, t))
            else:
                out.write('  {"source": %d, "target": %d, "value": %d}'
                          % (s, t, s))
        written += len(sources)
    out.write("\n ]\n}\n")
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--links", type=int, default=2900000)
    parser.add_argument("--dialect", choices=["checkmate", "remat"],
                        default="checkmate")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if args.nodes < 2 or args.links < 1:
        parser.error("need at least 2 nodes and 1 link")
    with open(args.output, "w") as out:
        written = write_graph(out, args.nodes, args.links, args.dialect,
                              args.seed)
    print("%s: %d nodes, %d links" % (args.output, args.nodes, written),
          file=sys.stderr)


if __name__ == "__main__":
    main()
