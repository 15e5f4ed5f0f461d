//===- StructureTestPass.cpp - test-remat-structure -----------------------===//
//
// Prints the structure analysis (remat/Structure/Structure.h) of every
// training step's forward graph, for lit: articulation points, splitting
// vertices, a summary and the hierarchy as an indented tree.
//
//===----------------------------------------------------------------------===//

#include "remat/Structure/Structure.h"
#include "remat/Transforms/GraphExtraction.h"
#include "remat/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace remat {
#define GEN_PASS_DEF_TESTSTRUCTUREPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct TestStructure
    : public remat::impl::TestStructurePassBase<TestStructure> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isTrainingStep(func))
      return;
    FailureOr<ExtractedGraph> extracted = extractTrainingGraph(func);
    if (failed(extracted))
      return signalPassFailure();
    const TrainingGraph &graph = extracted->graph;
    StructureAnalysis analysis(graph);
    const StructureGraph &sg = analysis.graph;
    auto name = [&](Vertex v) { return graph.node(sg.nodeId(v)).name; };
    auto leaf = [&](Vertex v) {
      const Node &node = graph.node(sg.nodeId(v));
      return node.name + " " + node.opName;
    };
    auto printList = [&](StringRef title, ArrayRef<Vertex> vertices) {
      llvm::outs() << "  " << title << ": [";
      llvm::interleaveComma(vertices, llvm::outs(),
                            [&](Vertex v) { llvm::outs() << name(v); });
      llvm::outs() << "]\n";
    };
    llvm::raw_ostream &os = llvm::outs();
    os << "structure @" << func.getSymName() << " ops=" << sg.numOps()
       << " edges=" << sg.numOpEdges() << "\n";
    printList("articulation-points", analysis.articulationPoints);
    printList("splitting-vertices", analysis.splittingVertices());
    HierarchySummary s = analysis.hierarchy.summary();
    os << "  hierarchy: linear=" << s.linear << " branched=" << s.branched
       << " non-branched=" << s.nonBranched << " ops=" << s.ops
       << " depth=" << s.depth << " split-members=" << s.splitMembers << "\n";
    analysis.printHierarchy(os, name, /*indent=*/2, leaf);
  }
};

} // namespace
