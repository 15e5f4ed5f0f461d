//===- GraphExtraction.h - function -> TrainingGraph ------------*- C++ -*-===//
//
// The adapter from a training step in MLIR to the pure C++ TrainingGraph
// (DESIGN.md §4-§5). A graph node is the group of ops that bufferize into one
// set of buffers: a destination-style op together with the single-use chain
// `tensor.empty -> (destination-style op)*` that initialises its destination,
// and the views (expand/collapse_shape, extract_slice, cast) of its results.
// A graph value is a buffer: one per tensor result of a node's head op, plus
// a zero-byte value for every scalar result. Function arguments are fixed
// values. Ops that touch no tensor (constants, scalar arithmetic on them) and
// views of arguments form the prelude and stay at the top of the function.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_GRAPHEXTRACTION_H
#define REMAT_TRANSFORMS_GRAPHEXTRACTION_H

#include "remat/Graph/TrainingGraph.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/AnalysisManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace remat {

struct ExtractedGraph {
  TrainingGraph graph;
  /// The ops of each node, in program order (init chain, head, views).
  std::vector<llvm::SmallVector<mlir::Operation *, 4>> nodeOps;
  /// Ops that are in no node: they read no node value and stay on top.
  llvm::SmallVector<mlir::Operation *> preludeOps;
  /// Graph value of every SSA value that carries one (node results, views,
  /// arguments). Values of prelude ops are absent.
  llvm::DenseMap<mlir::Value, ValueId> valueOf;
  /// The head op of each node.
  mlir::Operation *head(NodeId node) const { return headOps[node]; }
  std::vector<mlir::Operation *> headOps;
};

/// True if `func` is marked `remat.step` or carries any remat marker (an op
/// with `remat.loss`, `remat.seed` or `remat.phase`, an argument with
/// `remat.tangent`, a result with `remat.loss`): the functions the remat
/// passes rewrite.
bool isTrainingStep(mlir::FunctionOpInterface func);

/// Extracts the training graph, or emits located diagnostics and fails:
/// several blocks, dynamic or unranked shapes, no loss and no seed, a
/// side-effecting op in the forward part, a `func.call` in the forward part
/// or returning a tensor (remat-inline-calls inlines the calls of pure
/// functions first), a forward op reading a backward value, costs whose sum
/// over the step is not finite.
mlir::FailureOr<ExtractedGraph>
extractTrainingGraph(mlir::FunctionOpInterface func);

/// The training graph of a function as an MLIR analysis:
/// `getAnalysis<TrainingGraphAnalysis>()` in a function pass,
/// `getChildAnalysis<TrainingGraphAnalysis>(func)` in a module pass. It is
/// extracted once and kept for every later pass that preserves it: the passes
/// that only read the IR (remat-print-report, remat-print-graph, the test
/// passes) call markAllAnalysesPreserved(); a pass that changes the IR
/// invalidates it (the ExtractedGraph holds pointers to the ops). Under
/// `--mlir-timing` its extraction is the row "(A) remat::TrainingGraphAnalysis".
class TrainingGraphAnalysis {
public:
  /// Extracts the graph when `op` is a training step (isTrainingStep);
  /// nothing is extracted from other functions.
  explicit TrainingGraphAnalysis(mlir::Operation *op);

  /// The extracted graph of a training step; nullptr for a function that is
  /// not one; failure when the extraction failed (its located diagnostics
  /// were emitted when the analysis was computed).
  mlir::FailureOr<const ExtractedGraph *> get() const {
    if (!step)
      return nullptr;
    if (!extracted)
      return mlir::failure();
    return &*extracted;
  }

private:
  bool step = false;
  std::optional<ExtractedGraph> extracted;
};

/// The graph of `func` for a module pass running on `passOp` with `am`: the
/// function's TrainingGraphAnalysis when it is a training step directly inside
/// `passOp`, else extracted here into `storage` (a function nested
/// deeper, or one named by an option that carries no marker: the extraction
/// then says, at its location, what is missing). Failure after a located
/// error.
mlir::FailureOr<const ExtractedGraph *>
graphForModulePass(mlir::AnalysisManager am, mlir::Operation *passOp,
                   mlir::FunctionOpInterface func,
                   std::optional<ExtractedGraph> &storage);

/// Number of bytes the buffer of a statically shaped tensor takes (0 for
/// scalars: they live in registers): elements times their storage size,
/// whole bytes rounded up to a power of two as the LLVM lowering stores them
/// (i1 and i4 take a byte each).
uint64_t bufferBytes(mlir::Type type);

} // namespace remat

#endif // REMAT_TRANSFORMS_GRAPHEXTRACTION_H
