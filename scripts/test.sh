#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test of the project (lit
# tests and the GoogleTest suites, through the one `check-remat` target).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cmake --build "$root/build" --target check-remat 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
unsupported=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
echo "check-remat: ${passed:-0} passed, ${failed:-0} failed, ${unsupported:-0} skipped"
exit "$status"
