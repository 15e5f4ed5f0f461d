//===- GraphIOTest.cpp - NetworkX node-link import ------------------------===//

#include "remat/Graph/GraphIO.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

using namespace remat;

namespace {

llvm::json::Value parse(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(json));
  return json ? std::move(*json) : llvm::json::Value(nullptr);
}

std::string errorOfImport(const llvm::json::Value &json) {
  llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(json);
  return graph ? std::string() : llvm::toString(graph.takeError());
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

/// The error of importing `text` as a node-link graph ("" if it imports).
std::string importError(llvm::StringRef text) {
  llvm::Expected<TrainingGraph> graph = importNodeLinkGraph(parse(text));
  return graph ? std::string() : llvm::toString(graph.takeError());
}

// Every field the node-link readers read must have its JSON type and range:
// "backward": "yes" used to read as false, a size of 1e30 overflowed.
TEST(GraphIO, NodeLinkFieldsMustHaveTheirTypes) {
  struct Case {
    const char *nodes, *links, *error;
  } cases[] = {
      // Checkmate's dialect.
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": 1, "backward": "yes"}])", "[]",
       R"(nodes[0].backward: expected a boolean, got "yes")"},
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": 1, "backward": 1}])", "[]",
       "nodes[0].backward: expected a boolean, got 1"},
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": 1, "name": 7}])", "[]",
       "nodes[0].name: expected a string, got 7"},
      {R"([{"id": "0", "cost_cpu": 1, "cost_ram": 1}])", "[]",
       R"(nodes[0].id: expected an integer, got "0")"},
      {R"([{"id": 1.5, "cost_cpu": 1, "cost_ram": 1}])", "[]",
       "nodes[0].id: expected an integer, got 1.5"},
      {R"([{"id": 0, "cost_cpu": "1", "cost_ram": 1}])", "[]",
       R"(nodes[0].cost_cpu: expected a finite, non-negative number, got "1")"},
      {R"([{"id": 0, "cost_cpu": -1, "cost_ram": 1}])", "[]",
       "nodes[0].cost_cpu: expected a finite, non-negative number, got -1"},
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": 1e30}])", "[]",
       "nodes[0].cost_ram: expected a non-negative number of bytes below "
       "2^64, got 1e+30"},
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": true}])", "[]",
       "nodes[0].cost_ram: expected a non-negative number of bytes"},
      {R"([{"id": 0, "cost_cpu": 1e308, "cost_ram": 1},
           {"id": 1, "cost_cpu": 1e308, "cost_ram": 1}])",
       "[]", "sum to more than the largest finite double"},
      {R"([{"id": 0, "cost_cpu": 1, "cost_ram": 1},
           {"id": 1, "cost_cpu": 1, "cost_ram": 1}])",
       R"([{"source": "0", "target": 1}])",
       R"(links[0].source: expected an integer, got "0")"},
      // Moccasin's dialect.
      {R"([{"name": 0, "duration": 1, "out_cost": 1, "param_cost": -8}])", "[]",
       "nodes[0].param_cost: expected a non-negative number of bytes below "
       "2^64, got -8"},
      {R"([{"name": 0, "duration": "x", "out_cost": 1}])", "[]",
       R"(nodes[0].duration: expected a finite, non-negative number, got "x")"},
      {R"([{"name": 0, "duration": 1, "out_cost": 1},
           {"name": 1, "duration": 1, "out_cost": 1}])",
       R"([{"0": 0, "1": null}])", "links[0].1: expected an integer, got null"},
  };
  for (const Case &c : cases) {
    std::string text = std::string(R"({"nodes": )") + c.nodes +
                       R"(, "links": )" + c.links + "}";
    std::string err = importError(text);
    EXPECT_NE(err.find(c.error), std::string::npos)
        << "input: " << text << "\nerror: " << err;
    // The text reader, one element at a time, names the same field.
    llvm::Expected<TrainingGraph> read = readGraph(text, "g.json");
    ASSERT_FALSE(static_cast<bool>(read));
    EXPECT_EQ(llvm::toString(read.takeError()), "'g.json': " + err);
  }
}

