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
  "$bin/remat-opt" "$example" --remat-report="solver=$solver target=cpu" -o /dev/null |
    /usr/bin/python3 "$root/python/remat/plan_summary.py"
  "$bin/remat-run" "$example" --entry=train_step --solver="$solver" | grep '^remat-run:'
done
