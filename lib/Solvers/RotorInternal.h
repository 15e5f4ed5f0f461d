//===- RotorInternal.h - Helpers shared by the rotor files ------*- C++ -*-===//
//
// Private to lib/Solvers: what RotorChain.cpp, RotorTable.cpp,
// RotorMapping.cpp and RotorSearch.cpp all use (formerly file-static in
// Rotor.cpp). The public interface is include/remat/Solvers/Rotor.h.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_SOLVERS_ROTORINTERNAL_H
#define REMAT_LIB_SOLVERS_ROTORINTERNAL_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

static inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

#endif // REMAT_LIB_SOLVERS_ROTORINTERNAL_H
