//===- GraphIO.cpp - Reading training graphs from files -------------------===//

#include "remat/Graph/GraphIO.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace remat;

// -debug-only=remat-graph-io: which format a file was read as (native,
// the project's node-link export, Checkmate's or Moccasin's node-link
// dialect), how the node order was fixed, and the graph that came out.
#define DEBUG_TYPE "remat-graph-io"

/// One line on a graph just read.
static void debugGraph([[maybe_unused]] llvm::StringRef name,
                       [[maybe_unused]] llvm::StringRef format,
                       [[maybe_unused]] const TrainingGraph &graph) {
  LLVM_DEBUG({
    size_t outputs = 0, fixed = 0;
    for (const GraphValue &value : graph.getValues()) {
      outputs += value.isOutput;
      fixed += value.isFixed();
    }
    llvm::dbgs() << "graph io: '" << name << "' read as " << format << ": "
                 << graph.numNodes() << " nodes ("
                 << graph.forwardNodes().size() << " forward), "
                 << graph.numValues() << " values (" << fixed << " fixed, "
                 << graph.fixedBytes() << " bytes; " << outputs
                 << " step outputs)\n";
  });
}

static llvm::Error nodeLinkError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "node-link graph: " + message);
}

namespace {
/// Typed access to the fields of one node or link object. A field that is
/// absent is left to the caller (most are optional); a field that is present
/// must have its type and range, else the error names the field with the
/// object's index and quotes the value ("nodes[3].backward: expected a
/// boolean, got \"yes\""): a string read as `false`, or a size of -1 read as
/// 2^64-1, would be a different graph, silently.
struct Fields {
  const llvm::json::Object &object;
  std::string where;

  llvm::Error error(llvm::StringRef key, llvm::StringRef expected,
                    const llvm::json::Value &got) const {
    return nodeLinkError(where + "." + key + ": expected " + expected +
                         ", got " + llvm::formatv("{0}", got).str());
  }

  llvm::Error readBool(llvm::StringRef key, bool &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    std::optional<bool> b = field->getAsBoolean();
    if (!b)
      return error(key, "a boolean", *field);
    out = *b;
    return llvm::Error::success();
  }

  llvm::Error readString(llvm::StringRef key,
                         std::optional<std::string> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    std::optional<llvm::StringRef> str = field->getAsString();
    if (!str)
      return error(key, "a string", *field);
    out = str->str();
    return llvm::Error::success();
  }

  /// An integer in [0, limit), such as a value id.
  llvm::Error readIndex(llvm::StringRef key, int64_t limit,
                        std::optional<int64_t> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    std::optional<int64_t> i = field->getAsInteger();
    if (!i || *i < 0 || *i >= limit)
      return error(key, "an integer in [0, " + std::to_string(limit) + ")",
                   *field);
    out = *i;
    return llvm::Error::success();
  }

  /// Any integer (a node id of a NetworkX file).
  llvm::Error readInteger(llvm::StringRef key,
                          std::optional<int64_t> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    std::optional<int64_t> i = field->getAsInteger();
    if (!i)
      return error(key, "an integer", *field);
    out = *i;
    return llvm::Error::success();
  }

  /// A cost: a finite, non-negative number.
  llvm::Error readCost(llvm::StringRef key, std::optional<double> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    std::optional<double> d = field->getAsNumber();
    if (!d || !(*d >= 0) || !std::isfinite(*d))
      return error(key, "a finite, non-negative number", *field);
    out = *d;
    return llvm::Error::success();
  }

  /// A size in bytes: a non-negative number below 2^64, rounded to whole
  /// bytes unless `exact` (then an integer).
  llvm::Error readBytes(llvm::StringRef key, bool exact,
                        std::optional<uint64_t> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    if (std::optional<uint64_t> u = field->getAsUINT64()) {
      out = *u;
      return llvm::Error::success();
    }
    if (std::optional<int64_t> i = field->getAsInteger(); i && *i >= 0) {
      out = static_cast<uint64_t>(*i);
      return llvm::Error::success();
    }
    std::optional<double> d = exact ? std::nullopt : field->getAsNumber();
    if (!d || !(*d >= 0) || !(std::round(*d) < 18446744073709551616.0))
      return error(key,
                   exact ? "a non-negative integer number of bytes"
                         : "a non-negative number of bytes below 2^64",
                   *field);
    out = static_cast<uint64_t>(std::round(*d));
    return llvm::Error::success();
  }
};
} // namespace

