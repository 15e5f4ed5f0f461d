//===- TestPasses.cpp - the test-only passes of remat-opt -----------------===//
//
// Passes that print internal data structures for lit, registered by
// remat-opt only (registerRematTestPasses): not in the installed headers, the
// plugin or the public Passes.td. test-remat-training-graph prints the
// extracted training graph; test-remat-structure the structure analysis
// (remat/Structure/Structure.h) of every training step's forward graph:
// articulation points, splitting vertices, a summary and the hierarchy as an
// indented tree. Both read the TrainingGraphAnalysis and preserve it.
//
//===----------------------------------------------------------------------===//

#include "remat/Structure/Structure.h"
#include "remat/Transforms/ContractionMatch.h"
#include "remat/Transforms/GraphExtraction.h"
#include "TestPasses.h"

#include "mlir/Pass/Pass.h"

#include "llvm/ADT/STLExtras.h"

namespace remat {
#define GEN_PASS_DEF_TESTTRAININGGRAPHPASS
#define GEN_PASS_DEF_TESTSTRUCTUREPASS
#define GEN_PASS_DEF_TESTCONTRACTIONMATCHPASS
#include "TestPasses.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

//===----------------------------------------------------------------------===//
// test-remat-training-graph
//===----------------------------------------------------------------------===//

struct TestTrainingGraph
    : public remat::impl::TestTrainingGraphPassBase<TestTrainingGraph> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    markAllAnalysesPreserved();
    FailureOr<const ExtractedGraph *> extracted =
        getAnalysis<TrainingGraphAnalysis>().get();
    if (failed(extracted))
      return signalPassFailure();
    if (!*extracted) // Not a training step.
      return;
    const TrainingGraph &graph = (*extracted)->graph;
    llvm::raw_ostream &os = llvm::outs();
    auto valueRef = [&](ValueId id) {
      const remat::GraphValue &v = graph.value(id);
      return v.name + ":" + std::to_string(v.bytes);
    };
    os << "training-graph @" << func.getName() << " nodes=" << graph.numNodes()
       << " values=" << graph.numValues() << " fixed_bytes=" << graph.fixedBytes()
       << " prelude_ops=" << (*extracted)->preludeOps.size() << "\n";
    for (NodeId id = 0; id < static_cast<NodeId>(graph.numNodes()); ++id) {
      const remat::Node &node = graph.node(id);
      os << "  node " << node.name << " " << remat::phaseName(node.phase) << " "
         << node.opName << " cost=" << llvm::format("%g", node.cost)
         << " ops=[";
      llvm::interleaveComma((*extracted)->nodeOps[id], os,
                            [&](Operation *op) { os << op->getName(); });
      os << "] in=[";
      llvm::interleaveComma(node.inputs, os,
                            [&](ValueId v) { os << valueRef(v); });
      os << "] out=[";
      llvm::interleaveComma(node.outputs, os,
                            [&](ValueId v) { os << valueRef(v); });
      os << "]";
      if (!node.reuses.empty()) {
        os << " reuses=[";
        llvm::interleaveComma(node.reuses, os, [&](auto pair) {
          os << graph.value(pair.first).name << "->"
             << graph.value(pair.second).name;
        });
        os << "]";
      }
      os << "\n";
    }
    os << "  saved=[";
    llvm::interleaveComma(graph.savedActivations(), os,
                          [&](ValueId v) { os << valueRef(v); });
    os << "]\n  outputs=[";
    bool first = true;
    for (ValueId v = 0; v < static_cast<ValueId>(graph.numValues()); ++v)
      if (graph.value(v).isOutput) {
        os << (first ? "" : ", ") << valueRef(v);
        first = false;
      }
    os << "]\n";
  }
};


struct TestStructure
    : public remat::impl::TestStructurePassBase<TestStructure> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    markAllAnalysesPreserved();
    FailureOr<const ExtractedGraph *> extracted =
        getAnalysis<TrainingGraphAnalysis>().get();
    if (failed(extracted))
      return signalPassFailure();
    if (!*extracted) // Not a training step.
      return;
    const TrainingGraph &graph = (*extracted)->graph;
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
    os << "structure @" << func.getName() << " ops=" << sg.numOps()
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

//===----------------------------------------------------------------------===//
// test-remat-contraction-match
//===----------------------------------------------------------------------===//

struct TestContractionMatch
    : public remat::impl::TestContractionMatchPassBase<TestContractionMatch> {
  using Base::Base;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    getOperation().walk([&](linalg::LinalgOp op) {
      std::string why;
      std::optional<MatchedContraction> m = matchContraction(op, why);
      if (!m) {
        op.emitRemark() << "not a contraction: " << why;
        return;
      }
      const lib::ContractionDesc &d = m->desc;
      std::string text;
      llvm::raw_string_ostream os(text);
      auto list = [&](const char *name, const int64_t *v, int64_t n) {
        os << " " << name << "=[";
        llvm::interleaveComma(llvm::ArrayRef(v, n), os);
        os << "]";
      };
      os << "contraction: " << d.describe();
      if (d.kind == lib::OpKind::Gemm) {
        list("a", d.aStrides, 3);
        list("b", d.bStrides, 3);
        list("c", d.cStrides, 3);
      } else {
        list("src", d.srcStrides, 2 + d.spatialRank);
        list("weights", d.weightStrides, 3 + d.spatialRank);
        list("dst", d.dstStrides, 2 + d.spatialRank);
      }
      os << " operands=(" << m->in0->getOperandNumber() << ", "
         << m->in1->getOperandNumber() << ", " << m->out->getOperandNumber()
         << ") offsets=(" << m->in0Offset << ", " << m->in1Offset << ", "
         << m->outOffset << ")";
      if (!m->writesWholeOutput)
        os << " part of the output";
      op.emitRemark() << text;
    });
  }
};

} // namespace