// The same for the project's own node-link export, field by field: each
// case breaks one field of an exported graph.
TEST(GraphIO, RematNodeLinkFieldsMustHaveTheirTypes) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f = g.addNode("f", "op", 2, Phase::Forward, {x});
  ValueId a = g.addOutput(f, "a", 4);
  NodeId b = g.addNode("b", "op", 3, Phase::Backward, {a});
  g.markOutput(g.addOutput(b, "d", 8));
  llvm::json::Value exported = exportNodeLinkGraph(g);
  {
    llvm::Expected<TrainingGraph> back = importNodeLinkGraph(exported);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->node(1).phase, Phase::Backward);
  }
  // nodes[0], nodes[1]: f and b; nodes[2]: the fixed value x.
  struct Case {
    const char *node, *key;
    llvm::json::Value value;
    const char *error;
  } cases[] = {
      {"1", "backward", "yes",
       R"(nodes[1].backward: expected a boolean, got "yes")"},
      {"2", "fixed", "yes", R"(nodes[2].fixed: expected a boolean, got "yes")"},
      {"2", "cost_ram", -8,
       "nodes[2].cost_ram: expected a non-negative integer number of bytes, "
       "got -8"},
      {"2", "value", "0", R"(nodes[2].value: expected an integer in [0, )"},
      {"0", "cost_cpu", "2",
       R"(nodes[0].cost_cpu: expected a finite, non-negative number, got "2")"},
      {"0", "workspace", 1.5,
       "nodes[0].workspace: expected a non-negative integer number of bytes, "
       "got 1.5"},
      {"0", "op", 3, "nodes[0].op: expected a string, got 3"},
      {"0", "name", nullptr, "nodes[0].name: expected a string, got null"},
  };
  for (const Case &c : cases) {
    llvm::json::Value broken = exported;
    llvm::json::Object &node =
        *(*broken.getAsObject()->getArray("nodes"))[std::stoi(c.node)]
             .getAsObject();
    node[c.key] = c.value;
    std::string err = errorOfImport(broken);
    EXPECT_NE(err.find(c.error), std::string::npos)
        << c.node << "." << c.key << ": " << err;
  }
  // The fields of an output and of a link.
  auto output = [](llvm::json::Value &json) -> llvm::json::Object & {
    return *(*(*json.getAsObject()->getArray("nodes"))[0]
                  .getAsObject()
                  ->getArray("outputs"))[0]
                .getAsObject();
  };
  llvm::json::Value broken = exported;
  output(broken)["output"] = "yes";
  EXPECT_NE(errorOfImport(broken).find(
                R"(nodes[0].outputs[0].output: expected a boolean, got "yes")"),
            std::string::npos);
  broken = exported;
  output(broken)["bytes"] = -4;
  EXPECT_NE(errorOfImport(broken).find(
                "nodes[0].outputs[0].bytes: expected a non-negative integer "
                "number of bytes, got -4"),
            std::string::npos);
  broken = exported;
  (*(*broken.getAsObject()->getArray("links"))[0].getAsObject())["value"] = "0";
  EXPECT_NE(errorOfImport(broken).find(
                R"(links[0].value: expected an integer in [0, )"),
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

namespace {
std::string readError(llvm::StringRef text) {
  llvm::Expected<TrainingGraph> graph = readGraph(text, "g.json");
  return graph ? std::string() : llvm::toString(graph.takeError());
}
} // namespace

// readGraph parses a node-link document one element at a time; the graph
// it reads is the DOM readers' graph.
TEST(GraphIO, ReadGraphReadsWhatTheDOMReadersRead) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f = g.addNode("f", "op", 2, Phase::Forward, {x});
  ValueId a = g.addOutput(f, "a", 4);
  NodeId b = g.addNode("b", "op", 3, Phase::Backward, {a, x});
  g.markOutput(g.addOutput(b, "d", 8));
  std::string exported = llvm::formatv("{0:2}", exportNodeLinkGraph(g)).str();
  std::string native = llvm::formatv("{0}", g.toJSON()).str();
  const char *moccasin =
      R"({"nodes": [{"name": 0, "duration": 0, "out_cost": 10, "param_cost": 0},
                    {"name": 2, "duration": 7, "out_cost": 20, "param_cost": 8},
                    {"name": 1, "duration": 5, "out_cost": 4}],
          "links": [{"0": 0, "1": 2}, {"0": 2, "1": 1}, {"0": 0, "1": 1}]})";
  for (llvm::StringRef text : {llvm::StringRef(kChain), llvm::StringRef(moccasin),
                               llvm::StringRef(exported),
                               llvm::StringRef(native)}) {
    llvm::json::Value json = parse(text);
    llvm::Expected<TrainingGraph> dom = isNodeLinkGraph(json)
                                            ? importNodeLinkGraph(json)
                                            : TrainingGraph::fromJSON(json);
    ASSERT_TRUE(static_cast<bool>(dom)) << llvm::toString(dom.takeError());
    llvm::Expected<TrainingGraph> read = readGraph(text, "g.json");
    ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
    EXPECT_EQ(llvm::json::Value(read->toJSON()),
              llvm::json::Value(dom->toJSON()))
        << text.str();
  }
}