bool remat::isNodeLinkGraph(const llvm::json::Value &json) {
  const llvm::json::Object *root = json.getAsObject();
  return root && root->getArray("nodes") && root->getArray("links");
}

/// The `graph.format` that marks the project's own node-link export.
static constexpr llvm::StringLiteral kRematNodeLinkFormat =
    "remat-training-graph";

llvm::json::Value remat::exportNodeLinkGraph(const TrainingGraph &graph) {
  const int64_t numNodes = static_cast<int64_t>(graph.numNodes());
  // Node ids: graph node n is n, fixed value v is numNodes + v.
  auto sourceId = [&](ValueId v) {
    const GraphValue &value = graph.value(v);
    return value.isFixed() ? numNodes + v : int64_t(value.producer);
  };
  llvm::json::Array nodes, links;
  for (NodeId n = 0; n < static_cast<NodeId>(numNodes); ++n) {
    const Node &node = graph.node(n);
    llvm::json::Array outputs;
    uint64_t bytes = 0;
    for (ValueId v : node.outputs) {
      const GraphValue &value = graph.value(v);
      bytes += value.bytes;
      outputs.push_back(llvm::json::Object{{"value", v},
                                           {"name", value.name},
                                           {"bytes", value.bytes},
                                           {"output", value.isOutput}});
    }
    llvm::json::Object object{{"id", n},
                              {"name", node.name},
                              {"op", node.opName},
                              {"backward", node.phase == Phase::Backward},
                              {"cost_cpu", node.cost},
                              {"cost_ram", bytes},
                              {"workspace", node.workspaceBytes},
                              {"outputs", std::move(outputs)}};
    if (!node.reuses.empty())
      object["reuses"] = reusesToJSON(node);
    nodes.push_back(std::move(object));
    for (ValueId in : node.inputs)
      links.push_back(llvm::json::Object{
          {"source", sourceId(in)}, {"target", n}, {"value", in}});
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph.numValues()); ++v) {
    const GraphValue &value = graph.value(v);
    if (!value.isFixed())
      continue;
    nodes.push_back(llvm::json::Object{{"id", numNodes + v},
                                       {"name", value.name},
                                       {"fixed", true},
                                       {"value", v},
                                       {"cost_cpu", 0},
                                       {"cost_ram", value.bytes}});
  }
  return llvm::json::Object{
      {"directed", true},
      {"multigraph", true},
      {"graph", llvm::json::Object{{"format", kRematNodeLinkFormat}}},
      {"nodes", std::move(nodes)},
      {"links", std::move(links)}};
}

namespace {
/// Called with each element of an array and its index.
using ElementFn =
    llvm::function_ref<llvm::Error(size_t index, const llvm::json::Value &)>;

/// A node-link document as the importers read it: whether it is the
/// project's own export, then each node and each link once, in order, nodes
/// first. importNodeLinkGraph walks a DOM; readGraph parses the elements one
/// at a time from the text, so that the document never exists as a DOM
/// (JSONScanner says why).
struct NodeLinkSource {
  bool rematFormat;
  llvm::function_ref<llvm::Error(ElementFn)> forEachNode;
  llvm::function_ref<llvm::Error(ElementFn)> forEachLink;
};
} // namespace

