//===- CpuLibrary.h - oneDNN behind remat_lib_contraction -------*- C++ -*-===//
//
// The CPU side of the library calls (LibraryCalls.h): oneDNN primitives with
// user-managed scratchpads. The compiler asks `cpuWorkspaceBytes` how many
// bytes of workspace a contraction needs, at compile time, and plans them as
// the node's workspace; the CPU runtime runs the call with exactly that
// buffer. Both link the same code (lib/Runtime/CpuLibrary.cpp), so the two
// answers agree on the machine that compiles and runs (remat-run); a program
// run on another machine whose oneDNN picks other kernels stops with an error
// naming both figures instead of allocating behind the plan.
//
// Plain C++ (no MLIR, no LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPULIBRARY_H
#define REMAT_RUNTIME_CPULIBRARY_H

#include "remat/Runtime/LibraryCalls.h"

#include <cstdint>
#include <string>

namespace remat::lib {

/// True when the project was built with oneDNN (REMAT_HAVE_DNNL).
bool cpuLibraryAvailable();

/// The workspace bytes the CPU runtime needs to run `desc`, or -1 with
/// `reason` set when oneDNN cannot run it (an element type without a oneDNN
/// primitive, a shape it rejects, no oneDNN in this build).
int64_t cpuWorkspaceBytes(const ContractionDesc &desc, std::string &reason);

/// The oneDNN implementation that runs `desc` ("brgconv:avx512_core", ...)
/// and its reorders, for diagnostics and benchmarks; "" when unsupported.
std::string cpuImplementation(const ContractionDesc &desc);

} // namespace remat::lib

#endif // REMAT_RUNTIME_CPULIBRARY_H
