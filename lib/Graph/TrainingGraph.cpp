//===- TrainingGraph.cpp - Pure C++ training graph ------------------------===//
//
// Construction, verification and JSON serialisation of the training graph.
// The JSON reader never trusts its input: every field is type- and
// range-checked and the rebuilt graph goes through verify(), so that a bad file
// is an error message, never a crash in a solver.
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/TrainingGraph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

using namespace remat;

llvm::StringRef remat::phaseName(Phase phase) {
  return phase == Phase::Forward ? "forward" : "backward";
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

ValueId TrainingGraph::addFixedValue(std::string name, uint64_t bytes) {
  GraphValue value;
  value.name = std::move(name);
  value.bytes = bytes;
  value.producer = -1;
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

NodeId TrainingGraph::addNode(std::string name, std::string opName, double cost,
                              Phase phase, std::vector<ValueId> inputs) {
  NodeId id = static_cast<NodeId>(nodes.size());
  Node node;
  node.name = std::move(name);
  node.opName = std::move(opName);
  node.cost = cost;
  node.phase = phase;
  // An op may read the same buffer twice (x * x); the graph needs the read
  // once. Keep the first occurrence so that the operand order survives.
  for (ValueId input : inputs)
    if (!llvm::is_contained(node.inputs, input))
      node.inputs.push_back(input);
  // The new node has the largest id so far, so appending keeps users sorted.
  // Out-of-range ids are kept in `inputs` for verify() to report.
  for (ValueId input : node.inputs)
    if (input >= 0 && static_cast<size_t>(input) < values.size())
      values[input].users.push_back(id);
  nodes.push_back(std::move(node));
  return id;
}

ValueId TrainingGraph::addOutput(NodeId node, std::string name,
                                 uint64_t bytes) {
  GraphValue value;
  value.name = std::move(name);
  value.bytes = bytes;
  value.producer = node;
  values.push_back(std::move(value));
  ValueId id = static_cast<ValueId>(values.size() - 1);
  if (node >= 0 && static_cast<size_t>(node) < nodes.size())
    nodes[node].outputs.push_back(id);
  return id;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

uint64_t TrainingGraph::fixedBytes() const {
  uint64_t total = 0;
  for (const GraphValue &value : values)
    if (value.isFixed())
      total += value.bytes;
  return total;
}

std::vector<ValueId> TrainingGraph::savedActivations() const {
  std::vector<ValueId> saved;
  for (ValueId id = 0, e = static_cast<ValueId>(values.size()); id < e; ++id) {
    const GraphValue &value = values[id];
    if (value.isFixed() || nodes[value.producer].phase != Phase::Forward)
      continue;
    if (llvm::any_of(value.users, [&](NodeId user) {
          return nodes[user].phase == Phase::Backward;
        }))
      saved.push_back(id);
  }
  return saved;
}

std::vector<NodeId> TrainingGraph::forwardNodes() const {
  std::vector<NodeId> result;
  for (NodeId id = 0, e = static_cast<NodeId>(nodes.size()); id < e; ++id)
    if (nodes[id].phase == Phase::Forward)
      result.push_back(id);
  return result;
}

std::vector<NodeId> TrainingGraph::backwardNodes() const {
  std::vector<NodeId> result;
  for (NodeId id = 0, e = static_cast<NodeId>(nodes.size()); id < e; ++id)
    if (nodes[id].phase == Phase::Backward)
      result.push_back(id);
  return result;
}

double TrainingGraph::totalCost() const {
  double total = 0;
  for (const Node &node : nodes)
    total += node.cost;
  return total;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error TrainingGraph::verify() const {
  const int numNodesI = static_cast<int>(nodes.size());
  const int numValuesI = static_cast<int>(values.size());
  auto nodeRef = [&](NodeId id) {
    return "node " + std::to_string(id) + " '" + nodes[id].name + "'";
  };
  auto valueRef = [&](ValueId id) {
    return "value " + std::to_string(id) + " '" + values[id].name + "'";
  };

  // Values first: producers in range and listed by their producer, so that
  // the node checks below can rely on `producer`.
  for (ValueId v = 0; v < numValuesI; ++v) {
    const GraphValue &value = values[v];
    if (value.producer < -1 || value.producer >= numNodesI)
      return makeError(valueRef(v) + " has producer " +
                       llvm::Twine(value.producer) + " out of range");
    if (!value.isFixed() && llvm::count(nodes[value.producer].outputs, v) != 1)
      return makeError(valueRef(v) +
                       " is not listed once among the outputs "
                       "of its producer " +
                       nodeRef(value.producer));
  }

  // Byte counts: every value resident at once, plus the largest workspace,
  // bounds any peak the simulator or a solver can compute; it must fit in an
  // int64 (the JSON reports and the remat.* attributes are signed), so no
  // peak can wrap. Checked additions: the sizes themselves may be near 2^64.
  {
    uint64_t total = 0, maxWorkspace = 0;
    for (ValueId v = 0; v < numValuesI; ++v) {
      std::optional<uint64_t> sum =
          llvm::checkedAddUnsigned(total, values[v].bytes);
      if (!sum || *sum > uint64_t(INT64_MAX))
        return makeError("the values up to " + valueRef(v) +
                         " add up to more than 2^63-1 bytes; byte counts of "
                         "a training graph must fit in 63 bits");
      total = *sum;
    }
    for (const Node &node : nodes)
      maxWorkspace = std::max(maxWorkspace, node.workspaceBytes);
    std::optional<uint64_t> bound =
        llvm::checkedAddUnsigned(total, maxWorkspace);
    if (!bound || *bound > uint64_t(INT64_MAX))
      return makeError("the values (" + llvm::Twine(total) +
                       " bytes) and the largest workspace (" +
                       llvm::Twine(maxWorkspace) +
                       " bytes) add up to more than 2^63-1 bytes; byte "
                       "counts of a training graph must fit in 63 bits");
  }

  // Users lists next: node inputs are looked up in them by binary search.
  size_t numUserEntries = 0;
  for (ValueId v = 0; v < numValuesI; ++v) {
    const std::vector<NodeId> &users = values[v].users;
    for (size_t i = 0, e = users.size(); i < e; ++i) {
      if (users[i] < 0 || users[i] >= numNodesI)
        return makeError(valueRef(v) + " has user id " + llvm::Twine(users[i]) +
                         " out of range");
      if (i > 0 && users[i] <= users[i - 1])
        return makeError(valueRef(v) +
                         " has users not sorted or with duplicates");
    }
    numUserEntries += users.size();
  }

  // The last node seen reading each value, to find duplicate inputs in time
  // linear in the number of reads.
  std::vector<NodeId> lastReader(values.size(), -1);
  size_t numReads = 0;
  double costSum = 0;
  for (NodeId n = 0; n < numNodesI; ++n) {
    const Node &node = nodes[n];
    if (!std::isfinite(node.cost) || node.cost < 0)
      return makeError(nodeRef(n) + " has invalid cost " +
                       std::to_string(node.cost));
    // Every solver and the simulator add costs up: their sum must be finite
    // too, or plans would be compared on infinities.
    costSum += node.cost;
    if (!std::isfinite(costSum))
      return makeError("the node costs up to " + nodeRef(n) +
                       " sum to more than the largest finite double; the "
                       "total cost of a graph must be finite");
    for (ValueId out : node.outputs) {
      if (out < 0 || out >= numValuesI)
        return makeError(nodeRef(n) + " has output id " + llvm::Twine(out) +
                         " out of range");
      if (values[out].producer != n)
        return makeError(nodeRef(n) + " lists " + valueRef(out) +
                         " as output but its producer is " +
                         llvm::Twine(values[out].producer));
    }
    for (size_t k = 0, e = node.reuses.size(); k < e; ++k) {
      auto [in, out] = node.reuses[k];
      std::string pair = nodeRef(n) + " reuse " + std::to_string(k);
      if (!llvm::is_contained(node.inputs, in) ||
          !llvm::is_contained(node.outputs, out))
        return makeError(pair + " must pair one of its inputs with one of "
                                "its outputs");
      if (values[in].isFixed())
        return makeError(pair + " reuses the fixed " + valueRef(in) +
                         " (arguments are never written)");
      if (values[in].bytes != values[out].bytes)
        return makeError(pair + " pairs " + valueRef(in) + " and " +
                         valueRef(out) + " of different sizes");
      for (size_t j = 0; j < k; ++j)
        if (node.reuses[j].first == in || node.reuses[j].second == out)
          return makeError(pair + " repeats a value of reuse " +
                           std::to_string(j));
    }
    for (size_t i = 0, e = node.inputs.size(); i < e; ++i) {
      ValueId in = node.inputs[i];
      if (in < 0 || in >= numValuesI)
        return makeError(nodeRef(n) + " has input id " + llvm::Twine(in) +
                         " out of range");
      if (lastReader[in] == n)
        return makeError(nodeRef(n) + " reads " + valueRef(in) + " twice");
      lastReader[in] = n;
      const GraphValue &value = values[in];
      // Node ids are the program order: an input produced by the node itself
      // or a later one breaks the topological order every solver relies on.
      if (!value.isFixed() && value.producer >= n)
        return makeError(nodeRef(n) + " reads " + valueRef(in) +
                         " produced by the later " + nodeRef(value.producer) +
                         " (node ids must be a topological order)");
      if (!value.isFixed() && node.phase == Phase::Forward &&
          nodes[value.producer].phase == Phase::Backward)
        return makeError("forward " + nodeRef(n) + " reads " + valueRef(in) +
                         " produced by backward " + nodeRef(value.producer));
      if (!std::binary_search(value.users.begin(), value.users.end(), n))
        return makeError(nodeRef(n) + " reads " + valueRef(in) +
                         " but is missing from its users");
      ++numReads;
    }
  }

  // Every (node, input) pair was found in a users list, and the lists hold no
  // duplicates: equal counts make them exactly the inverse of the inputs.
  // Otherwise some entry names a node that does not read the value; finding
  // it is quadratic, but only on this error path.
  if (numUserEntries != numReads) {
    for (ValueId v = 0; v < numValuesI; ++v)
      for (NodeId user : values[v].users)
        if (!llvm::is_contained(nodes[user].inputs, v))
          return makeError(valueRef(v) + " lists user " + nodeRef(user) +
                           " which does not read it");
    return makeError("users lists are inconsistent with node inputs");
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

llvm::json::Value remat::reusesToJSON(const Node &node) {
  llvm::json::Array pairs;
  for (auto [in, out] : node.reuses)
    pairs.push_back(llvm::json::Array{in, out});
  return pairs;
}

llvm::Error remat::reusesFromJSON(const llvm::json::Value &json,
                                  int numValues, const std::string &where,
                                  Node &node) {
  const llvm::json::Array *pairs = json.getAsArray();
  if (!pairs)
    return makeError(where + ".reuses: expected an array of [input, output] "
                             "value id pairs");
  for (size_t k = 0; k < pairs->size(); ++k) {
    const llvm::json::Array *pair = (*pairs)[k].getAsArray();
    std::optional<int64_t> in, out;
    if (pair && pair->size() == 2) {
      in = (*pair)[0].getAsInteger();
      out = (*pair)[1].getAsInteger();
    }
    if (!in || !out || *in < 0 || *out < 0 || *in >= numValues ||
        *out >= numValues)
      return makeError(where + ".reuses[" + std::to_string(k) +
                       "]: expected [input, output] value ids in range [0, " +
                       std::to_string(numValues) + ")");
    node.reuses.emplace_back(static_cast<ValueId>(*in),
                             static_cast<ValueId>(*out));
  }
  return llvm::Error::success();
}

llvm::json::Value TrainingGraph::toJSON() const {
  llvm::json::Array jsonNodes;
  for (const Node &node : nodes) {
    llvm::json::Array inputs(node.inputs);
    llvm::json::Array outputs(node.outputs);
    llvm::json::Object object{
        {"name", node.name},
        {"op", node.opName},
        {"cost", node.cost},
        {"phase", phaseName(node.phase)},
        {"inputs", std::move(inputs)},
        {"outputs", std::move(outputs)},
        {"workspace", node.workspaceBytes},
    };
    if (!node.reuses.empty())
      object["reuses"] = reusesToJSON(node);
    jsonNodes.push_back(std::move(object));
  }
  llvm::json::Array jsonValues;
  for (const GraphValue &value : values)
    jsonValues.push_back(llvm::json::Object{
        {"name", value.name},
        {"bytes", value.bytes},
        {"producer", value.producer},
        {"output", value.isOutput},
    });
  return llvm::json::Object{{"nodes", std::move(jsonNodes)},
                            {"values", std::move(jsonValues)}};
}

namespace {
/// Typed field access with error messages that name the offending field
/// ("nodes[3].inputs[1]: ...").
struct FieldReader {
  const llvm::json::Object &object;
  std::string where;

  llvm::Error missing(llvm::StringRef key, llvm::StringRef what) const {
    return makeError(where + "." + key + ": expected " + what);
  }

  llvm::Error readString(llvm::StringRef key, std::string &out,
                         bool required) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return required ? missing(key, "a string") : llvm::Error::success();
    std::optional<llvm::StringRef> s = field->getAsString();
    if (!s)
      return missing(key, "a string");
    out = s->str();
    return llvm::Error::success();
  }

  llvm::Error readUInt64(llvm::StringRef key, uint64_t &out,
                         bool required) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return required ? missing(key, "a non-negative integer")
                      : llvm::Error::success();
    if (std::optional<uint64_t> u = field->getAsUINT64()) {
      out = *u;
      return llvm::Error::success();
    }
    if (std::optional<int64_t> i = field->getAsInteger(); i && *i >= 0) {
      out = static_cast<uint64_t>(*i);
      return llvm::Error::success();
    }
    return missing(key, "a non-negative integer");
  }

  llvm::Error readId(const llvm::json::Value &field, llvm::StringRef key,
                     int min, int limit, int &out) const {
    std::optional<int64_t> i = field.getAsInteger();
    if (!i)
      return missing(key, "an integer id");
    if (*i < min || *i >= limit)
      return makeError(where + "." + key + ": id " + llvm::Twine(*i) +
                       " out of range [" + llvm::Twine(min) + ", " +
                       llvm::Twine(limit) + ")");
    out = static_cast<int>(*i);
    return llvm::Error::success();
  }

  llvm::Error readIdList(llvm::StringRef key, int limit,
                         std::vector<int> &out) const {
    const llvm::json::Value *field = object.get(key);
    if (!field)
      return llvm::Error::success();
    const llvm::json::Array *array = field->getAsArray();
    if (!array)
      return missing(key, "an array of ids");
    for (size_t i = 0, e = array->size(); i < e; ++i) {
      int id;
      std::string elementKey = (key + "[" + llvm::Twine(i) + "]").str();
      if (llvm::Error err = readId((*array)[i], elementKey, 0, limit, id))
        return err;
      out.push_back(id);
    }
    return llvm::Error::success();
  }
};
} // namespace

llvm::Expected<TrainingGraph>
TrainingGraph::fromJSON(const llvm::json::Value &json) {
  const llvm::json::Object *root = json.getAsObject();
  if (!root)
    return makeError("graph: expected a JSON object with 'nodes' and 'values'");
  const llvm::json::Array *jsonNodes = root->getArray("nodes");
  const llvm::json::Array *jsonValues = root->getArray("values");
  if (!jsonNodes || !jsonValues)
    return makeError("graph: expected arrays 'nodes' and 'values'");
  if (jsonNodes->size() > static_cast<size_t>(INT32_MAX) ||
      jsonValues->size() > static_cast<size_t>(INT32_MAX))
    return makeError("graph: too many nodes or values");
  const int numNodesI = static_cast<int>(jsonNodes->size());
  const int numValuesI = static_cast<int>(jsonValues->size());

  // The members are filled directly rather than through addNode/addOutput:
  // value ids are interleaved arbitrarily with node ids in a file (an output
  // may have a smaller id than a value its producer reads), and the ids must
  // be reproduced exactly. The users lists are then derived from the inputs
  // exactly as addNode derives them, and verify() checks the rest.
  TrainingGraph graph;
  graph.values.resize(numValuesI);
  for (int v = 0; v < numValuesI; ++v) {
    const llvm::json::Object *object = (*jsonValues)[v].getAsObject();
    std::string where = "values[" + std::to_string(v) + "]";
    if (!object)
      return makeError(where + ": expected an object");
    FieldReader reader{*object, where};
    GraphValue &value = graph.values[v];
    if (llvm::Error err = reader.readString("name", value.name, false))
      return std::move(err);
    if (llvm::Error err = reader.readUInt64("bytes", value.bytes, true))
      return std::move(err);
    if (const llvm::json::Value *producer = object->get("producer")) {
      if (llvm::Error err = reader.readId(*producer, "producer", -1, numNodesI,
                                          value.producer))
        return std::move(err);
    }
    if (const llvm::json::Value *output = object->get("output")) {
      std::optional<bool> b = output->getAsBoolean();
      if (!b)
        return makeError(where + ".output: expected a boolean");
      value.isOutput = *b;
    }
  }

  graph.nodes.resize(numNodesI);
  for (int n = 0; n < numNodesI; ++n) {
    const llvm::json::Object *object = (*jsonNodes)[n].getAsObject();
    std::string where = "nodes[" + std::to_string(n) + "]";
    if (!object)
      return makeError(where + ": expected an object");
    FieldReader reader{*object, where};
    Node &node = graph.nodes[n];
    if (llvm::Error err = reader.readString("name", node.name, false))
      return std::move(err);
    if (llvm::Error err = reader.readString("op", node.opName, false))
      return std::move(err);
    if (const llvm::json::Value *cost = object->get("cost")) {
      std::optional<double> c = cost->getAsNumber();
      if (!c || !std::isfinite(*c) || *c < 0)
        return makeError(where + ".cost: expected a non-negative number");
      node.cost = *c;
    }
    std::string phase = "forward";
    if (llvm::Error err = reader.readString("phase", phase, false))
      return std::move(err);
    if (phase == "forward")
      node.phase = Phase::Forward;
    else if (phase == "backward")
      node.phase = Phase::Backward;
    else
      return makeError(where +
                       ".phase: expected \"forward\" or \"backward\", "
                       "got \"" +
                       phase + "\"");
    if (llvm::Error err = reader.readIdList("inputs", numValuesI, node.inputs))
      return std::move(err);
    if (llvm::Error err =
            reader.readIdList("outputs", numValuesI, node.outputs))
      return std::move(err);
    if (llvm::Error err =
            reader.readUInt64("workspace", node.workspaceBytes, false))
      return std::move(err);
    if (const llvm::json::Value *reuses = object->get("reuses"))
      if (llvm::Error err = reusesFromJSON(*reuses, numValuesI, where, node))
        return std::move(err);
  }

  return fromParts(std::move(graph.nodes), std::move(graph.values));
}

llvm::Expected<TrainingGraph>
TrainingGraph::fromParts(std::vector<Node> nodes,
                         std::vector<GraphValue> values) {
  if (nodes.size() > static_cast<size_t>(INT32_MAX) ||
      values.size() > static_cast<size_t>(INT32_MAX))
    return makeError("graph: too many nodes or values");
  const int numNodesI = static_cast<int>(nodes.size());
  const int numValuesI = static_cast<int>(values.size());
  auto checkIds = [&](const std::vector<ValueId> &ids, NodeId n,
                      const char *what) -> llvm::Error {
    for (ValueId id : ids)
      if (id < 0 || id >= numValuesI)
        return makeError("graph: node " + llvm::Twine(n) + " '" +
                         nodes[n].name + "' has " + what + " id " +
                         llvm::Twine(id) + " out of range [0, " +
                         llvm::Twine(numValuesI) + ")");
    return llvm::Error::success();
  };
  for (int n = 0; n < numNodesI; ++n) {
    Node &node = nodes[n];
    if (llvm::Error err = checkIds(node.inputs, n, "input"))
      return std::move(err);
    if (llvm::Error err = checkIds(node.outputs, n, "output"))
      return std::move(err);
    for (auto [in, out] : node.reuses)
      if (llvm::Error err = checkIds({in, out}, n, "reuse"))
        return std::move(err);
  }
  for (int v = 0; v < numValuesI; ++v) {
    values[v].users.clear();
    if (values[v].producer < -1 || values[v].producer >= numNodesI)
      return makeError("graph: value " + llvm::Twine(v) + " '" +
                       values[v].name + "' has producer " +
                       llvm::Twine(values[v].producer) + " out of range");
  }
  TrainingGraph graph;
  graph.nodes = std::move(nodes);
  graph.values = std::move(values);
  // Nodes are visited in increasing id order, so the users lists come out
  // sorted; duplicate inputs are left for verify() to report.
  for (int n = 0; n < numNodesI; ++n)
    for (ValueId in : graph.nodes[n].inputs) {
      std::vector<NodeId> &users = graph.values[in].users;
      if (users.empty() || users.back() != n)
        users.push_back(n);
    }

  if (llvm::Error err = graph.verify())
    return makeError("graph: " + llvm::toString(std::move(err)));
  return graph;
}
