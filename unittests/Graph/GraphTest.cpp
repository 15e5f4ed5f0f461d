//===- GraphTest.cpp - TrainingGraph construction, checks and JSON --------===//

#include "remat/Graph/TrainingGraph.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <string>

using namespace remat;

namespace {

/// x -> f0 -> a0 -> f1 -> a1 -> loss (output); backward mirror: dloss reads
/// a1, b1 reads (d1, a0), b0 reads (d0, x) and produces the output gradient.
TrainingGraph makeSmallMLP() {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f0 = g.addNode("f0", "linalg.matmul", 10, Phase::Forward, {x});
  ValueId a0 = g.addOutput(f0, "a0", 4);
  NodeId f1 = g.addNode("f1", "linalg.generic", 2, Phase::Forward, {a0});
  ValueId a1 = g.addOutput(f1, "a1", 4);
  NodeId loss = g.addNode("loss", "linalg.reduce", 1, Phase::Forward, {a1});
  g.markOutput(g.addOutput(loss, "loss", 1));
  NodeId dl = g.addNode("dloss", "linalg.generic", 1, Phase::Backward, {a1});
  ValueId d1 = g.addOutput(dl, "d1", 4);
  NodeId b1 = g.addNode("b1", "linalg.generic", 2, Phase::Backward, {d1, a0});
  ValueId d0 = g.addOutput(b1, "d0", 4);
  NodeId b0 = g.addNode("b0", "linalg.matmul", 10, Phase::Backward, {d0, x});
  g.markOutput(g.addOutput(b0, "dx", 8));
  g.node(b0).workspaceBytes = 16;
  return g;
}

std::string errorOf(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : std::string();
}

template <typename T> std::string errorOf(llvm::Expected<T> expected) {
  return expected ? std::string() : llvm::toString(expected.takeError());
}

/// Parses `text` and runs TrainingGraph::fromJSON, returning its error text.
std::string parseError(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return "parse: " + llvm::toString(json.takeError());
  return errorOf(TrainingGraph::fromJSON(*json));
}

TEST(TrainingGraph, AddNodeDedupesInputsAndRecordsSortedUsers) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 3);
  ValueId y = g.addFixedValue("y", 5);
  NodeId sq = g.addNode("sq", "arith.mulf", 1, Phase::Forward, {x, x, y, x});
  EXPECT_EQ(g.node(sq).inputs, (std::vector<ValueId>{x, y}));
  NodeId other = g.addNode("other", "op", 1, Phase::Forward, {y});
  EXPECT_EQ(g.value(x).users, (std::vector<NodeId>{sq}));
  EXPECT_EQ(g.value(y).users, (std::vector<NodeId>{sq, other}));
  ValueId out = g.addOutput(other, "o", 7);
  EXPECT_EQ(g.value(out).producer, other);
  EXPECT_FALSE(g.value(out).isFixed());
  EXPECT_TRUE(g.value(x).isFixed());
  EXPECT_EQ(g.node(other).outputs, (std::vector<ValueId>{out}));
  EXPECT_EQ(errorOf(g.verify()), "");
}

