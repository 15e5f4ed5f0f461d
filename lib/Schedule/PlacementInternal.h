//===- PlacementInternal.h - Shared by the placement files ------*- C++ -*-===//
//
// Private to lib/Schedule: what PlacementHeuristics.cpp, PlacementSearch.cpp
// and MemoryPlacement.cpp share (formerly file-local in MemoryPlacement.cpp).
// The public interface is include/remat/Schedule/MemoryPlacement.h.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_SCHEDULE_PLACEMENTINTERNAL_H
#define REMAT_LIB_SCHEDULE_PLACEMENTINTERNAL_H

#include "remat/Schedule/MemoryPlacement.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <vector>

static inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static inline uint64_t alignUp(uint64_t value, uint64_t alignment) {
  // Alignments are powers of two (checkPlacementProblem).
  return (value + alignment - 1) & ~(alignment - 1);
}

namespace {
using Clock = std::chrono::steady_clock;
} // namespace

namespace remat {
/// The skyline dive in the order `sequence` (PlacementHeuristics.cpp); the
/// random dives of placeBuffers (MemoryPlacement.cpp) call it too.
std::vector<uint64_t> skylineDive(const std::vector<PlacementBuffer> &buffers,
                                  const std::vector<size_t> &sequence);
} // namespace remat

#endif // REMAT_LIB_SCHEDULE_PLACEMENTINTERNAL_H
