#!/usr/bin/env bash
# Builds the core (the libraries without MLIR: RematSupport, RematGraph,
# RematStructure, RematSchedule, RematSolvers) and its GoogleTest binaries with
# clang-22's AddressSanitizer (+ LeakSanitizer) and UndefinedBehaviorSanitizer
# into build-asan/, then runs each binary. Any sanitizer report fails the run
# (UB is not recoverable). Needs clang-22 and libclang-rt-22-dev
# (scripts/setup.sh installs them). Usage: scripts/sanitize.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-asan"

# The core libraries and the unit tests (none of them links MLIR).
libs=(RematSupport RematGraph RematStructure RematStructureReference RematSchedule RematSolvers)
tests=(RematSupportTests RematGraphTests RematStructureTests RematScheduleTests
       RematSolversTests RematChainSolversTests RematCheckmateTests RematBudgetSolversTests)

SECONDS=0
bash "$root/scripts/configure-sanitized.sh" "$build" address,undefined,float-cast-overflow
configured=$SECONDS
cmake --build "$build" -j "$(nproc)" --target "${libs[@]}" "${tests[@]}"
built=$SECONDS

# Leak suppressions, by name, go in scripts/lsan.supp (none needed today: the
# Checkmate tests run CBC/CLP without a leak report; docs/building.md).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failures=0
for t in "${tests[@]}"; do
  log="$build/unittests/$t.log"
  if "$build/unittests/$t" --gtest_brief=1 >"$log" 2>&1; then
    n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    echo "sanitize: $t: ${n:-0} tests passed"
  else
    failures=$((failures + 1))
    echo "sanitize: $t: FAILED (log: $log)"
    tail -n 60 "$log"
  fi
done
ran=$SECONDS
echo "sanitize: ${#tests[@]} binaries, $failures failed" \
  "(configure ${configured}s, build $((built - configured))s, run $((ran - built))s)"
[ "$failures" -eq 0 ]
