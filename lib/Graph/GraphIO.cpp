//===- GraphIO.cpp - Reading training graphs from files -------------------===//

#include "remat/Graph/GraphIO.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <queue>

using namespace remat;

static llvm::Error nodeLinkError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "node-link graph: " + message);
}

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
    std::optional<int64_t> id = node ? node->getInteger("id") : std::nullopt;
    if (!id)
      return nodeLinkError(where + ": expected an object with an integer 'id'");
    std::string name = node->getString("name").value_or("").str();
    if (node->getBoolean("fixed").value_or(false)) {
      std::optional<int64_t> v = node->getInteger("value");
      std::optional<double> bytes = node->getNumber("cost_ram");
      if (badValue(v) || !bytes || !(*bytes >= 0) || !std::isfinite(*bytes))
        return nodeLinkError(where + ": a fixed node needs a value id 'value' "
                                     "and non-negative 'cost_ram'");
      if (slot(*v))
        return nodeLinkError(where + ": value " + std::to_string(*v) +
                             " is defined twice");
      slot(*v) = llvm::json::Object{{"name", name},
                                    {"bytes", static_cast<uint64_t>(*bytes)},
                                    {"producer", -1}};
      continue;
    }
    const llvm::json::Array *outputs = node->getArray("outputs");
    if (!outputs)
      return nodeLinkError(where + ": expected an 'outputs' array");
    size_t index = graphNodes.size();
    if (!nodeIndex.try_emplace(*id, index).second)
      return nodeLinkError("duplicate node id " + std::to_string(*id));
    llvm::json::Array outputIds;
    for (size_t k = 0; k < outputs->size(); ++k) {
      const llvm::json::Object *out = (*outputs)[k].getAsObject();
      std::optional<int64_t> v = out ? out->getInteger("value") : std::nullopt;
      const llvm::json::Value *bytes = out ? out->get("bytes") : nullptr;
      if (badValue(v) || !bytes)
        return nodeLinkError(where + ".outputs[" + std::to_string(k) +
                             "]: needs 'value' and 'bytes'");
      if (slot(*v))
        return nodeLinkError(where + ": value " + std::to_string(*v) +
                             " is defined twice");
      slot(*v) = llvm::json::Object{
          {"name", out->getString("name").value_or("").str()},
          {"bytes", *bytes},
          {"producer", static_cast<int64_t>(index)},
          {"output", out->getBoolean("output").value_or(false)}};
      outputIds.push_back(*v);
    }
    llvm::json::Object converted{
        {"name", name},
        {"op", node->getString("op").value_or("").str()},
        {"phase", node->getBoolean("backward").value_or(false) ? "backward"
                                                               : "forward"},
        {"outputs", std::move(outputIds)},
        {"inputs", llvm::json::Array()}};
    if (const llvm::json::Value *cost = node->get("cost_cpu"))
      converted["cost"] = *cost;
    if (const llvm::json::Value *workspace = node->get("workspace"))
      converted["workspace"] = *workspace;
    if (const llvm::json::Value *reuses = node->get("reuses"))
      converted["reuses"] = *reuses;
    graphNodes.push_back(std::move(converted));
  }
  for (size_t i = 0; i < links.size(); ++i) {
    std::string where = "links[" + std::to_string(i) + "]";
    const llvm::json::Object *link = links[i].getAsObject();
    std::optional<int64_t> target =
        link ? link->getInteger("target") : std::nullopt;
    std::optional<int64_t> v = link ? link->getInteger("value") : std::nullopt;
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
    std::optional<int64_t> id = node->getInteger("id");
    std::optional<double> cost = node->getNumber("cost_cpu");
    std::optional<double> ram = node->getNumber("cost_ram");
    std::optional<double> params;
    bool moccasin = false;
    if (!id && !cost && !ram) {
      id = node->getInteger("name");
      cost = node->getNumber("duration");
      ram = node->getNumber("out_cost");
      params = node->getNumber("param_cost");
      moccasin = true;
    }
    if (!id || !cost || !ram)
      return nodeLinkError(where +
                           ": needs integer 'id' and numbers 'cost_cpu', "
                           "'cost_ram' (or Moccasin's integer 'name' and "
                           "numbers 'duration', 'out_cost')");
    if (*cost < 0 || *ram < 0 || !std::isfinite(*cost) ||
        !std::isfinite(*ram) || (params && !(*params >= 0)))
      return nodeLinkError(where + ": costs and sizes must be non-negative");
    Entry entry{*id,
                "",
                node->getBoolean("backward").value_or(false),
                *cost,
                static_cast<uint64_t>(std::llround(*ram)),
                params ? static_cast<uint64_t>(std::llround(*params)) : 0};
    if (moccasin)
      entry.name = "node" + std::to_string(*id);
    else if (std::optional<llvm::StringRef> name = node->getString("name"))
      entry.name = name->str();
    else
      entry.name = "node" + std::to_string(*id);
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
    std::optional<int64_t> source =
        link ? link->getInteger("source") : std::nullopt;
    std::optional<int64_t> target =
        link ? link->getInteger("target") : std::nullopt;
    if (link && !source && !target) {
      source = link->getInteger("0");
      target = link->getInteger("1");
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