/// Reads the project's own node-link export back: the nodes and links carry
/// the value ids, so the document converts to the native format
/// (TrainingGraph::fromJSON), which checks it.
static llvm::Expected<TrainingGraph>
importRematNodeLink(const NodeLinkSource &source) {
  // Value slots by id, and the nodes, built directly (not as a native JSON
  // document for TrainingGraph::fromJSON: a json::Object per node and value
  // took ~8 KiB each, 40x the file for graphs of many small nodes).
  std::vector<std::optional<GraphValue>> values;
  auto slot = [&](int64_t v) -> std::optional<GraphValue> & {
    if (static_cast<size_t>(v) >= values.size())
      values.resize(v + 1);
    return values[v];
  };
  std::vector<Node> graphNodes;
  llvm::DenseMap<int64_t, size_t> nodeIndex; // op node id -> graph node
  auto badValue = [](std::optional<int64_t> v) {
    return !v || *v < 0 || *v >= INT32_MAX;
  };
  if (llvm::Error err = source.forEachNode([&](size_t i,
                                               const llvm::json::Value &element)
                                               -> llvm::Error {
    std::string where = "nodes[" + std::to_string(i) + "]";
    const llvm::json::Object *node = element.getAsObject();
    if (!node)
      return nodeLinkError(where + ": expected an object with an integer 'id'");
    Fields fields{*node, where};
    std::optional<int64_t> id;
    std::optional<std::string> name;
    bool fixed = false;
    if (llvm::Error err = fields.readInteger("id", id))
      return std::move(err);
    if (!id)
      return nodeLinkError(where + ": expected an object with an integer 'id'");
    if (llvm::Error err = fields.readString("name", name))
      return std::move(err);
    if (llvm::Error err = fields.readBool("fixed", fixed))
      return std::move(err);
    if (fixed) {
      std::optional<int64_t> v;
      std::optional<uint64_t> bytes;
      if (llvm::Error err = fields.readIndex("value", INT32_MAX, v))
        return std::move(err);
      if (llvm::Error err = fields.readBytes("cost_ram", /*exact=*/true, bytes))
        return std::move(err);
      if (!v || !bytes)
        return nodeLinkError(where + ": a fixed node needs a value id 'value' "
                                     "and non-negative 'cost_ram'");
      if (slot(*v))
        return nodeLinkError(where + ": value " + std::to_string(*v) +
                             " is defined twice");
      GraphValue &value = slot(*v).emplace();
      value.name = name.value_or("");
      value.bytes = *bytes;
      value.producer = -1;
      return llvm::Error::success();
    }
    const llvm::json::Array *outputs = node->getArray("outputs");
    if (!outputs)
      return nodeLinkError(where + ": expected an 'outputs' array");
    std::optional<std::string> op;
    bool backward = false;
    std::optional<double> cost;
    std::optional<uint64_t> workspace;
    if (llvm::Error err = fields.readString("op", op))
      return std::move(err);
    if (llvm::Error err = fields.readBool("backward", backward))
      return std::move(err);
    if (llvm::Error err = fields.readCost("cost_cpu", cost))
      return std::move(err);
    if (llvm::Error err =
            fields.readBytes("workspace", /*exact=*/true, workspace))
      return std::move(err);
    size_t index = graphNodes.size();
    if (!nodeIndex.try_emplace(*id, index).second)
      return nodeLinkError("duplicate node id " + std::to_string(*id));
    Node converted;
    converted.name = name.value_or("");
    converted.opName = op.value_or("");
    converted.phase = backward ? Phase::Backward : Phase::Forward;
    if (cost)
      converted.cost = *cost;
    if (workspace)
      converted.workspaceBytes = *workspace;
    for (size_t k = 0; k < outputs->size(); ++k) {
      std::string at = where + ".outputs[" + std::to_string(k) + "]";
      const llvm::json::Object *out = (*outputs)[k].getAsObject();
      if (!out)
        return nodeLinkError(at + ": needs 'value' and 'bytes'");
      Fields outFields{*out, at};
      std::optional<int64_t> v;
      std::optional<uint64_t> bytes;
      std::optional<std::string> outName;
      bool isOutput = false;
      if (llvm::Error err = outFields.readIndex("value", INT32_MAX, v))
        return std::move(err);
      if (llvm::Error err = outFields.readBytes("bytes", /*exact=*/true, bytes))
        return std::move(err);
      if (llvm::Error err = outFields.readString("name", outName))
        return std::move(err);
      if (llvm::Error err = outFields.readBool("output", isOutput))
        return std::move(err);
      if (!v || !bytes)
        return nodeLinkError(at + ": needs 'value' and 'bytes'");
      if (slot(*v))
        return nodeLinkError(where + ": value " + std::to_string(*v) +
                             " is defined twice");
      GraphValue &value = slot(*v).emplace();
      value.name = outName.value_or("");
      value.bytes = *bytes;
      value.producer = static_cast<NodeId>(index);
      value.isOutput = isOutput;
      converted.outputs.push_back(static_cast<ValueId>(*v));
    }
    // Ids are checked against the values' count by fromParts.
    if (const llvm::json::Value *reuses = node->get("reuses"))
      if (llvm::Error err = reusesFromJSON(*reuses, INT32_MAX, where,
                                           converted))
        return nodeLinkError(llvm::toString(std::move(err)));
    graphNodes.push_back(std::move(converted));
    return llvm::Error::success();
  }))
    return std::move(err);
  if (llvm::Error err = source.forEachLink([&](size_t i,
                                               const llvm::json::Value &element)
                                               -> llvm::Error {
    std::string where = "links[" + std::to_string(i) + "]";
    const llvm::json::Object *link = element.getAsObject();
    std::optional<int64_t> target, v;
    if (link) {
      Fields fields{*link, where};
      if (llvm::Error err = fields.readInteger("target", target))
        return std::move(err);
      if (llvm::Error err = fields.readIndex("value", INT32_MAX, v))
        return std::move(err);
    }
    auto it = target ? nodeIndex.find(*target) : nodeIndex.end();
    if (it == nodeIndex.end() || badValue(v))
      return nodeLinkError(where + ": needs the id of an op node as 'target' "
                                   "and the value id read as 'value'");
    graphNodes[it->second].inputs.push_back(static_cast<ValueId>(*v));
    return llvm::Error::success();
  }))
    return std::move(err);
  std::vector<GraphValue> valueList;
  valueList.reserve(values.size());
  for (size_t v = 0; v < values.size(); ++v) {
    if (!values[v])
      return nodeLinkError("value " + std::to_string(v) +
                           " is neither a fixed node nor a node's output");
    valueList.push_back(std::move(*values[v]));
  }
  values.clear();
  llvm::Expected<TrainingGraph> graph = TrainingGraph::fromParts(
      std::move(graphNodes), std::move(valueList));
  if (!graph)
    return nodeLinkError(llvm::toString(graph.takeError()));
  return graph;
}

