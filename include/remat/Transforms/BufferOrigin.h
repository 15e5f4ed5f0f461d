//===- BufferOrigin.h - Which buffers can share bytes -----------*- C++ -*-===//
//
// One answer, used by the passes that move memory accesses across each other
// on buffers (remat-promote-loop-accumulators, remat-fuse-parallel-loops).
// Implemented in PrepareLoopsForCpu.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_BUFFERORIGIN_H
#define REMAT_TRANSFORMS_BUFFERORIGIN_H

#include "mlir/IR/Value.h"

namespace remat {

/// Whether the two memrefs can share no byte: views of one fresh allocation
/// (an allocation, or the step's arena from `remat_rt_arena`) at disjoint
/// constant byte ranges (`memref.view`), two fresh allocations, a fresh
/// allocation and an argument of the function or a global (memory the
/// function did not allocate), or two different globals. Memory of unknown
/// origin may be anything; an argument may point anywhere but into the
/// function's own allocations (two arguments may overlap).
bool provablyDisjoint(mlir::Value a, mlir::Value b);

} // namespace remat

#endif // REMAT_TRANSFORMS_BUFFERORIGIN_H
