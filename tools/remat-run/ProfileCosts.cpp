//===- ProfileCosts.cpp - remat-run --profile-costs -----------------------===//
//
// See ProfileCosts.h.
//
//===----------------------------------------------------------------------===//

#include "ProfileCosts.h"

#include "remat/Dialect/RematDialect.h"
#include "remat/Transforms/GraphExtraction.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

mlir::func::FuncOp remat_run::findProfiledStep(ModuleOp module,
                                               llvm::StringRef entry,
                                               std::string &error) {
  if (!entry.empty()) {
    auto step = module.lookupSymbol<func::FuncOp>(entry);
    if (!step || step.isExternal())
      error = "no function '" + entry.str() + "' with a body to profile";
    return step;
  }
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !remat::isTrainingStep(func))
      continue;
    if (found) {
      error = "several training steps ('" + found.getSymName().str() +
              "', '" + func.getSymName().str() +
              "'): choose the one to profile with --entry";
      return nullptr;
    }
    found = func;
  }
  if (!found)
    error = "no training step to profile: use --entry";
  return found;
}

/// Ops that never take time of their own: they are not numbered (and get
/// cost 0).
static bool isFree(Operation *op) {
  return op->hasTrait<OpTrait::IsTerminator>() ||
         isa<tensor::EmptyOp, arith::ConstantOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp>(op);
}

unsigned remat_run::numberOpsForProfile(func::FuncOp step) {
  Builder b(step.getContext());
  unsigned next = 0;
  for (Operation &op : step.getBody().front())
    if (!isFree(&op))
      op.setAttr(remat::RematDialect::kProfileIdAttr,
                 b.getI64IntegerAttr(next++));
  return next;
}

double remat_run::applyProfiledCosts(func::FuncOp step,
                                     const RuntimeReport &report) {
  return remat::applyProfiledCosts(step, report.opNs);
}

std::string remat_run::writeModule(ModuleOp module, llvm::StringRef path) {
  std::string temp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec)
      return "cannot write '" + temp + "': " + ec.message();
    module.print(os);
    os << "\n";
    os.close();
    if (os.has_error())
      return "cannot write '" + temp + "'";
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return "cannot rename '" + temp + "' to '" + path.str() +
           "': " + ec.message();
  return "";
}