/// True if a document's `graph` member marks the project's own export.
static bool isRematFormat(const llvm::json::Value *graphAttributes) {
  const llvm::json::Object *attributes =
      graphAttributes ? graphAttributes->getAsObject() : nullptr;
  return attributes &&
         attributes->getString("format") == kRematNodeLinkFormat;
}

static llvm::Expected<TrainingGraph>
importNodeLink(const NodeLinkSource &source) {
  if (source.rematFormat)
    return importRematNodeLink(source);

  // Two dialects of the format: Checkmate's (id, cost_cpu, cost_ram,
  // backward; links source -> target) and Moccasin's generated DAGs (name
  // is the id, duration, out_cost, param_cost; links {"0": source, "1":
  // target}; forward only).
  struct Entry {
    int64_t id;
    std::string name;
    bool backward;
    double cost;
    uint64_t bytes;
    uint64_t paramBytes;
  };
  std::vector<Entry> entries;
  [[maybe_unused]] size_t moccasinNodes = 0;
  if (llvm::Error err = source.forEachNode([&](size_t i,
                                               const llvm::json::Value &element)
                                               -> llvm::Error {
    const llvm::json::Object *node = element.getAsObject();
    std::string where = "nodes[" + std::to_string(i) + "]";
    if (!node)
      return nodeLinkError(where + ": expected an object");
    Fields fields{*node, where};
    // Moccasin's dialect has none of Checkmate's keys.
    bool moccasin =
        !node->get("id") && !node->get("cost_cpu") && !node->get("cost_ram");
    moccasinNodes += moccasin;
    std::optional<int64_t> id;
    std::optional<double> cost;
    std::optional<uint64_t> ram, params;
    std::optional<std::string> name;
    bool backward = false;
    if (llvm::Error err = fields.readInteger(moccasin ? "name" : "id", id))
      return std::move(err);
    if (llvm::Error err =
            fields.readCost(moccasin ? "duration" : "cost_cpu", cost))
      return std::move(err);
    if (llvm::Error err = fields.readBytes(moccasin ? "out_cost" : "cost_ram",
                                           /*exact=*/false, ram))
      return std::move(err);
    if (moccasin) {
      if (llvm::Error err =
              fields.readBytes("param_cost", /*exact=*/false, params))
        return std::move(err);
    } else {
      if (llvm::Error err = fields.readString("name", name))
        return std::move(err);
      if (llvm::Error err = fields.readBool("backward", backward))
        return std::move(err);
    }
    if (!id || !cost || !ram)
      return nodeLinkError(where +
                           ": needs integer 'id' and numbers 'cost_cpu', "
                           "'cost_ram' (or Moccasin's integer 'name' and "
                           "numbers 'duration', 'out_cost')");
    Entry entry{*id, "", backward, *cost, *ram, params.value_or(0)};
    entry.name = !moccasin && name ? *name : "node" + std::to_string(*id);
    entries.push_back(std::move(entry));
    return llvm::Error::success();
  }))
    return std::move(err);
  llvm::DenseMap<int64_t, int> indexById;
  for (size_t i = 0; i < entries.size(); ++i)
    if (!indexById.try_emplace(entries[i].id, static_cast<int>(i)).second)
      return nodeLinkError("duplicate node id " +
                           std::to_string(entries[i].id));

  std::vector<std::pair<int, int>> edges; // entry indices
  if (llvm::Error err = source.forEachLink([&](size_t i,
                                               const llvm::json::Value &element)
                                               -> llvm::Error {
    const llvm::json::Object *link = element.getAsObject();
    std::string where = "links[" + std::to_string(i) + "]";
    std::optional<int64_t> source, target;
    if (link) {
      // Moccasin's links are {"0": source, "1": target}.
      bool moccasin = !link->get("source") && !link->get("target");
      Fields fields{*link, where};
      if (llvm::Error err =
              fields.readInteger(moccasin ? "0" : "source", source))
        return std::move(err);
      if (llvm::Error err =
              fields.readInteger(moccasin ? "1" : "target", target))
        return std::move(err);
    }
    if (!source || !target)
      return nodeLinkError(where + ": needs integer 'source' and 'target'");
    auto s = indexById.find(*source), t = indexById.find(*target);
    if (s == indexById.end() || t == indexById.end())
      return nodeLinkError(where + ": unknown node id");
    edges.push_back({s->second, t->second});
    return llvm::Error::success();
  }))
    return std::move(err);

  // Node order: a topological order, the smallest id first among ready
  // nodes (Kahn), so that files whose ids are a topological order (all of
  // Checkmate's) keep it; Moccasin's ids are not one.
  const size_t n = entries.size();
  std::vector<std::vector<int>> succs(n);
  std::vector<int> indegree(n, 0);
  for (auto [s, t] : edges) {
    succs[s].push_back(t);
    ++indegree[t];
  }
  std::priority_queue<std::pair<int64_t, int>,
                      std::vector<std::pair<int64_t, int>>, std::greater<>>
      ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0)
      ready.push({entries[i].id, static_cast<int>(i)});
  std::vector<int> position(n, -1);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top().second;
    ready.pop();
    position[i] = static_cast<int>(order.size());
    order.push_back(i);
    for (int t : succs[i])
      if (--indegree[t] == 0)
        ready.push({entries[t].id, t});
  }
  if (order.size() != n)
    return nodeLinkError("the links form a cycle");
  LLVM_DEBUG({
    bool reordered = false;
    for (size_t i = 0; i < n; ++i)
      reordered |= order[i] != static_cast<int>(i);
    llvm::dbgs() << "graph io: node-link, "
                 << (moccasinNodes ? "Moccasin's" : "Checkmate's")
                 << " dialect: " << n << " nodes, " << edges.size()
                 << " links; "
                 << (reordered ? "reordered topologically (Kahn, smallest id "
                                 "first)"
                               : "the file's order is topological")
                 << "\n";
  });
  std::vector<std::vector<int>> preds(n);
  for (auto [s, t] : edges)
    preds[position[t]].push_back(position[s]);
  std::vector<Entry> sorted;
  sorted.reserve(n);
  for (int i : order)
    sorted.push_back(std::move(entries[i]));
  entries = std::move(sorted);

  // Node i's single output is value i, so node and value ids coincide;
  // Moccasin's parameters (param_cost) are fixed values after them.
  TrainingGraph graph;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<ValueId> inputs(preds[i].begin(), preds[i].end());
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    NodeId node = graph.addNode(entries[i].name, entries[i].name,
                                entries[i].cost,
                                entries[i].backward ? Phase::Backward
                                                    : Phase::Forward,
                                std::move(inputs));
    graph.addOutput(node, entries[i].name, entries[i].bytes);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].paramBytes == 0)
      continue;
    ValueId p = graph.addFixedValue(entries[i].name + ".params",
                                    entries[i].paramBytes);
    graph.node(static_cast<NodeId>(i)).inputs.push_back(p);
    graph.value(p).users.push_back(static_cast<NodeId>(i));
  }
  if (llvm::Error err = graph.verify())
    return std::move(err);
  return graph;
}

