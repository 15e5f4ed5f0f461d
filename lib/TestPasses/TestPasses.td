//===- TestPasses.td - test-only passes of remat-opt -------*- tablegen -*-===//
//
// Registered by remat-opt only (registerRematTestPasses); not installed, not
// in the plugin.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TEST_PASSES
#define REMAT_TEST_PASSES

include "mlir/Pass/PassBase.td"

def TestTrainingGraphPass
    : InterfacePass<"test-remat-training-graph", "mlir::FunctionOpInterface"> {
  let summary = "Print the training graph extracted from each training step";
  let description = [{
    Test-only. Extracts the TrainingGraph of every training step and prints its
    nodes (phase, cost, the ops they group), values (bytes, producer, users),
    the saved activations and the fixed bytes to stdout.
  }];
}

def TestStructurePass
    : InterfacePass<"test-remat-structure", "mlir::FunctionOpInterface"> {
  let summary = "Print the structure analysis of each training step's forward graph";
  let description = [{
    Test-only. Extracts the TrainingGraph of every training step and runs the
    structure analysis (remat/Structure/Structure.h) on its forward part:
    prints to stdout the articulation points of the undirected forward graph
    (Checkmate appendix B.1), the splitting vertices of the whole forward
    graph (Feng & Huang Definition 3), a summary of the hierarchy, and the
    hierarchy itself as an indented tree: `linear`, `branched` (`+edge` when
    the close set includes the edge entry -> exit), `non-branched` (with the
    size of its maximal split) and `op` lines, each close set with its entry
    and exit (`source` / `sink` for the virtual ones), the number of ops it
    hides, their bytes and cost.
  }];
}

def TestContractionMatchPass
    : InterfacePass<"test-remat-contraction-match", "mlir::FunctionOpInterface"> {
  let summary = "Say for every linalg op whether it is a library contraction";
  let description = [{
    Test-only. Runs ContractionMatch.h on every linalg op (tensors or buffers)
    and emits a remark at the op: `contraction: <descriptor>` with every size
    and stride of LibraryCalls.h's descriptor and the element offsets of its
    operands, or `not a contraction: <why>`.
  }];
}

#endif // REMAT_TEST_PASSES