TEST(TrainingGraph, Queries) {
  TrainingGraph g = makeSmallMLP();
  EXPECT_EQ(g.numNodes(), 6u);
  EXPECT_EQ(g.numValues(), 7u);
  EXPECT_EQ(g.fixedBytes(), 8u);
  EXPECT_EQ(g.forwardNodes(), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(g.backwardNodes(), (std::vector<NodeId>{3, 4, 5}));
  EXPECT_DOUBLE_EQ(g.totalCost(), 26);
  // a0 (read by b1) and a1 (read by dloss); x is fixed and the loss is read
  // by no backward node.
  EXPECT_EQ(g.savedActivations(), (std::vector<ValueId>{1, 2}));
  EXPECT_EQ(phaseName(Phase::Forward), "forward");
  EXPECT_EQ(phaseName(Phase::Backward), "backward");
  EXPECT_EQ(errorOf(g.verify()), "");
}

TEST(TrainingGraph, VerifyRejectsForwardReadingBackward) {
  TrainingGraph g = makeSmallMLP();
  g.addNode("late", "op", 1, Phase::Forward, {5}); // reads d0 (backward)
  std::string err = errorOf(g.verify());
  EXPECT_NE(err.find("forward node 6 'late' reads value 5 'd0' produced by "
                     "backward node 4 'b1'"),
            std::string::npos)
      << err;
}

TEST(TrainingGraph, VerifyRejectsNonTopologicalOrder) {
  TrainingGraph g = makeSmallMLP();
  // f0 made to read a1, produced by the later f1.
  g.node(0).inputs.push_back(2);
  g.value(2).users.insert(g.value(2).users.begin(), 0);
  std::string err = errorOf(g.verify());
  EXPECT_NE(err.find("topological"), std::string::npos) << err;
}

TEST(TrainingGraph, VerifyRejectsInconsistentUsers) {
  TrainingGraph g = makeSmallMLP();
  g.value(0).users = {0, 3, 5}; // dloss does not read x
  std::string err = errorOf(g.verify());
  EXPECT_NE(err.find("does not read it"), std::string::npos) << err;

  TrainingGraph h = makeSmallMLP();
  h.value(1).users.clear(); // f1 and b1 read a0
  err = errorOf(h.verify());
  EXPECT_NE(err.find("missing from its users"), std::string::npos) << err;

  TrainingGraph u = makeSmallMLP();
  u.value(0).users = {5, 0}; // unsorted
  err = errorOf(u.verify());
  EXPECT_NE(err.find("not sorted"), std::string::npos) << err;
}

TEST(TrainingGraph, VerifyRejectsBadIdsAndOutputs) {
  TrainingGraph g = makeSmallMLP();
  g.node(1).inputs.push_back(99);
  EXPECT_NE(errorOf(g.verify()).find("input id 99 out of range"),
            std::string::npos);

  TrainingGraph h = makeSmallMLP();
  h.node(1).outputs.push_back(1); // a0 belongs to f0
  EXPECT_NE(errorOf(h.verify()).find("lists value 1 'a0' as output"),
            std::string::npos);

  TrainingGraph p = makeSmallMLP();
  p.value(2).producer = 7;
  EXPECT_NE(errorOf(p.verify()).find("producer 7 out of range"),
            std::string::npos);

  TrainingGraph q = makeSmallMLP();
  q.node(1).outputs.clear(); // a1 no longer listed by f1
  EXPECT_NE(errorOf(q.verify()).find("not listed once among the outputs"),
            std::string::npos);

  TrainingGraph c = makeSmallMLP();
  c.node(2).cost = -1;
  EXPECT_NE(errorOf(c.verify()).find("invalid cost"), std::string::npos);
}

TEST(TrainingGraph, JSONRoundTrip) {
  TrainingGraph g = makeSmallMLP();
  llvm::json::Value json = g.toJSON();
  // Through text, as the tools do.
  std::string text = llvm::formatv("{0:2}", json).str();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  llvm::Expected<TrainingGraph> back = TrainingGraph::fromJSON(*parsed);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->toJSON(), json);
  ASSERT_EQ(back->numNodes(), g.numNodes());
  ASSERT_EQ(back->numValues(), g.numValues());
  for (size_t n = 0; n < g.numNodes(); ++n) {
    EXPECT_EQ(back->node(n).name, g.node(n).name);
    EXPECT_EQ(back->node(n).opName, g.node(n).opName);
    EXPECT_EQ(back->node(n).cost, g.node(n).cost);
    EXPECT_EQ(back->node(n).phase, g.node(n).phase);
    EXPECT_EQ(back->node(n).inputs, g.node(n).inputs);
    EXPECT_EQ(back->node(n).outputs, g.node(n).outputs);
    EXPECT_EQ(back->node(n).workspaceBytes, g.node(n).workspaceBytes);
  }
  for (size_t v = 0; v < g.numValues(); ++v) {
    EXPECT_EQ(back->value(v).name, g.value(v).name);
    EXPECT_EQ(back->value(v).bytes, g.value(v).bytes);
    EXPECT_EQ(back->value(v).producer, g.value(v).producer);
    EXPECT_EQ(back->value(v).isOutput, g.value(v).isOutput);
    EXPECT_EQ(back->value(v).users, g.value(v).users);
  }
}