llvm::Expected<TrainingGraph>
remat::importNodeLinkGraph(const llvm::json::Value &json) {
  if (!isNodeLinkGraph(json))
    return nodeLinkError("expected an object with 'nodes' and 'links' arrays");
  const llvm::json::Object &root = *json.getAsObject();
  auto each = [](const llvm::json::Array &array, ElementFn fn) -> llvm::Error {
    for (size_t i = 0; i < array.size(); ++i)
      if (llvm::Error err = fn(i, array[i]))
        return err;
    return llvm::Error::success();
  };
  auto forEachNode = [&](ElementFn fn) {
    return each(*root.getArray("nodes"), fn);
  };
  auto forEachLink = [&](ElementFn fn) {
    return each(*root.getArray("links"), fn);
  };
  return importNodeLink(
      NodeLinkSource{isRematFormat(root.get("graph")), forEachNode,
                     forEachLink});
}

llvm::Error remat::checkJSONNesting(llvm::StringRef text, unsigned limit) {
  // llvm::json::parse recurses once per level of [ and {: a million `[` in
  // a file overflow the stack before any error can be reported. Strings
  // are skipped (with their escapes) so that brackets inside names do not
  // count; unbalanced brackets are left for the parser to report.
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    switch (text[i]) {
    case '"':
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '[':
    case '{':
      if (++depth > limit)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("JSON nested deeper than {0} levels at byte {1} "
                          "(a graph file needs 5)",
                          limit, i));
      break;
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}

