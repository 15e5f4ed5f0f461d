#!/usr/bin/env bash
# Installs what the project needs (Debian packages only) and builds it into
# build/. Safe to run again: it installs only what is missing and rebuilds
# incrementally. Usage: scripts/setup.sh [extra cmake --build args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(cmake ninja-build g++ libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
          libgtest-dev googletest coinor-libcbc-dev coinor-libclp-dev pkg-config python3
          python3-torch python3-torchvision python3-matplotlib python3-numpy
          python3-networkx clang-22 libclang-rt-22-dev libdnnl-dev
          libomp-22-dev libopenblas0-pthread)
# libopenblas0-pthread: Debian's torch runs its matrix products through whichever libblas.so.3 is installed;
# without OpenBLAS that is netlib's reference BLAS, and bench/bench_step_time.py's PyTorch baseline is 5-10x slow.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
build="$root/build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
cmake --build "$build" -j "$(nproc)" "$@"
