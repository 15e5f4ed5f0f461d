//===- TrainingGraph.h - Pure C++ training graph ----------------*- C++ -*-===//
//
// The training graph of one step: nodes (groups of ops that the program
// computes together), values (the buffers those nodes allocate), byte sizes,
// costs and the forward/backward split of DESIGN.md §4. It contains nothing of
// MLIR so that the solvers, the simulator and the tools can use it anywhere.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_GRAPH_TRAININGGRAPH_H
#define REMAT_GRAPH_TRAININGGRAPH_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

using NodeId = int;
using ValueId = int;

/// Which part of the training step a node belongs to (DESIGN.md §4).
enum class Phase { Forward, Backward };

llvm::StringRef phaseName(Phase phase);

/// A buffer. Values produced by no node (producer == -1) are *fixed*: function
/// arguments (parameters, inputs), resident for the whole step and counted
/// apart from the peak. Values marked `isOutput` are returned by the step and
/// are never freed.
struct GraphValue {
  std::string name;
  uint64_t bytes = 0;
  NodeId producer = -1;
  bool isOutput = false;
  /// Nodes that read this value, in increasing node order, no duplicates.
  std::vector<NodeId> users;

  bool isFixed() const { return producer < 0; }
};

/// A unit of computation: one op of the program plus the ops that bufferize
/// into the same storage (destination initialisation, views of its results).
struct Node {
  std::string name;
  /// Name of the op that defines the node (e.g. "linalg.matmul").
  std::string opName;
  /// Cost of computing the node once (FLOPs by default, or `remat.cost`).
  double cost = 0;
  Phase phase = Phase::Forward;
  /// Values read by the node (no duplicates).
  std::vector<ValueId> inputs;
  /// Values the node produces (allocates).
  std::vector<ValueId> outputs;
  /// Transient memory needed while the node runs, freed when it finishes.
  uint64_t workspaceBytes = 0;
  /// In-place updates: (input, output) pairs where the output may take over
  /// the input's buffer, as a destination-passing op writes into its init
  /// (an accumulation into the previous partial sum). The simulator reuses
  /// the buffer when nothing reads that instance of the input afterwards,
  /// which is when bufferization writes in place; otherwise the output is a
  /// buffer of its own. Same bytes on both sides; the input is not fixed.
  std::vector<std::pair<ValueId, ValueId>> reuses;
};

/// The training graph. Node ids are a topological order (the program order).
class TrainingGraph {
public:
  /// Adds a fixed value (function argument).
  ValueId addFixedValue(std::string name, uint64_t bytes);
  /// Adds a node with its inputs; its outputs are added with addOutput.
  NodeId addNode(std::string name, std::string opName, double cost,
                 Phase phase, std::vector<ValueId> inputs);
  /// Adds an output value of `node`.
  ValueId addOutput(NodeId node, std::string name, uint64_t bytes);
  /// Marks a value as returned by the step (never freed).
  void markOutput(ValueId value) { values[value].isOutput = true; }

  size_t numNodes() const { return nodes.size(); }
  size_t numValues() const { return values.size(); }
  const Node &node(NodeId id) const { return nodes[id]; }
  Node &node(NodeId id) { return nodes[id]; }
  const GraphValue &value(ValueId id) const { return values[id]; }
  GraphValue &value(ValueId id) { return values[id]; }
  const std::vector<Node> &getNodes() const { return nodes; }
  const std::vector<GraphValue> &getValues() const { return values; }

  /// Sum of the bytes of the fixed values.
  uint64_t fixedBytes() const;
  /// Forward values read by at least one backward node: the candidates for
  /// checkpointing or recomputation.
  std::vector<ValueId> savedActivations() const;
  /// Forward node ids in order / backward node ids in order.
  std::vector<NodeId> forwardNodes() const;
  std::vector<NodeId> backwardNodes() const;
  /// Total cost of computing every node once.
  double totalCost() const;

  /// Checks internal consistency: ids in range, inputs produced by earlier
  /// nodes (topological order), users lists consistent, no backward node
  /// feeding a forward node.
  llvm::Error verify() const;

  /// Serialisation to the project's JSON format (docs/formats.md).
  llvm::json::Value toJSON() const;
  static llvm::Expected<TrainingGraph> fromJSON(const llvm::json::Value &json);

  /// A graph from its nodes and values as a file gives them, with explicit
  /// ids (users lists are derived here): every id is range-checked, then the
  /// graph verified. The readers build graphs with it without an
  /// intermediate JSON document.
  static llvm::Expected<TrainingGraph> fromParts(std::vector<Node> nodes,
                                                 std::vector<GraphValue> values);

private:
  std::vector<Node> nodes;
  std::vector<GraphValue> values;
};

/// A node's reuse pairs as JSON ([[input, output], ...]) and back, shared by
/// the native and the node-link formats; the reader range-checks the ids and
/// TrainingGraph::verify the rest.
llvm::json::Value reusesToJSON(const Node &node);
llvm::Error reusesFromJSON(const llvm::json::Value &json, int numValues,
                           const std::string &where, Node &node);

} // namespace remat

#endif // REMAT_GRAPH_TRAININGGRAPH_H
