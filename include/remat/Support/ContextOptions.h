//===- ContextOptions.h - MLIR's context options in the tools ---*- C++ -*-===//
//
// Header-only (it uses MLIR, which the Support library does not link): the
// tools that build an MLIRContext (remat-opt, remat-run) call it before they
// parse their command line.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_CONTEXTOPTIONS_H
#define REMAT_SUPPORT_CONTEXTOPTIONS_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

namespace remat {

/// Registers MLIR's context options (`--mlir-print-op-on-diagnostic`,
/// `--mlir-print-stacktrace-on-diagnostic`, `--mlir-disable-threading`), which
/// every MLIRContext created afterwards reads, with the op printed on a
/// diagnostic off by default. MLIR's own default attaches `note: see current
/// operation:` and the whole op in generic form to every error emitted on an
/// op: on a training step, the whole function (1.1k to 12.7k lines on
/// exported models) after a one-line answer. A user who wants it asks for it
/// with `--mlir-print-op-on-diagnostic`; with `category`, the flag is also
/// in that category (listed by a tool that hides unrelated options).
inline void
registerContextOptionsQuietByDefault(llvm::cl::OptionCategory *category = nullptr) {
  mlir::registerMLIRContextCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it == options.end())
    return;
  auto *flag = static_cast<llvm::cl::opt<bool> *>(it->second);
  flag->setInitialValue(false);
  if (category)
    flag->addCategory(*category);
}

} // namespace remat

#endif // REMAT_SUPPORT_CONTEXTOPTIONS_H
