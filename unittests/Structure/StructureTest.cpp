//===- StructureTest.cpp - Paper figures and model-shaped graphs ----------===//
//
// The examples of seeds/001 Figures 3 and 4 (reconstructed from their
// captions and the text of §4.1, the figures themselves are not in the text)
// and the shapes of residual networks, Inception, U-Net, DenseNet and
// Transformer blocks, each checked for its expected hierarchy and against the
// brute-force reference (Check.h).
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "remat/Structure/BruteForce.h"
#include "remat/Structure/Structure.h"

#include "gtest/gtest.h"

#include <map>
#include <string>

using namespace remat;
using brute::CloseSet;

namespace {

/// Builds small DAGs by op name, as an edge list (ops numbered in insertion
/// order) or as a TrainingGraph with a backward part.
class Builder {
public:
  /// Adds op `name` reading the ops `inputs` ("x" is the step's input).
  Builder &op(const std::string &name, std::vector<std::string> inputs = {},
              uint64_t bytes = 16, double cost = 1) {
    std::vector<ValueId> reads;
    for (const std::string &in : inputs) {
      if (in == "x") {
        if (input < 0)
          input = graph.addFixedValue("x", 16);
        reads.push_back(input);
      } else {
        reads.push_back(values.at(in));
      }
    }
    NodeId id = graph.addNode(name, "test.op", cost, Phase::Forward, reads);
    values[name] = graph.addOutput(id, name, bytes);
    names.push_back(name);
    return *this;
  }

  StructureAnalysis analyse() const { return StructureAnalysis(graph); }

  /// The vertex of op `name`.
  Vertex v(const std::string &name) const {
    for (unsigned k = 0; k < names.size(); ++k)
      if (names[k] == name)
        return k + 1;
    ADD_FAILURE() << "no op " << name;
    return 0;
  }
  std::string label(Vertex v) const {
    return v == 0 ? "S" : v > names.size() ? "T" : names[v - 1];
  }
  std::function<std::string(Vertex)> labeler() const {
    return [this](Vertex v) { return label(v); };
  }
  std::vector<std::string> labels(llvm::ArrayRef<Vertex> vs) const {
    std::vector<std::string> out;
    for (Vertex v : vs)
      out.push_back(label(v));
    return out;
  }
  brute::VertexSet set(const StructureGraph &g,
                       std::vector<std::string> members) const {
    brute::VertexSet s(g.numVertices(), false);
    for (const std::string &m : members)
      s[v(m)] = true;
    return s;
  }