namespace {
/// Reads a JSON document piecewise: the members of the root object and the
/// elements of an array are delimited by scanning the text (strings skipped
/// with their escapes, brackets counted), and each piece is then parsed on
/// its own by llvm::json::parse, so that numbers, strings and errors are
/// exactly the parser's.
///
/// Why not the DOM: llvm::json::parse builds the whole document, and each
/// object in it is a DenseMap of at least 64 buckets of (ObjectKey, Value),
/// 4 KiB for a link {"source": s, "target": t} of 30 bytes of text: a
/// node-link file of millions of links took ~180x its size (issue 13: 8.8 GB
/// for a 47 MB file). Why not something else of LLVM's: llvm/Support/JSON.h
/// has only that parser and the OStream writer, no event (SAX) or pull
/// parser.
class JSONScanner {
public:
  explicit JSONScanner(llvm::StringRef text) : text(text) {}

  /// An error as llvm::json::parse words it ("[line:column, byte=offset]:
  /// message", the column counted from 0), at `offset` in the whole text.
  llvm::Error error(size_t offset, const llvm::Twine &message) const {
    llvm::StringRef before = text.take_front(offset);
    size_t line = 1 + before.count('\n');
    size_t lineStart = before.rfind('\n');
    size_t column =
        lineStart == llvm::StringRef::npos ? offset : offset - lineStart - 1;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("[{0}:{1}, byte={2}]: {3}", line, column, offset,
                      message.str()));
  }

  size_t skipSpace(size_t pos) const {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\r' || text[pos] == '\n'))
      ++pos;
    return pos;
  }

  /// The end of the value that starts at `pos`. Exact for valid JSON; for
  /// invalid JSON, an end at which parsing [pos, end) reports the error (the
  /// text's end where a string or bracket is not closed, one character
  /// where no value can start).
  size_t valueEnd(size_t pos) const {
    const size_t e = text.size();
    if (pos >= e)
      return e;
    switch (text[pos]) {
    case '"':
      return stringEnd(pos);
    case '[':
    case '{': {
      unsigned depth = 0;
      for (size_t i = pos; i < e; ++i) {
        char c = text[i];
        if (c == '"') {
          i = stringEnd(i) - 1;
        } else if (c == '[' || c == '{') {
          ++depth;
        } else if (c == ']' || c == '}') {
          if (--depth == 0)
            return i + 1;
        }
      }
      return e;
    }
    case ',':
    case ':':
    case ']':
    case '}':
      return pos + 1;
    default: {
      // A number or a literal: up to the next delimiter.
      size_t i = pos;
      while (i < e && !llvm::StringRef(" \t\r\n,:[]{}\"").contains(text[i]))
        ++i;
      return i;
    }
    }
  }

