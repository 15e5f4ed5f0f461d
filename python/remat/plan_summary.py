"""Prints one line per plan of a `remat-opt --remat-report` JSON document.

Usage: remat-opt STEP --remat-report="solver=..." -o /dev/null | plan_summary.py
"""
import json
import sys


def main():
    report = json.load(sys.stdin)
    for function in report["functions"]:
        for plan in function["plans"]:
            sim = plan["simulation"]
            fields = {
                "solver": plan["solver"],
                "nodes": function["nodes"],
                "saved_activations": function["saved_activations"],
                "predicted_peak_bytes": sim["peak_bytes"],
                "fixed_bytes": sim["fixed_bytes"],
                "cost_overhead": "%.3f" % sim["overhead"],
                "recomputations": sim["num_recomputations"],
                "meets_budget": str(plan["meets_budget"]).lower(),
            }
            print("plan @%s: %s" % (function["function"],
                                    " ".join("%s=%s" % kv for kv in fields.items())))


if __name__ == "__main__":
    main()