  TrainingGraph graph;

private:
  ValueId input = -1;
  std::map<std::string, ValueId> values;
  std::vector<std::string> names;
};

//===----------------------------------------------------------------------===//
// Figure 3: close sets, splitting vertex, branched and non-branched
//===----------------------------------------------------------------------===//

// Fig. 3(a): "v2 and v4 cannot form a close set because v3 depends on v1. v1
// and v3 can form a close set because v2 doesn't depend on any other vertex":
// v1 -> v2 -> v3 -> v4 and v1 -> v3.
TEST(Figure3, CloseSets) {
  Builder b;
  b.op("v1").op("v2", {"v1"}).op("v3", {"v1", "v2"}).op("v4", {"v3"});
  StructureAnalysis a = b.analyse();
  brute::Reference ref(a.graph);
  EXPECT_TRUE(ref.isCloseSet(b.v("v1"), b.v("v3"), b.set(a.graph, {"v2"})));
  EXPECT_FALSE(ref.isCloseSet(b.v("v2"), b.v("v4"), b.set(a.graph, {"v3"})));
  // s_13 with and without the edge v1 -> v3 (Definition 1): with it, the
  // close set is branched (Algorithm 3, line 2).
  EXPECT_TRUE(
      ref.isBranched({b.v("v1"), b.v("v3"), b.set(a.graph, {"v2"}), true}));
  EXPECT_FALSE(
      ref.isBranched({b.v("v1"), b.v("v3"), b.set(a.graph, {"v2"}), false}));
  EXPECT_EQ(b.labels(a.splittingVertices()),
            (std::vector<std::string>{"v1", "v3", "v4"}));
  EXPECT_EQ(check::describe(a, 0, b.labeler()), "L[v1,B+[v2],v3,v4]");
  check::checkAgainstReference(a, "figure 3a");
}

// Fig. 3(b): "v2 is the splitting vertex of s_13". Each segment is itself a
// small branched close set, so that v2 is the only splitting vertex.
TEST(Figure3, SplittingVertexOfS13) {
  Builder b;
  b.op("v1")
      .op("a", {"v1"})
      .op("v2", {"v1", "a"})
      .op("c", {"v2"})
      .op("v3", {"v2", "c"});
  StructureAnalysis a = b.analyse();
  brute::Reference ref(a.graph);
  CloseSet s13{b.v("v1"), b.v("v3"), b.set(a.graph, {"a", "v2", "c"}), false};
  ASSERT_TRUE(ref.isCloseSet(s13.entry, s13.exit, s13.vertices));
  EXPECT_EQ(b.labels(ref.splittingVertices(s13)),
            (std::vector<std::string>{"v2"}));
  EXPECT_EQ(check::describe(a, 0, b.labeler()), "L[v1,B+[a],v2,B+[c],v3]");
  // The hierarchy's segment between v1 and v3 (the whole minus the ends) has
  // v2 as its only splitting vertex.
  EXPECT_EQ(b.labels(a.hierarchy.node(0).splittingVertices),
            (std::vector<std::string>{"v1", "v2", "v3"}));
  check::checkAgainstReference(a, "figure 3b");
}

// Fig. 3(c): branched close set with 0 splitting vertex.
TEST(Figure3, BranchedWithoutSplittingVertex) {
  Builder b;
  b.op("v1").op("v2", {"v1"}).op("v3", {"v1"}).op("v4", {"v2", "v3"});
  StructureAnalysis a = b.analyse();
  brute::Reference ref(a.graph);
  CloseSet s14{b.v("v1"), b.v("v4"), b.set(a.graph, {"v2", "v3"}), false};
  EXPECT_TRUE(ref.isBranched(s14));
  EXPECT_TRUE(ref.splittingVertices(s14).empty());
  EXPECT_EQ(check::describe(a, 0, b.labeler()), "L[v1,B[v2,v3],v4]");
  check::checkAgainstReference(a, "figure 3c");
}

// Fig. 3(d) / Fig. 4(b): non-branched with 0 splitting vertex; its maximal
// split is {[s_12], [s_13], [s_23], [s_24], [s_34]} (Fig. 4(b) caption).
TEST(Figure3, NonBranchedMaximalSplitOfEdges) {
  Builder b;
  b.op("v1").op("v2", {"v1"}).op("v3", {"v1", "v2"}).op("v4", {"v2", "v3"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()), "L[v1,N[v2,v3],v4]");
  const HierarchyNode &s14 = a.hierarchy.node(a.hierarchy.node(0).children[1]);
  ASSERT_EQ(s14.kind, HierarchyKind::NonBranched);
  std::vector<std::string> members;
  for (const SplitMember &m : s14.split)
    members.push_back("s_" + b.label(m.entry).substr(1) +
                      b.label(m.exit).substr(1));
  EXPECT_EQ(members,
            (std::vector<std::string>{"s_12", "s_13", "s_23", "s_24", "s_34"}));
  check::checkAgainstReference(a, "figure 3d");
}

//===----------------------------------------------------------------------===//
// Figure 4: Theorems 1-3 and the maximal split of s_14
//===----------------------------------------------------------------------===//

// Fig. 4(a): s_13 and s_24 overlap in s_23; v2 splits s_13, v3 splits s_24;
// s_14 has the splitting vertices v2, v3 and the segments s_12, s_23, s_34.
TEST(Figure4, OverlapAndSplittingVertices) {
  Builder b;
  b.op("v1")
      .op("a1", {"v1"})
      .op("a2", {"v1"})
      .op("v2", {"a1", "a2"})
      .op("c", {"v2"})
      .op("v3", {"v2", "c"})
      .op("d1", {"v3"})
      .op("d2", {"d1"})
      .op("d3", {"v3"})
      .op("v4", {"d2", "d3"});
  StructureAnalysis a = b.analyse();
  brute::Reference ref(a.graph);
  const StructureGraph &g = a.graph;
  CloseSet s13{b.v("v1"), b.v("v3"), b.set(g, {"a1", "a2", "v2", "c"}), false};
  CloseSet s24{b.v("v2"), b.v("v4"), b.set(g, {"c", "v3", "d1", "d2", "d3"}),
               false};
  CloseSet s14{b.v("v1"), b.v("v4"),
               b.set(g, {"a1", "a2", "v2", "c", "v3", "d1", "d2", "d3"}),
               false};
  ASSERT_TRUE(ref.isCloseSet(s13.entry, s13.exit, s13.vertices));
  ASSERT_TRUE(ref.isCloseSet(s24.entry, s24.exit, s24.vertices));
  // Theorem 1: s_13 ∩ s_24 = s_23.
  brute::VertexSet meet(g.numVertices(), false);
  for (Vertex v = 0; v < g.numVertices(); ++v)
    meet[v] = s13.vertices[v] && s24.vertices[v];
  EXPECT_EQ(meet, b.set(g, {"c"}));
  EXPECT_TRUE(ref.isCloseSet(b.v("v2"), b.v("v3"), meet));
  // Theorem 2.
  EXPECT_EQ(b.labels(ref.splittingVertices(s13)),
            (std::vector<std::string>{"v2"}));
  EXPECT_EQ(b.labels(ref.splittingVertices(s24)),
            (std::vector<std::string>{"v3"}));
  // Theorem 3: s_14 = s_12 + s_23 + s_34 + {v2, v3}.
  EXPECT_EQ(b.labels(ref.splittingVertices(s14)),
            (std::vector<std::string>{"v2", "v3"}));
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[v1,B[a1,a2],v2,B+[c],v3,B[L[d1,d2],d3],v4]");
  check::checkAgainstReference(a, "figure 4a");
}

// Fig. 4(b) with a sub-graph on every member: the maximal split of s_14 is
// {[s_12], [s_13], [s_23], [s_24], [s_34]}, each member hiding its sub-graph.
TEST(Figure4, MaximalSplitOfS14) {
  Builder b;
  b.op("v1")
      .op("p", {"v1"})
      .op("v2", {"p"})
      .op("q", {"v1"})
      .op("r", {"v2"})
      .op("v3", {"q", "r"})
      .op("t1", {"v2"})
      .op("t2", {"t1"})
      .op("u1", {"v3"})
      .op("u2", {"v3"})
      .op("v4", {"t2", "u1", "u2"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[v1,N[p,q,v2,r,L[t1,t2],v3,B[u1,u2]],v4]");
  const HierarchyNode &s14 = a.hierarchy.node(a.hierarchy.node(0).children[1]);
  ASSERT_EQ(s14.kind, HierarchyKind::NonBranched);
  std::vector<std::string> members;
  for (const SplitMember &m : s14.split) {
    std::string hidden;
    if (m.node >= 0)
      for (Vertex v : a.hierarchy.vertices(m.node))
        hidden += b.label(v);
    members.push_back(b.label(m.entry) + b.label(m.exit) + ":" + hidden);
  }
  EXPECT_EQ(members, (std::vector<std::string>{"v1v2:p", "v1v3:q", "v2v3:r",
                                               "v2v4:t1t2", "v3v4:u1u2"}));
  // Theorem 5: more than 2 members; Theorem 4: the brute force agrees.
  check::checkAgainstReference(a, "figure 4b");
}

//===----------------------------------------------------------------------===//
// Model-shaped graphs
//===----------------------------------------------------------------------===//

TEST(Models, ResidualBlocks) {
  Builder b;
  b.op("stem", {"x"})
      .op("c1", {"stem"})
      .op("r1", {"c1"})
      .op("c2", {"r1"})
      .op("add1", {"c2", "stem"})
      // A block with a projection shortcut: two branches, no direct edge.
      .op("c3", {"add1"})
      .op("r2", {"c3"})
      .op("c4", {"r2"})
      .op("proj", {"add1"})
      .op("add2", {"c4", "proj"})
      .op("fc", {"add2"})
      .op("loss", {"fc"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[stem,B+[L[c1,r1,c2]],add1,B[L[c3,r2,c4],proj],add2,fc,loss]");
  // Checkmate B.1: "APs include the input and output nodes of residual
  // blocks, but not vertices inside blocks". The step's input is a function
  // argument, not a vertex, so the stem (first op) is no cut vertex.
  EXPECT_EQ(b.labels(a.articulationPoints),
            (std::vector<std::string>{"add1", "add2", "fc"}));
  EXPECT_EQ(b.labels(a.splittingVertices()),
            (std::vector<std::string>{"stem", "add1", "add2", "fc", "loss"}));
  check::checkAgainstReference(a, "resnet");
}

TEST(Models, InceptionParallelBranches) {
  Builder b;
  b.op("in", {"x"})
      .op("b1", {"in"})
      .op("b2a", {"in"})
      .op("b2b", {"b2a"})
      .op("b3a", {"in"})
      .op("b3b", {"b3a"})
      .op("b3c", {"b3b"})
      .op("pool", {"in"})
      .op("b4", {"pool"})
      .op("cat", {"b1", "b2b", "b3c", "b4"})
      .op("out", {"cat"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[in,B[b1,L[b2a,b2b],L[b3a,b3b,b3c],L[pool,b4]],cat,out]");
  const HierarchyNode &block =
      a.hierarchy.node(a.hierarchy.node(0).children[1]);
  EXPECT_EQ(block.kind, HierarchyKind::Branched);
  EXPECT_EQ(block.children.size(), 4u);
  EXPECT_EQ(block.numVertices(), 8u);
  EXPECT_EQ(block.bytes, 8u * 16);
  check::checkAgainstReference(a, "inception");
}

TEST(Models, UNetLongSkips) {
  Builder b;
  b.op("e1", {"x"})
      .op("e2", {"e1"})
      .op("e3", {"e2"})
      .op("mid", {"e3"})
      .op("d3", {"mid", "e3"})
      .op("d2", {"d3", "e2"})
      .op("d1", {"d2", "e1"})
      .op("out", {"d1"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[e1,B+[L[e2,B+[L[e3,B+[mid],d3]],d2]],d1,out]");
  EXPECT_EQ(a.hierarchy.summary().depth, 6u);
  // Checkmate: "some networks have few articulation points, including U-Net".
  // (e1, the first op, is none: the input is an argument, not a vertex.)
  EXPECT_EQ(b.labels(a.articulationPoints), (std::vector<std::string>{"d1"}));
  check::checkAgainstReference(a, "unet");
}

TEST(Models, DenseNetDenseBlock) {
  // Each layer: bn -> conv reads the concatenation of every earlier feature
  // map (torchvision's torch.cat(prev_features)).
  Builder b;
  b.op("x0", {"x"});
  std::vector<std::string> features{"x0"};
  for (int k = 1; k <= 4; ++k) {
    std::string layer = std::to_string(k);
    std::string input = k == 1 ? "x0" : "cat" + std::to_string(k - 1);
    b.op("bn" + layer, {input}).op("y" + layer, {"bn" + layer});
    features.push_back("y" + layer);
    b.op("cat" + layer, features);
  }
  b.op("trans", {"cat4"});
  StructureAnalysis a = b.analyse();
  // The block is one non-branched close set: every concatenation reads x0 and
  // every earlier y, so no vertex inside splits it. The last layer's y4 feeds
  // only cat4, so its member is s_{cat3,cat4} = {bn4, y4}.
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[x0,B+[N[bn1,y1,cat1,bn2,y2,cat2,bn3,y3,cat3,L[bn4,y4]]],cat4,"
            "trans]");
  int blockId = a.hierarchy.node(a.hierarchy.node(0).children[1]).children[0];
  const HierarchyNode &block = a.hierarchy.node(blockId);
  ASSERT_EQ(block.kind, HierarchyKind::NonBranched);
  unsigned withVertices = 0;
  for (const SplitMember &m : block.split)
    withVertices += m.node >= 0;
  // Members s_{x0,y1}, s_{cat(k-1),y_k} = {bn_k}, s_{cat3,cat4}, and every
  // concatenation edge that no member holds (2 + 3 + 4 + 3).
  EXPECT_EQ(withVertices, 4u);
  EXPECT_EQ(block.split.size(), 4u + 2 + 3 + 4 + 3);
  check::checkAgainstReference(a, "densenet");
}

TEST(Models, TransformerBlock) {
  Builder b;
  b.op("h", {"x"})
      .op("ln1", {"h"})
      .op("q", {"ln1"})
      .op("k", {"ln1"})
      .op("v", {"ln1"})
      .op("qk", {"q", "k"})
      .op("softmax", {"qk"})
      .op("av", {"softmax", "v"})
      .op("proj", {"av"})
      .op("add1", {"h", "proj"})
      .op("ln2", {"add1"})
      .op("ff1", {"ln2"})
      .op("gelu", {"ff1"})
      .op("ff2", {"gelu"})
      .op("add2", {"add1", "ff2"});
  StructureAnalysis a = b.analyse();
  EXPECT_EQ(check::describe(a, 0, b.labeler()),
            "L[h,B+[L[ln1,B[L[B[q,k],qk,softmax],v],av,proj]],add1,"
            "B+[L[ln2,ff1,gelu,ff2]],add2]");
  check::checkAgainstReference(a, "transformer");
}

// Forward-only: backward nodes are not vertices; an op that only the backward
// reads is a sink of the forward graph.
TEST(Models, ForwardPartOfATrainingGraph) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId a0 = g.addOutput(f0, "a0", 4);
  NodeId f1 = g.addNode("f1", "op", 2, Phase::Forward, {a0});
  ValueId a1 = g.addOutput(f1, "a1", 8);
  NodeId loss = g.addNode("loss", "op", 3, Phase::Forward, {a1});
  ValueId l = g.addOutput(loss, "l", 1);
  NodeId bwd = g.addNode("b0", "op", 4, Phase::Backward, {l, a1, a0});
  g.addOutput(bwd, "g", 8);
  StructureAnalysis a(g);
  EXPECT_EQ(a.graph.numOps(), 3u);
  EXPECT_EQ(a.graph.numOpEdges(), 2u);
  EXPECT_EQ(a.graph.nodeId(1), f0);
  EXPECT_EQ(a.graph.bytes(2), 8u);
  EXPECT_EQ(a.splittingVertices(), (std::vector<Vertex>{1, 2, 3}));
  EXPECT_EQ(a.hierarchy.node(0).bytes, 13u);
  EXPECT_DOUBLE_EQ(a.hierarchy.node(0).cost, 6.0);
  llvm::json::Value summary = a.summaryJSON();
  EXPECT_EQ(summary.getAsObject()->getInteger("ops"), 3);
  EXPECT_EQ(summary.getAsObject()->getInteger("splitting_vertices"), 3);
  EXPECT_EQ(summary.getAsObject()->getInteger("articulation_points"), 1);
}

TEST(Models, EmptyAndSingleOp) {
  StructureAnalysis empty(StructureGraph(0, {}));
  EXPECT_EQ(empty.hierarchy.size(), 1u);
  EXPECT_EQ(empty.hierarchy.node(0).numVertices(), 0u);
  EXPECT_TRUE(empty.splittingVertices().empty());
  StructureAnalysis one(StructureGraph(1, {}));
  EXPECT_EQ(one.hierarchy.node(0).kind, HierarchyKind::Linear);
  EXPECT_EQ(one.hierarchy.node(0).children.size(), 1u);
  check::checkAgainstReference(one, "single op");
}

// Ops without forward predecessor or successor hang on the virtual source and
// sink: an op that only reads arguments is a separate branch of the whole.
TEST(Models, DisconnectedOps) {
  StructureAnalysis a(StructureGraph(4, {{0, 1}, {1, 2}}));
  EXPECT_EQ(a.hierarchy.node(0).kind, HierarchyKind::Branched);
  EXPECT_TRUE(a.splittingVertices().empty());
  EXPECT_EQ(a.articulationPoints, (std::vector<Vertex>{2}));
  check::checkAgainstReference(a, "disconnected");
}

TEST(DominatorTree, IdomsAndPostIdoms) {
  // 0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> 4.
  StructureGraph g(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}});
  DominatorTree dom(g, false), post(g, true);
  EXPECT_EQ(dom.idom(4), 1u);
  EXPECT_EQ(dom.idom(3), 1u);
  EXPECT_EQ(dom.idom(2), 1u);
  EXPECT_EQ(dom.idom(1), g.source());
  EXPECT_EQ(dom.idom(g.sink()), 5u);
  EXPECT_TRUE(dom.dominates(1, 5));
  EXPECT_FALSE(dom.dominates(2, 4));
  EXPECT_EQ(dom.lca(2, 3), 1u);
  EXPECT_EQ(post.idom(1), 4u);
  EXPECT_EQ(post.idom(2), 4u);
  EXPECT_EQ(post.idom(4), 5u);
  EXPECT_TRUE(post.dominates(4, 1));
  EXPECT_FALSE(post.dominates(2, 1));
}

} // namespace
