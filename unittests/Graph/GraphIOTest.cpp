//===- GraphIOTest.cpp - NetworkX node-link import ------------------------===//

#include "remat/Graph/GraphIO.h"

#include "gtest/gtest.h"

using namespace remat;

namespace {

llvm::json::Value parse(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(json));
  return json ? std::move(*json) : llvm::json::Value(nullptr);
}

// A three-layer chain with its mirrored backward, in the Checkmate files'
// format (ids deliberately listed out of order).
const char *kChain = R"({
  "directed": true, "multigraph": false, "graph": {"name": "chain"},
  "nodes": [
    {"id": 1, "name": "f1", "backward": false, "cost_cpu": 2, "cost_ram": 20},
    {"id": 0, "name": "f0", "backward": false, "cost_cpu": 1, "cost_ram": 10},
    {"id": 2, "name": "loss", "backward": false, "cost_cpu": 1, "cost_ram": 4},
    {"id": 3, "name": "b1", "backward": true, "cost_cpu": 4, "cost_ram": 20},
    {"id": 4, "name": "b0", "backward": true, "cost_cpu": 2, "cost_ram": 10}
  ],
  "links": [
    {"source": 0, "target": 1}, {"source": 1, "target": 2},
    {"source": 2, "target": 3}, {"source": 1, "target": 3},
    {"source": 0, "target": 4}, {"source": 3, "target": 4}
  ]
})";

TEST(GraphIO, ImportsNodeLinkChain) {
  llvm::json::Value json = parse(kChain);
  ASSERT_TRUE(isNodeLinkGraph(json));
  llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(json);
  ASSERT_TRUE(static_cast<bool>(graph)) << llvm::toString(graph.takeError());
  ASSERT_EQ(graph->numNodes(), 5u);
  ASSERT_EQ(graph->numValues(), 5u);
  EXPECT_EQ(graph->node(0).name, "f0");
  EXPECT_EQ(graph->node(1).cost, 2);
  EXPECT_EQ(graph->value(1).bytes, 20u);
  EXPECT_EQ(graph->node(3).phase, Phase::Backward);
  EXPECT_EQ(graph->node(3).inputs, (std::vector<ValueId>{1, 2}));
  EXPECT_EQ(graph->node(4).inputs, (std::vector<ValueId>{0, 3}));
  EXPECT_EQ(graph->fixedBytes(), 0u);
  EXPECT_EQ(graph->savedActivations(), (std::vector<ValueId>{0, 1, 2}));
}

TEST(GraphIO, RejectsBadNodeLinkInput) {
  auto error = [](llvm::StringRef text) {
    llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(parse(text));
    EXPECT_FALSE(static_cast<bool>(graph));
    return graph ? std::string() : llvm::toString(graph.takeError());
  };
  EXPECT_NE(error(R"({"nodes": [{"id": 0}], "links": []})")
                .find("needs integer 'id' and numbers"),
            std::string::npos);
  EXPECT_NE(error(R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1},
                                {"id": 1, "cost_cpu": 1, "cost_ram": 1}],
                      "links": [{"source": 1, "target": 0},
                                {"source": 0, "target": 1}]})")
                .find("the links form a cycle"),
            std::string::npos);
  EXPECT_NE(error(R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}],
                      "links": [{"source": 0, "target": 7}]})")
                .find("unknown node id"),
            std::string::npos);
  EXPECT_NE(error(R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": -1}],
                      "links": []})")
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(error(R"({"nodes": [{"id": 3, "cost_cpu": 1, "cost_ram": 1},
                                {"id": 3, "cost_cpu": 1, "cost_ram": 1}],
                      "links": []})")
                .find("duplicate node id 3"),
            std::string::npos);
}

TEST(GraphIO, LoadGraphFileReportsMissingFile) {
  llvm::Expected<TrainingGraph> graph = loadGraphFile("/nonexistent/g.json");
  ASSERT_FALSE(static_cast<bool>(graph));
  EXPECT_NE(llvm::toString(graph.takeError()).find("cannot read"),
            std::string::npos);
}

} // namespace

TEST(GraphIO, OrdersNodesTopologicallyWhenIdsAreNot) {
  llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(parse(
      R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1},
                    {"id": 1, "cost_cpu": 2, "cost_ram": 2},
                    {"id": 2, "cost_cpu": 3, "cost_ram": 3}],
          "links": [{"source": 0, "target": 2}, {"source": 2, "target": 1}]})"));
  ASSERT_TRUE(static_cast<bool>(graph)) << llvm::toString(graph.takeError());
  // Node 1 reads node 2: the order is 0, 2, 1.
  EXPECT_EQ(graph->node(1).cost, 3);
  EXPECT_EQ(graph->node(2).cost, 2);
  EXPECT_EQ(graph->node(2).inputs, (std::vector<ValueId>{1}));
}

TEST(GraphIO, ImportsMoccasinGraphs) {
  // The random layered DAGs of ../shared/graphs/checkmate-mlsys20: name is
  // the id, duration / out_cost / param_cost, links {"0": s, "1": t}, ids
  // not in topological order, forward only.
  llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(parse(
      R"({"directed": true, "graph": {"source_node": 0, "target_node": 1},
          "nodes": [{"name": 0, "duration": 0, "out_cost": 10, "param_cost": 0},
                    {"name": 1, "duration": 5, "out_cost": 4, "param_cost": 0},
                    {"name": 2, "duration": 7, "out_cost": 20, "param_cost": 8}],
          "links": [{"0": 0, "1": 2}, {"0": 2, "1": 1}, {"0": 0, "1": 1}]})"));
  ASSERT_TRUE(static_cast<bool>(graph)) << llvm::toString(graph.takeError());
  ASSERT_EQ(graph->numNodes(), 3u);
  EXPECT_EQ(graph->node(0).name, "node0");
  EXPECT_EQ(graph->node(1).name, "node2");
  EXPECT_EQ(graph->node(2).name, "node1");
  EXPECT_EQ(graph->node(1).cost, 7);
  EXPECT_EQ(graph->value(1).bytes, 20u);
  EXPECT_EQ(graph->node(2).inputs, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(graph->node(1).phase, Phase::Forward);
  // node2's parameters are fixed memory it reads.
  EXPECT_EQ(graph->fixedBytes(), 8u);
  EXPECT_FALSE(static_cast<bool>(graph->verify()));
}
