#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job on the shipped
# example (examples/mlp8.mlir, an 8-layer MLP training step): for each solver,
# the plan summary the simulator predicts, then the step compiled for the CPU
# and run, with its measured peak memory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
bin="$root/build/bin"
example="${1:-$root/examples/mlp8.mlir}"
for solver in checkpoint-all chen-sqrtn; do
  echo "== solver=$solver =="
  "$bin/remat-opt" "$example" --remat-report="solver=$solver" -o /dev/null |
    /usr/bin/python3 -c '
import json, sys
for f in json.load(sys.stdin)["functions"]:
    for p in f["plans"]:
        s = p["simulation"]
        print(f"plan @{f[\"function\"]}: solver={p[\"solver\"]} nodes={f[\"nodes\"]} "
              f"saved_activations={f[\"saved_activations\"]} predicted_peak_bytes={s[\"peakBytes\"]} "
              f"fixed_bytes={s[\"fixedBytes\"]} cost_overhead={s[\"overhead\"]:.3f} "
              f"recomputations={s[\"numRecomputations\"]}")'
  "$bin/remat-run" "$example" --entry=train_step --solver="$solver" | grep '^remat-run:'
done
