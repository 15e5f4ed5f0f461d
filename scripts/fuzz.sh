#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (fuzz-graph-json, fuzz-budget,
# fuzz-solve) with clang-22, -fsanitize=fuzzer + ASan + UBSan, into
# build-fuzz/, then runs each for N seconds (default 60) on a copy of its
# checked-in corpus (fuzz/corpus/<target>/ is never modified). Prints per
# target the executions and crashes; exits non-zero on any crash, leak,
# timeout or sanitizer report (the reproducer is left in
# build-fuzz/fuzz-out/<target>/). Needs clang-22 and libclang-rt-22-dev
# (scripts/setup.sh). Then fuzzes remat-autodiff for as long: random small
# forward functions differentiated by the main build's remat-opt (build/,
# which scripts/test.sh or setup.sh configures), their gradients checked
# against finite differences (fuzz/autodiff/fuzz_autodiff.py; reproducers in
# build-fuzz/fuzz-out/autodiff/). Usage: scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
seconds=${1:-60}
targets=(fuzz-graph-json fuzz-budget fuzz-solve)

SECONDS=0
# The libraries get the fuzzer's coverage instrumentation without its main
# (fuzzer-no-link); fuzz/CMakeLists.txt links -fsanitize=fuzzer into the fuzz
# executables only.
bash "$root/scripts/configure-sanitized.sh" "$build" \
  fuzzer-no-link,address,undefined,float-cast-overflow \
  -DREMAT_BUILD_FUZZERS=ON -DREMAT_BUILD_UNITTESTS=OFF
configured=$SECONDS
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
built=$SECONDS

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failures=0
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  out="$build/fuzz-out/$t"
  log="$out/fuzz.log"
  rm -rf "$corpus" "$out"
  mkdir -p "$corpus" "$out"
  cp "$root/fuzz/corpus/$t/"* "$corpus/"
  status=0
  "$build/bin/$t" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  crashes=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  files=$(find "$corpus" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  echo "fuzz: $t: ${execs:-0} executions in ${seconds}s, corpus $files files, crashes: $crashes"
  if [ "$crashes" -ne 0 ]; then
    failures=$((failures + 1))
    echo "fuzz: $t: FAILED (exit $status; log: $log; reproducers in $out/)"
    grep -v '^#' "$log" | tail -n 60
  fi
done

# remat-autodiff: not a libFuzzer target (a gradient check compiles and runs
# each input), a generator and a property: every random forward function is
# differentiated or rejected with a located error, never a crash, and every
# gradient equals the finite difference.
if [ ! -f "$root/build/build.ninja" ] && [ ! -f "$root/build/Makefile" ]; then
  echo "fuzz: autodiff: FAILED: no main build in $root/build (run scripts/setup.sh)"
  failures=$((failures + 1))
else
  cmake --build "$root/build" --target remat-opt remat-run RematCpuRuntime >/dev/null
  status=0
  /usr/bin/python3 "$root/fuzz/autodiff/fuzz_autodiff.py" --seconds "$seconds" \
    --bin-dir "$root/build/bin" --out "$build/fuzz-out/autodiff" || status=$?
  if [ "$status" -ne 0 ]; then
    failures=$((failures + 1))
    echo "fuzz: autodiff: FAILED (reproducers in $build/fuzz-out/autodiff/)"
  fi
fi
targets+=(autodiff)

ran=$SECONDS
echo "fuzz: ${#targets[@]} targets, $failures failed" \
  "(configure ${configured}s, build $((built - configured))s, run $((ran - built))s)"
[ "$failures" -eq 0 ]
