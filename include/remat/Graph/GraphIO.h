//===- GraphIO.h - Reading training graphs from files -----------*- C++ -*-===//
//
// Two formats: the project's own (TrainingGraph::toJSON, docs/formats.md) and
// the NetworkX node-link JSON of the Checkmate evaluation graphs
// (../shared/graphs/checkmate-mlsys20/: nodes {id, name, backward, cost_cpu,
// cost_ram}, links {source, target}).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_GRAPH_GRAPHIO_H
#define REMAT_GRAPH_GRAPHIO_H

#include "remat/Graph/TrainingGraph.h"

namespace remat {

/// Imports a NetworkX node-link training graph. Every node becomes a node
/// with one output value of `cost_ram` bytes and cost `cost_cpu`; a link
/// s -> t makes t read s's output; `backward` gives the phase. Node ids must
/// be a topological order (they are in those files). As in Checkmate's model
/// there are no fixed values (parameters and inputs are outside the budget)
/// and no step outputs: every value may be freed after its last use.
llvm::Expected<TrainingGraph> importNodeLinkGraph(const llvm::json::Value &json);

/// True if `json` looks like a NetworkX node-link document ("nodes" and
/// "links" arrays).
bool isNodeLinkGraph(const llvm::json::Value &json);

/// Reads a graph file in either format (detected from its content).
llvm::Expected<TrainingGraph> loadGraphFile(llvm::StringRef path);

} // namespace remat

#endif // REMAT_GRAPH_GRAPHIO_H
