//===- CopiesToLinalg.cpp - Strided copies as linalg.copy -----------------===//
//
// remat-copies-to-linalg (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATCOPIESTOLINALGPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

#define DEBUG_TYPE "remat-copies-to-linalg"

namespace {

/// A statically shaped buffer whose elements are contiguous in row-major
/// order (what memcpy can copy).
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

struct RematCopiesToLinalgPass
    : remat::impl::RematCopiesToLinalgPassBase<RematCopiesToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!isContiguous(copy.getSource().getType()) ||
          !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      LLVM_DEBUG(llvm::dbgs() << "remat-copies-to-linalg: copy at "
                              << copy.getLoc() << " into "
                              << copy.getTarget().getType() << "\n");
      auto linalgCopy = linalg::CopyOp::create(
          rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      linalgCopy->setDiscardableAttrs(copy->getDiscardableAttrDictionary());
      rewriter.eraseOp(copy);
    }
  }
};

} // namespace