  /// Parses [begin, end) with llvm::json::parse, its error placed in the
  /// whole text.
  llvm::Expected<llvm::json::Value> parse(size_t begin, size_t end) const {
    llvm::Expected<llvm::json::Value> value =
        llvm::json::parse(text.slice(begin, end));
    if (value)
      return value;
    // The parser's message is "[line:column, byte=offset]: message" in the
    // piece; only the offset is needed to place it.
    std::string message = llvm::toString(value.takeError());
    llvm::StringRef rest(message);
    size_t offset = 0;
    rest = rest.drop_until([](char c) { return c == ','; });
    if (rest.consume_front(", byte=") && !rest.consumeInteger(10, offset) &&
        rest.consume_front("]: "))
      return error(begin + offset, rest);
    return error(begin, message);
  }

  /// Calls `fn(index, begin, end)` for each element of the array [begin,
  /// end) (text[begin] == '['); errors in the array's own syntax are
  /// reported as the parser would.
  llvm::Error
  forEachElement(size_t begin, size_t end,
                 llvm::function_ref<llvm::Error(size_t, size_t, size_t)> fn)
      const {
    size_t pos = skipSpace(begin + 1);
    if (pos < end && text[pos] == ']')
      return llvm::Error::success();
    for (size_t index = 0;; ++index) {
      size_t elementEnd = std::min(valueEnd(pos), end);
      if (llvm::Error err = fn(index, pos, elementEnd))
        return err;
      pos = skipSpace(elementEnd);
      if (pos < end && text[pos] == ',') {
        pos = skipSpace(pos + 1);
        continue;
      }
      if (pos < end && text[pos] == ']')
        return llvm::Error::success();
      return error(std::min(pos + 1, text.size()),
                   "Expected , or ] after array element");
    }
  }

  /// Calls `fn(key, begin, end)` for each member of the object that starts
  /// at `begin` (text[begin] == '{'), in order, with the value's extent;
  /// returns the object's end. Checks the object's own syntax only: the
  /// values are the caller's to parse.
  llvm::Expected<size_t> forEachMember(
      size_t begin,
      llvm::function_ref<void(llvm::StringRef, size_t, size_t)> fn) const {
    size_t pos = skipSpace(begin + 1);
    if (pos < text.size() && text[pos] == '}')
      return pos + 1;
    for (;;) {
      if (pos >= text.size() || text[pos] != '"')
        return error(std::min(pos + 1, text.size()), "Expected object key");
      size_t keyEnd = stringEnd(pos);
      llvm::Expected<llvm::json::Value> key = parse(pos, keyEnd);
      if (!key)
        return key.takeError();
      pos = skipSpace(keyEnd);
      if (pos >= text.size() || text[pos] != ':')
        return error(std::min(pos + 1, text.size()),
                     "Expected : after object key");
      pos = skipSpace(pos + 1);
      size_t valueEndPos = valueEnd(pos);
      fn(*key->getAsString(), pos, valueEndPos);
      pos = skipSpace(valueEndPos);
      if (pos < text.size() && text[pos] == ',') {
        pos = skipSpace(pos + 1);
        continue;
      }
      if (pos < text.size() && text[pos] == '}')
        return pos + 1;
      return error(std::min(pos + 1, text.size()),
                   "Expected , or } after object property");
    }
  }

  char at(size_t pos) const { return pos < text.size() ? text[pos] : 0; }
  size_t size() const { return text.size(); }

private:
  /// The end of the string that starts at `pos` (after its closing quote),
  /// or the text's end if it is not closed.
  size_t stringEnd(size_t pos) const {
    for (size_t i = pos + 1, e = text.size(); i < e; ++i) {
      if (text[i] == '\\')
        ++i;
      else if (text[i] == '"')
        return i + 1;
    }
    return text.size();
  }

  llvm::StringRef text;
};

/// A member of the root object: its key and the extent of its value.
struct Member {
  std::string key;
  size_t begin, end;
};
} // namespace

