//===- GraphIO.cpp - Reading training graphs from files -------------------===//

#include "remat/Graph/GraphIO.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace remat;

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

/// Reads the project's own node-link export back: the nodes and links carry
/// the value ids, so the document converts to the native format
/// (TrainingGraph::fromJSON), which checks it.
static llvm::Expected<TrainingGraph>
importRematNodeLink(const llvm::json::Object &root) {
  const llvm::json::Array &nodes = *root.getArray("nodes");
  const llvm::json::Array &links = *root.getArray("links");
  // Value slots by id: {name, bytes, producer, output}.
  std::vector<std::optional<llvm::json::Object>> values;
  auto slot = [&](int64_t v) -> std::optional<llvm::json::Object> & {
    if (static_cast<size_t>(v) >= values.size())
      values.resize(v + 1);
    return values[v];
  };
  std::vector<llvm::json::Object> graphNodes;
  llvm::DenseMap<int64_t, size_t> nodeIndex; // op node id -> graph node
  auto badValue = [](std::optional<int64_t> v) {
    return !v || *v < 0 || *v >= INT32_MAX;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string where = "nodes[" + std::to_string(i) + "]";
    const llvm::json::Object *node = nodes[i].getAsObject();
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
      slot(*v) = llvm::json::Object{
          {"name", name.value_or("")}, {"bytes", *bytes}, {"producer", -1}};
      continue;
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
    llvm::json::Array outputIds;
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
      slot(*v) = llvm::json::Object{{"name", outName.value_or("")},
                                    {"bytes", *bytes},
                                    {"producer", static_cast<int64_t>(index)},
                                    {"output", isOutput}};
      outputIds.push_back(*v);
    }
    llvm::json::Object converted{{"name", name.value_or("")},
                                 {"op", op.value_or("")},
                                 {"phase", backward ? "backward" : "forward"},
                                 {"outputs", std::move(outputIds)},
                                 {"inputs", llvm::json::Array()}};
    if (cost)
      converted["cost"] = *cost;
    if (workspace)
      converted["workspace"] = *workspace;
    if (const llvm::json::Value *reuses = node->get("reuses"))
      converted["reuses"] = *reuses;
    graphNodes.push_back(std::move(converted));
  }
  for (size_t i = 0; i < links.size(); ++i) {
    std::string where = "links[" + std::to_string(i) + "]";
    const llvm::json::Object *link = links[i].getAsObject();
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
    graphNodes[it->second].getArray("inputs")->push_back(*v);
  }
  llvm::json::Array valueArray;
  for (size_t v = 0; v < values.size(); ++v) {
    if (!values[v])
      return nodeLinkError("value " + std::to_string(v) +
                           " is neither a fixed node nor a node's output");
    valueArray.push_back(std::move(*values[v]));
  }
  llvm::json::Array nodeArray;
  for (llvm::json::Object &node : graphNodes)
    nodeArray.push_back(std::move(node));
  llvm::Expected<TrainingGraph> graph = TrainingGraph::fromJSON(
      llvm::json::Object{{"nodes", std::move(nodeArray)},
                         {"values", std::move(valueArray)}});
  if (!graph)
    return nodeLinkError(llvm::toString(graph.takeError()));
  return graph;
}

llvm::Expected<TrainingGraph>
remat::importNodeLinkGraph(const llvm::json::Value &json) {
  if (!isNodeLinkGraph(json))
    return nodeLinkError("expected an object with 'nodes' and 'links' arrays");
  const llvm::json::Object &root = *json.getAsObject();
  if (const llvm::json::Object *attributes = root.getObject("graph"))
    if (attributes->getString("format") == kRematNodeLinkFormat)
      return importRematNodeLink(root);
  const llvm::json::Array &nodes = *root.getArray("nodes");
  const llvm::json::Array &links = *root.getArray("links");

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
  entries.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const llvm::json::Object *node = nodes[i].getAsObject();
    std::string where = "nodes[" + std::to_string(i) + "]";
    if (!node)
      return nodeLinkError(where + ": expected an object");
    Fields fields{*node, where};
    // Moccasin's dialect has none of Checkmate's keys.
    bool moccasin =
        !node->get("id") && !node->get("cost_cpu") && !node->get("cost_ram");
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
  }
  llvm::DenseMap<int64_t, int> indexById;
  for (size_t i = 0; i < entries.size(); ++i)
    if (!indexById.try_emplace(entries[i].id, static_cast<int>(i)).second)
      return nodeLinkError("duplicate node id " +
                           std::to_string(entries[i].id));

  std::vector<std::pair<int, int>> edges; // entry indices
  for (size_t i = 0; i < links.size(); ++i) {
    const llvm::json::Object *link = links[i].getAsObject();
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
  }

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

llvm::Expected<TrainingGraph> remat::loadGraphFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " +
                                       buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + path + "' is not valid JSON: " + llvm::toString(json.takeError()));
  llvm::Expected<TrainingGraph> graph = isNodeLinkGraph(*json)
                                            ? importNodeLinkGraph(*json)
                                            : TrainingGraph::fromJSON(*json);
  if (!graph)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " +
                                       llvm::toString(graph.takeError()));
  return graph;
}