TEST(TrainingGraph, JSONFormatFields) {
  llvm::json::Value json = makeSmallMLP().toJSON();
  const llvm::json::Object *root = json.getAsObject();
  ASSERT_TRUE(root);
  const llvm::json::Object *node = (*root->getArray("nodes"))[5].getAsObject();
  ASSERT_TRUE(node);
  EXPECT_EQ(node->getString("name"), "b0");
  EXPECT_EQ(node->getString("op"), "linalg.matmul");
  EXPECT_EQ(node->getString("phase"), "backward");
  EXPECT_EQ(node->getNumber("cost"), 10.0);
  EXPECT_EQ(node->getInteger("workspace"), 16);
  EXPECT_EQ(*node->get("inputs"), llvm::json::Value(llvm::json::Array{5, 0}));
  EXPECT_EQ(*node->get("outputs"), llvm::json::Value(llvm::json::Array{6}));
  const llvm::json::Object *value =
      (*root->getArray("values"))[6].getAsObject();
  ASSERT_TRUE(value);
  EXPECT_EQ(value->getString("name"), "dx");
  EXPECT_EQ(value->getInteger("bytes"), 8);
  EXPECT_EQ(value->getInteger("producer"), 5);
  EXPECT_EQ(value->getBoolean("output"), true);
}

TEST(TrainingGraph, JSONKeepsInterleavedValueIds) {
  // Value 0 is produced by node 1, value 1 by node 0, value 2 is fixed: ids
  // that no sequence of addFixedValue/addOutput calls in node order yields.
  const char *text = R"({
    "nodes": [
      {"name": "n0", "op": "a", "cost": 1, "phase": "forward",
       "inputs": [2], "outputs": [1]},
      {"name": "n1", "op": "b", "cost": 2, "phase": "backward",
       "inputs": [1, 2], "outputs": [0], "workspace": 3}
    ],
    "values": [
      {"name": "v0", "bytes": 10, "producer": 1, "output": true},
      {"name": "v1", "bytes": 20, "producer": 0},
      {"name": "arg", "bytes": 30, "producer": -1}
    ]})";
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  ASSERT_TRUE(bool(json));
  llvm::Expected<TrainingGraph> g = TrainingGraph::fromJSON(*json);
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->value(0).producer, 1);
  EXPECT_TRUE(g->value(0).isOutput);
  EXPECT_EQ(g->value(1).producer, 0);
  EXPECT_FALSE(g->value(1).isOutput);
  EXPECT_TRUE(g->value(2).isFixed());
  EXPECT_EQ(g->value(2).users, (std::vector<NodeId>{0, 1}));
  EXPECT_EQ(g->value(1).users, (std::vector<NodeId>{1}));
  EXPECT_EQ(g->node(1).workspaceBytes, 3u);
  EXPECT_EQ(g->node(1).phase, Phase::Backward);
  EXPECT_EQ(g->fixedBytes(), 30u);
  EXPECT_EQ(errorOf(g->verify()), "");
}

TEST(TrainingGraph, JSONLargeByteCounts) {
  // Byte counts round-trip exactly up to 2^63-1, the most all values of a
  // graph may add up to (so that no peak wraps); one more byte is an error.
  TrainingGraph g;
  g.addFixedValue("huge", uint64_t(INT64_MAX) - 8);
  g.addFixedValue("small", 8);
  llvm::Expected<TrainingGraph> back = TrainingGraph::fromJSON(g.toJSON());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->value(0).bytes, uint64_t(INT64_MAX) - 8);
  g.addFixedValue("one more", 1);
  llvm::Expected<TrainingGraph> over = TrainingGraph::fromJSON(g.toJSON());
  ASSERT_FALSE(bool(over));
  EXPECT_NE(llvm::toString(over.takeError())
                .find("the values up to value 2 'one more' add up to more "
                      "than 2^63-1 bytes"),
            std::string::npos);
  TrainingGraph h;
  h.addFixedValue("max", UINT64_MAX);
  llvm::Expected<TrainingGraph> wrapped = TrainingGraph::fromJSON(h.toJSON());
  ASSERT_FALSE(bool(wrapped));
  llvm::consumeError(wrapped.takeError());
}

