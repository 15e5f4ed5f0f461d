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
sanitize="-fsanitize=address,undefined,float-cast-overflow"
norecover="-fno-sanitize-recover=undefined,float-cast-overflow"

# The core libraries and the unit tests (none of them links MLIR).
libs=(RematSupport RematGraph RematStructure RematStructureReference RematSchedule RematSolvers)
tests=(RematSupportTests RematGraphTests RematStructureTests RematScheduleTests
       RematSolversTests RematChainSolversTests RematCheckmateTests RematBudgetSolversTests)

command -v clang++-22 >/dev/null || {
  echo "sanitize: clang++-22 not found (scripts/setup.sh installs clang-22 and libclang-rt-22-dev)" >&2
  exit 1
}
SECONDS=0
if [ ! -f "$build/build.ninja" ]; then
  # -O1 -g without NDEBUG: asserts stay on, stacks stay readable.
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS="$sanitize $norecover -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$sanitize $norecover -fno-omit-frame-pointer" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
    -DCMAKE_SHARED_LINKER_FLAGS="$sanitize" \
    -DREMAT_BUILD_PLUGIN=OFF -DREMAT_ENABLE_CUDA=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
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