// Invalid JSON: the parser's first error, at the same place in the file, as
// when the whole document was parsed at once.
TEST(GraphIO, ReadGraphReportsTheParsersFirstError) {
  const char *texts[] = {
      "",
      "  ",
      "{",
      R"({"a")",
      R"({"a":)",
      R"({"a": 1,)",
      "{1: 2}",
      R"({"nodes": [], "links": [1 2]})",
      R"({"nodes": [] "links": []})",
      R"({"nodes": [], "links": []} x)",
      R"({"nodes": [{"id": 0}], "links": [)",
      R"({"nodes": [{"id": 0}], "links": ["abc)",
      R"({"nodes": [{"id": 0}], "links": [], "x": [1,]})",
      R"({"nodes": [], "links": [{"source": 0, "target": 0,}]})",
      R"({"nodes": [], "links": [], "x": "\q"})",
      "{\"nodes\": [\"\xff\"], \"links\": []}",
      // A graph error (nodes[0].id) before a syntax error: the syntax error.
      R"({"nodes": [{"id": "x"}],
          "links": [{"source": 0, "target": 1}
                    {"source": 1, "target": 2}]})",
  };
  for (const char *text : texts) {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
    ASSERT_FALSE(static_cast<bool>(json)) << text;
    EXPECT_EQ(readError(text),
              "'g.json' is not valid JSON: " + llvm::toString(json.takeError()))
        << text;
  }
}

// llvm::json::parse recurses per level; a nesting deeper than the limit is
// an error found before it runs (a million `[` overflowed the stack).
TEST(GraphIO, JSONNestingLimit) {
  std::string deep(1000000, '[');
  EXPECT_EQ(readError(deep), "'g.json': JSON nested deeper than 64 levels at "
                             "byte 64 (a graph file needs 5)");
  EXPECT_FALSE(static_cast<bool>(checkJSONNesting(std::string(64, '['))));
  llvm::Error err = checkJSONNesting(std::string(65, '['));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "JSON nested deeper than 64 levels at byte 64 (a graph file "
            "needs 5)");
  // Closed levels do not add up; brackets in strings, escaped quotes
  // included, do not count.
  std::string wide;
  for (int i = 0; i < 1000; ++i)
    wide += "[[[]]],";
  EXPECT_FALSE(static_cast<bool>(checkJSONNesting("[" + wide + "1]")));
  std::string quoted = "[\"\\\"" + std::string(100, '[') + "\"]";
  EXPECT_FALSE(static_cast<bool>(checkJSONNesting(quoted)));
  EXPECT_FALSE(static_cast<bool>(checkJSONNesting(quoted, 1)));
  EXPECT_TRUE(static_cast<bool>(llvm::json::parse(quoted)));
  err = checkJSONNesting("[[1]]", 1);
  EXPECT_EQ(llvm::toString(std::move(err)),
            "JSON nested deeper than 1 levels at byte 1 (a graph file needs "
            "5)");
}
