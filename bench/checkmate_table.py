#!/usr/bin/env python3
"""Markdown summary of `remat-bench-checkmate --json=FILE` results.

Usage: checkmate_table.py FILE.json [FILE.json ...]

One row per graph and budget: the budget, the best plan among the other
solvers that fit (name and overhead), checkmate-ilp (status, overhead, time),
checkmate-lp (overhead, time), the LP lower bound (overhead units), and the
ratio LP rounding / ILP where the ILP is proven optimal. Then, per graph, the
geometric mean and maximum of that ratio.
"""
import json
import math
import sys


def size(b):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3f} {unit}"
    return f"{b} B"


def fmt(x, digits=4):
    return "-" if x is None else f"{x:.{digits}f}"


def main(paths):
    print("| graph | nodes | budget | best other solver | checkmate-ilp | ilp s | "
          "checkmate-lp | lp s | LP bound | lp/ilp |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    summaries = []
    for path in paths:
        doc = json.load(open(path))
        for graph in doc["graphs"]:
            name = graph["graph"].replace("_train.json", "").replace(".json", "")
            ratios = []
            if "budgets" not in graph:
                summaries.append(f"- {name}: skipped ({graph.get('error', 'not read')})")
                continue
            for budget in graph["budgets"]:
                rows = {r["solver"]: r for r in budget["results"]}
                others = [r for r in budget["results"]
                          if not r["solver"].startswith("checkmate") and r["meets_budget"]]
                best = min(others, key=lambda r: r["overhead"]) if others else None
                ilp, lp = rows.get("checkmate-ilp"), rows.get("checkmate-lp")
                ilp_status = ilp["checkmate"]["status"] if ilp else "-"
                ilp_text = (f"{ilp_status} {fmt(ilp['overhead'])}"
                            if ilp and ilp["meets_budget"] else ilp_status)
                lp_text = fmt(lp["overhead"]) if lp and lp["meets_budget"] else "no fit"
                bound = ilp["checkmate"].get("lp_bound") if ilp else None
                total = graph["total_cost"]
                bound_text = fmt(bound / total) if isinstance(bound, (int, float)) and bound > 0 else "-"
                ratio = None
                if (ilp and lp and ilp_status == "proven-optimal" and lp["meets_budget"]
                        and ilp["meets_budget"] and ilp["cost"] > 0):
                    ratio = lp["cost"] / ilp["cost"]
                    ratios.append(ratio)
                print(f"| {name} | {graph['nodes']} | {size(budget['bytes'])} | "
                      f"{best['solver'] + ' ' + fmt(best['overhead']) if best else 'none fits'} | "
                      f"{ilp_text} | {ilp['seconds']:.1f} | {lp_text} | {lp['seconds']:.1f} | "
                      f"{bound_text} | {fmt(ratio)} |")
            if ratios:
                geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
                summaries.append(f"- {name}: LP rounding / ILP geometric mean {geo:.4f}, "
                                 f"max {max(ratios):.4f} over {len(ratios)} budgets")
            else:
                summaries.append(f"- {name}: no budget with a proven ILP optimum and a fitting rounding")
    print()
    print("\n".join(summaries))


if __name__ == "__main__":
    main(sys.argv[1:])
