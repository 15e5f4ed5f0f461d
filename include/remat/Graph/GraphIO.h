//===- GraphIO.h - Reading training graphs from files -----------*- C++ -*-===//
//
// Two formats: the project's own (TrainingGraph::toJSON, docs/formats.md) and
// the NetworkX node-link JSON of the Checkmate evaluation graphs
// (../shared/graphs/checkmate-mlsys20/: nodes {id, name, backward, cost_cpu,
// cost_ram}, links {source, target}; and Moccasin's random DAGs there).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_GRAPH_GRAPHIO_H
#define REMAT_GRAPH_GRAPHIO_H

#include "remat/Graph/TrainingGraph.h"

namespace remat {

/// Imports a NetworkX node-link training graph. Every node becomes a node
/// with one output value of `cost_ram` bytes and cost `cost_cpu`; a link
/// s -> t makes t read s's output; `backward` gives the phase. Nodes are
/// ordered topologically, smallest id first (Checkmate's ids already are a
/// topological order, which is kept). As in Checkmate's model there are no
/// fixed values (parameters and inputs are outside the budget) and no step
/// outputs: every value may be freed after its last use. Moccasin's
/// generated DAGs (the random_layered files: `name` is the id, `duration`,
/// `out_cost`, `param_cost`; links {"0": s, "1": t}) are read the same way,
/// forward only, parameters as fixed values.
llvm::Expected<TrainingGraph> importNodeLinkGraph(const llvm::json::Value &json);

/// Writes `graph` as a NetworkX node-link document that importNodeLinkGraph
/// reads back into the same graph (same node and value ids, sizes, costs,
/// phases, fixed values, step outputs and workspaces), and that a NetworkX
/// reader sees as the DAG of the computation: one node per graph node (with
/// Checkmate's `cost_cpu`, `cost_ram` = its output bytes, `backward`) and
/// one per fixed value (`fixed`: true), a link per read (`value`: the value
/// id read). docs/formats.md describes the fields.
llvm::json::Value exportNodeLinkGraph(const TrainingGraph &graph);

/// True if `json` looks like a NetworkX node-link document ("nodes" and
/// "links" arrays).
bool isNodeLinkGraph(const llvm::json::Value &json);

/// The deepest nesting of arrays and objects a graph document may have.
/// Graph files need 5 (root, nodes, node, outputs, output); the limit keeps
/// llvm::json::parse, which recurses once per level, far from the end of
/// the stack.
constexpr unsigned kMaxGraphJSONNesting = 64;

/// An error ("JSON nested deeper than 64 levels at byte N") if `text` nests
/// arrays and objects deeper than `limit`, counting brackets outside
/// strings. A byte scan that allocates nothing: run it before
/// llvm::json::parse on untrusted text.
llvm::Error checkJSONNesting(llvm::StringRef text,
                             unsigned limit = kMaxGraphJSONNesting);

/// Reads a graph document in either format (detected from its content) from
/// `text`; `name` (the file) prefixes the errors: "'name' is not valid JSON:
/// [line:column, byte=N]: ..." as llvm::json::parse words it, or "'name':
/// ..." for a graph error. The nesting is checked first
/// (checkJSONNesting). A node-link document is read one node and one link at
/// a time and never exists as a DOM, so that its peak memory is a small
/// multiple of the file (the DOM took ~180x); the native format is read
/// through a DOM (TrainingGraph::fromJSON).
llvm::Expected<TrainingGraph> readGraph(llvm::StringRef text,
                                        llvm::StringRef name);

/// Reads a graph file (or stdin for "-") with readGraph.
llvm::Expected<TrainingGraph> loadGraphFile(llvm::StringRef path);

} // namespace remat

#endif // REMAT_GRAPH_GRAPHIO_H
