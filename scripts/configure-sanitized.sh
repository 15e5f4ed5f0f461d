#!/usr/bin/env bash
# Configures a clang-22 build directory with sanitizers, for scripts/sanitize.sh
# and scripts/fuzz.sh (once: an existing build.ninja is kept).
# Usage: scripts/configure-sanitized.sh BUILD_DIR COMPILE_SANITIZERS [cmake args...]
# COMPILE_SANITIZERS is the -fsanitize= list for compiling (fuzz.sh adds
# fuzzer-no-link); linking always gets ASan + UBSan, and UB never recovers.
# -O1 -g without NDEBUG: asserts stay on, stacks stay readable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
compile=$2
shift 2
command -v clang++-22 >/dev/null || {
  echo "$(basename "$0"): clang++-22 not found (scripts/setup.sh installs clang-22 and libclang-rt-22-dev)" >&2
  exit 1
}
[ -f "$build/build.ninja" ] && exit 0
norecover="-fno-sanitize-recover=undefined,float-cast-overflow"
link="-fsanitize=address,undefined,float-cast-overflow"
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_C_FLAGS="-fsanitize=$compile $norecover -fno-omit-frame-pointer" \
  -DCMAKE_CXX_FLAGS="-fsanitize=$compile $norecover -fno-omit-frame-pointer" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_EXE_LINKER_FLAGS="$link" \
  -DCMAKE_SHARED_LINKER_FLAGS="$link" \
  -DREMAT_BUILD_PLUGIN=OFF -DREMAT_ENABLE_CUDA=OFF \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
  -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "$@" >/dev/null