llvm::Expected<TrainingGraph> remat::readGraph(llvm::StringRef text,
                                               llvm::StringRef name) {
  auto invalidJSON = [&](llvm::Error err) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + name + "' is not valid JSON: " +
                                       llvm::toString(std::move(err)));
  };
  auto badGraph = [&](llvm::Error err) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + name + "': " +
                                       llvm::toString(std::move(err)));
  };
  if (llvm::Error err = checkJSONNesting(text))
    return badGraph(std::move(err));
  JSONScanner scanner(text);
  // As llvm::json::parse, the encoding first, so that the first error is
  // the same as the parser's.
  size_t badByte = 0;
  if (!llvm::json::isUTF8(text, &badByte))
    return invalidJSON(scanner.error(badByte, "Invalid UTF-8 sequence"));

  // The root object's members (the last of a repeated key wins, as in the
  // parser). A syntax error of the root object itself is reported only
  // after the members before it are checked, so that the first error in
  // the text is reported, as the parser does.
  std::vector<Member> members;
  std::optional<llvm::Error> rootError;
  size_t root = scanner.skipSpace(0);
  bool rootIsObject = scanner.at(root) == '{';
  if (rootIsObject) {
    llvm::Expected<size_t> rootEnd = scanner.forEachMember(
        root, [&](llvm::StringRef key, size_t begin, size_t end) {
          members.push_back(Member{key.str(), begin, end});
        });
    if (!rootEnd) {
      rootError = rootEnd.takeError();
    } else if (size_t after = scanner.skipSpace(*rootEnd);
               after != scanner.size()) {
      rootError = scanner.error(after, "Text after end of document");
    }
  }
  auto findMember = [&](llvm::StringRef key) -> const Member * {
    for (size_t i = members.size(); i-- > 0;)
      if (members[i].key == key)
        return &members[i];
    return nullptr;
  };
  // Every value parses, the arrays element by element: the parser's first
  // error, found without building the document.
  auto parseAndDrop = [&](size_t, size_t begin, size_t end) -> llvm::Error {
    llvm::Expected<llvm::json::Value> value = scanner.parse(begin, end);
    return value ? llvm::Error::success() : value.takeError();
  };
  for (const Member &member : members) {
    llvm::Error err =
        scanner.at(member.begin) == '['
            ? scanner.forEachElement(member.begin, member.end, parseAndDrop)
            : parseAndDrop(0, member.begin, member.end);
    if (err) {
      if (rootError)
        llvm::consumeError(std::move(*rootError));
      return invalidJSON(std::move(err));
    }
  }
  if (rootError)
    return invalidJSON(std::move(*rootError));

  const Member *nodes = findMember("nodes");
  const Member *links = findMember("links");
  if (!rootIsObject || !nodes || !links || scanner.at(nodes->begin) != '[' ||
      scanner.at(links->begin) != '[') {
    // The native format (or not a graph): its reader takes a DOM.
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
    if (!json)
      return invalidJSON(json.takeError());
    bool nodeLink = isNodeLinkGraph(*json);
    llvm::Expected<TrainingGraph> graph =
        nodeLink ? importNodeLinkGraph(*json) : TrainingGraph::fromJSON(*json);
    if (!graph)
      return badGraph(graph.takeError());
    debugGraph(name, nodeLink ? "node-link" : "the native format", *graph);
    return graph;
  }

  // A node-link document, valid JSON: the importer reads it one element at
  // a time (a second parse of each, cheaper than keeping them).
  bool rematFormat = false;
  if (const Member *graphMember = findMember("graph")) {
    llvm::Expected<llvm::json::Value> attributes =
        scanner.parse(graphMember->begin, graphMember->end);
    if (!attributes)
      return invalidJSON(attributes.takeError());
    rematFormat = isRematFormat(&*attributes);
  }
  auto elements = [&](const Member &array, ElementFn fn) {
    return scanner.forEachElement(
        array.begin, array.end,
        [&](size_t index, size_t begin, size_t end) -> llvm::Error {
          llvm::Expected<llvm::json::Value> element =
              scanner.parse(begin, end);
          if (!element)
            return element.takeError();
          return fn(index, *element);
        });
  };
  auto forEachNode = [&](ElementFn fn) { return elements(*nodes, fn); };
  auto forEachLink = [&](ElementFn fn) { return elements(*links, fn); };
  llvm::Expected<TrainingGraph> graph =
      importNodeLink(NodeLinkSource{rematFormat, forEachNode, forEachLink});
  if (!graph)
    return badGraph(graph.takeError());
  debugGraph(name, rematFormat ? "node-link (remat-opt's export)" : "node-link",
             *graph);
  return graph;
}

llvm::Expected<TrainingGraph> remat::loadGraphFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " +
                                       buffer.getError().message());
  return readGraph((*buffer)->getBuffer(), path);
}