TEST(TrainingGraph, JSONErrors) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"[]", "expected a JSON object"},
      {"{\"nodes\": []}", "expected arrays 'nodes' and 'values'"},
      {"{\"nodes\": {}, \"values\": []}", "expected arrays"},
      {"{\"nodes\": [], \"values\": [3]}", "values[0]: expected an object"},
      {"{\"nodes\": [], \"values\": [{\"name\": \"v\"}]}",
       "values[0].bytes: expected a non-negative integer"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": -4}]}",
       "values[0].bytes: expected a non-negative integer"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": 1.5}]}",
       "values[0].bytes: expected a non-negative integer"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": \"8\"}]}",
       "values[0].bytes: expected a non-negative integer"},
      {"{\"nodes\": [], \"values\": [{\"name\": 3, \"bytes\": 1}]}",
       "values[0].name: expected a string"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": 1, \"producer\": 0}]}",
       "values[0].producer: id 0 out of range [-1, 0)"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": 1, \"producer\": -2}]}",
       "out of range"},
      {"{\"nodes\": [], \"values\": [{\"bytes\": 1, \"output\": 1}]}",
       "values[0].output: expected a boolean"},
      {"{\"nodes\": [7], \"values\": []}", "nodes[0]: expected an object"},
      {"{\"nodes\": [{\"phase\": \"sideways\"}], \"values\": []}",
       "nodes[0].phase: expected \"forward\" or \"backward\""},
      {"{\"nodes\": [{\"cost\": -1}], \"values\": []}",
       "nodes[0].cost: expected a non-negative number"},
      {"{\"nodes\": [{\"cost\": \"x\"}], \"values\": []}",
       "nodes[0].cost: expected a non-negative number"},
      {"{\"nodes\": [{\"inputs\": [0]}], \"values\": []}",
       "nodes[0].inputs[0]: id 0 out of range [0, 0)"},
      {"{\"nodes\": [{\"inputs\": 0}], \"values\": []}",
       "nodes[0].inputs: expected an array of ids"},
      {"{\"nodes\": [{\"inputs\": [\"a\"]}], \"values\": [{\"bytes\": 1}]}",
       "nodes[0].inputs[0]: expected an integer id"},
      {"{\"nodes\": [{\"workspace\": -1}], \"values\": []}",
       "nodes[0].workspace: expected a non-negative integer"},
      {"{\"nodes\": [{\"phase\": true}], \"values\": []}",
       "nodes[0].phase: expected a string"},
      {"{\"nodes\": [{\"name\": false}], \"values\": []}",
       "nodes[0].name: expected a string"},
      // Each cost is finite, their sum is not (verify()).
      {"{\"nodes\": [{\"cost\": 1e308}, {\"cost\": 1e308}], \"values\": []}",
       "the node costs up to node 1 '' sum to more than the largest finite "
       "double"},
      // Semantic errors found by verify() after the fields parse.
      {"{\"nodes\": [{\"inputs\": [0, 0]}], \"values\": [{\"bytes\": 1}]}",
       "reads value 0 '' twice"},
      {"{\"nodes\": [{\"outputs\": [0]}], \"values\": [{\"bytes\": 1}]}",
       "as output but its producer is -1"},
      {"{\"nodes\": [{}], \"values\": [{\"bytes\": 1, \"producer\": 0}]}",
       "is not listed once among the outputs"},
      {"{\"nodes\": [{\"inputs\": [0], \"outputs\": [0]}],"
       " \"values\": [{\"bytes\": 1, \"producer\": 0}]}",
       "topological"},
      {"{\"nodes\": [{\"phase\": \"backward\", \"outputs\": [0]},"
       " {\"inputs\": [0]}], \"values\": [{\"bytes\": 1, \"producer\": 0}]}",
       "produced by backward"},
  };
  for (const Case &c : cases) {
    std::string err = parseError(c.text);
    EXPECT_NE(err.find(c.error), std::string::npos)
        << "input: " << c.text << "\nerror: " << err;
  }
}

} // namespace
