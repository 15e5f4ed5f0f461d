//===- GraphIO.cpp - Reading training graphs from files -------------------===//

#include "remat/Graph/GraphIO.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace remat;

static llvm::Error nodeLinkError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "node-link graph: " + message);
}

bool remat::isNodeLinkGraph(const llvm::json::Value &json) {
  const llvm::json::Object *root = json.getAsObject();
  return root && root->getArray("nodes") && root->getArray("links");
}

llvm::Expected<TrainingGraph>
remat::importNodeLinkGraph(const llvm::json::Value &json) {
  if (!isNodeLinkGraph(json))
    return nodeLinkError("expected an object with 'nodes' and 'links' arrays");
  const llvm::json::Object &root = *json.getAsObject();
  const llvm::json::Array &nodes = *root.getArray("nodes");
  const llvm::json::Array &links = *root.getArray("links");

  struct Entry {
    int64_t id;
    std::string name;
    bool backward;
    double cost;
    uint64_t bytes;
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
    if (!id || !cost || !ram)
      return nodeLinkError(where +
                           ": needs integer 'id' and numbers 'cost_cpu', "
                           "'cost_ram'");
    if (*cost < 0 || *ram < 0 || !std::isfinite(*cost) || !std::isfinite(*ram))
      return nodeLinkError(where + ": costs and sizes must be non-negative");
    Entry entry{*id, "", node->getBoolean("backward").value_or(false), *cost,
                static_cast<uint64_t>(std::llround(*ram))};
    if (std::optional<llvm::StringRef> name = node->getString("name"))
      entry.name = name->str();
    else
      entry.name = "node" + std::to_string(*id);
    entries.push_back(std::move(entry));
  }
  // Ids are a topological order; sort by id and index densely.
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.id < b.id; });
  llvm::DenseMap<int64_t, int> indexOf;
  for (size_t i = 0; i < entries.size(); ++i)
    if (!indexOf.try_emplace(entries[i].id, static_cast<int>(i)).second)
      return nodeLinkError("duplicate node id " +
                           std::to_string(entries[i].id));

  std::vector<std::vector<int>> preds(entries.size());
  for (size_t i = 0; i < links.size(); ++i) {
    const llvm::json::Object *link = links[i].getAsObject();
    std::string where = "links[" + std::to_string(i) + "]";
    std::optional<int64_t> source = link ? link->getInteger("source") : std::nullopt;
    std::optional<int64_t> target = link ? link->getInteger("target") : std::nullopt;
    if (!source || !target)
      return nodeLinkError(where + ": needs integer 'source' and 'target'");
    auto s = indexOf.find(*source), t = indexOf.find(*target);
    if (s == indexOf.end() || t == indexOf.end())
      return nodeLinkError(where + ": unknown node id");
    if (s->second >= t->second)
      return nodeLinkError(where + ": node ids are not a topological order (" +
                           std::to_string(*source) + " -> " +
                           std::to_string(*target) + ")");
    preds[t->second].push_back(s->second);
  }

  // Node i's single output is value i, so node and value ids coincide.
  TrainingGraph graph;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<ValueId> inputs(preds[i].begin(), preds[i].end());
    std::sort(inputs.begin(), inputs.end());
    NodeId node = graph.addNode(entries[i].name, entries[i].name,
                                entries[i].cost,
                                entries[i].backward ? Phase::Backward
                                                    : Phase::Forward,
                                std::move(inputs));
    graph.addOutput(node, entries[i].name, entries[i].bytes);
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
