"""Checks remat-solve --json output: one result per solver and budget, each
with a schedule whose Compute statements number the graph's nodes plus the
reported recomputations, and meets_budget consistent with the peak.

Usage: check_json.py FILE EXPECTED_RESULTS
"""
import json
import sys


def main(path, expected):
    with open(path) as f:
        doc = json.load(f)
    nodes = doc["graph"]["nodes"]
    results = doc["results"]
    if len(results) != expected:
        sys.exit(f"FAIL: {len(results)} results, expected {expected}")
    for r in results:
        computes = sum(1 for step in r["schedule"] if "compute" in step)
        if computes != nodes + r["recomputations"]:
            sys.exit(f"FAIL: {r['solver']}: {computes} computes for "
                     f"{nodes} nodes + {r['recomputations']} recomputations")
        budget = r["budget"]
        fits = budget is None or r["peak_bytes"] <= budget
        if fits != r["meets_budget"]:
            sys.exit(f"FAIL: {r['solver']}: meets_budget inconsistent")
        if r["cost_overhead"] < 1.0:
            sys.exit(f"FAIL: {r['solver']}: overhead below 1")
    print(f"results: {len(results)}, all consistent")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
