//===- Schedule.cpp - Compute/Free schedules ------------------------------===//
//
// Schedule serialisation and the two schedule builders every solver shares:
// early-free placement (the placement the compiled program gets from the
// early-free pass, so that the simulator predicts what the program does) and
// the execution plan for a set of checkpointed nodes (Checkmate seeds/003
// §4.4 and appendix B: given the checkpoints S, recompute the least set R).
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/Schedule.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>

using namespace remat;

// -debug-only=remat-schedule: the execution plan of each checkpoint set
// (what runs in the forward pass, what the backward recomputes).
#define DEBUG_TYPE "remat-schedule"

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Schedule
//===----------------------------------------------------------------------===//

size_t Schedule::numRecomputations(const TrainingGraph &graph) const {
  std::vector<char> computed(graph.numNodes(), 0);
  size_t count = 0;
  for (const Step &step : steps) {
    // Out-of-range ids are the simulator's to report, not ours.
    if (!step.isCompute() || step.id < 0 ||
        static_cast<size_t>(step.id) >= computed.size())
      continue;
    if (computed[step.id])
      ++count;
    computed[step.id] = 1;
  }
  return count;
}

llvm::json::Value Schedule::toJSON() const {
  llvm::json::Array array;
  array.reserve(steps.size());
  for (const Step &step : steps)
    array.push_back(
        llvm::json::Object{{step.isCompute() ? "compute" : "free", step.id}});
  return array;
}

llvm::Expected<Schedule> Schedule::fromJSON(const llvm::json::Value &json) {
  // The bare array is what toJSON writes; {"steps": [...]} is accepted too so
  // that a schedule can be cut out of a report or a larger document.
  const llvm::json::Array *array = json.getAsArray();
  if (!array)
    if (const llvm::json::Object *object = json.getAsObject())
      array = object->getArray("steps");
  if (!array)
    return makeError("schedule: expected an array of steps or an object with "
                     "a 'steps' array");

  Schedule schedule;
  schedule.steps.reserve(array->size());
  for (size_t i = 0, e = array->size(); i < e; ++i) {
    std::string where = "schedule step " + std::to_string(i);
    const llvm::json::Object *object = (*array)[i].getAsObject();
    if (!object || object->size() != 1)
      return makeError(where + ": expected {\"compute\": node} or "
                               "{\"free\": value}");
    const llvm::json::Value *compute = object->get("compute");
    const llvm::json::Value *free = object->get("free");
    if (!compute && !free)
      return makeError(where + ": unknown statement '" +
                       object->begin()->first.str() +
                       "' (expected 'compute' or 'free')");
    std::optional<int64_t> id = (compute ? compute : free)->getAsInteger();
    if (!id || *id < 0 || *id > INT32_MAX)
      return makeError(where + ": expected a non-negative integer id");
    int intId = static_cast<int>(*id);
    schedule.steps.push_back(compute ? Step::compute(intId)
                                     : Step::free(intId));
  }
  return schedule;
}

//===----------------------------------------------------------------------===//
// Early frees
//===----------------------------------------------------------------------===//

Schedule remat::insertEarlyFrees(const TrainingGraph &graph,
                                 const std::vector<NodeId> &computeOrder) {
  const size_t numValues = graph.numValues();
  const size_t numSteps = computeOrder.size();
  // An instance of a value lives from a Compute of its producer to the next
  // Compute of the same producer. While one is open, `start` holds the
  // position of that Compute and `lastUse` the last position that read it.
  std::vector<long> start(numValues, -1), lastUse(numValues, -1);
  // Values to free after each position. One flat list sorted once at the end
  // keeps this O(steps + reads) up to the sort of the frees.
  std::vector<std::pair<size_t, ValueId>> frees;

  auto close = [&](ValueId v) {
    if (start[v] >= 0)
      frees.emplace_back(static_cast<size_t>(lastUse[v]), v);
    start[v] = lastUse[v] = -1;
  };
  // Fixed values are never freed and step outputs must survive to the end.
  auto freeable = [&](ValueId v) {
    const GraphValue &value = graph.value(v);
    return !value.isFixed() && !value.isOutput;
  };

  for (size_t pos = 0; pos < numSteps; ++pos) {
    const Node &node = graph.node(computeOrder[pos]);
    for (ValueId in : node.inputs)
      if (start[in] >= 0)
        lastUse[in] = static_cast<long>(pos);
    for (ValueId out : node.outputs) {
      if (!freeable(out))
        continue;
      // The previous instance ends here: this Compute overwrites it.
      close(out);
      start[out] = lastUse[out] = static_cast<long>(pos);
    }
  }
  for (ValueId v = 0; v < static_cast<ValueId>(numValues); ++v)
    close(v);

  // Position-major, then increasing ValueId among the values freed after the
  // same Compute, as documented.
  std::sort(frees.begin(), frees.end());
  Schedule schedule;
  schedule.steps.reserve(numSteps + frees.size());
  size_t next = 0;
  for (size_t pos = 0; pos < numSteps; ++pos) {
    schedule.steps.push_back(Step::compute(computeOrder[pos]));
    for (; next < frees.size() && frees[next].first == pos; ++next)
      schedule.steps.push_back(Step::free(frees[next].second));
  }
  return schedule;
}

//===----------------------------------------------------------------------===//
// Execution plan for a set of checkpoints
//===----------------------------------------------------------------------===//

Schedule remat::scheduleFromCheckpoints(const TrainingGraph &graph,
                                        const std::vector<bool> &checkpointed) {
  const size_t numNodes = graph.numNodes();
  const std::vector<NodeId> forward = graph.forwardNodes();

  // A node that produces a step output is treated as checkpointed whatever the
  // mask says: the output is never freed, so the node could not be computed
  // again (the simulator forbids computing a node whose output is resident).
  std::vector<char> isCheckpoint(numNodes, 0);
  for (NodeId n : forward) {
    bool producesOutput = false;
    for (ValueId out : graph.node(n).outputs)
      producesOutput |= graph.value(out).isOutput;
    isCheckpoint[n] =
        producesOutput ||
        (static_cast<size_t>(n) < checkpointed.size() && checkpointed[n]);
  }

  // Which forward nodes run in the forward pass, decided from the last one
  // backwards since every reader of a node has a larger id. A non-checkpointed
  // node is skipped when no node running in the forward pass reads it and
  // something will demand it later: a backward node, or a skipped forward node
  // (which a backward node demands in turn). The backward phase then computes
  // it for the first time, which is not a recomputation. A node nothing reads
  // at all is run in the forward pass, because no later demand would ever
  // compute it and every node must be computed once.
  std::vector<char> runsForward(numNodes, 0);
  for (auto it = forward.rbegin(), e = forward.rend(); it != e; ++it) {
    NodeId n = *it;
    if (isCheckpoint[n]) {
      runsForward[n] = 1;
      continue;
    }
    bool readByRunning = false, demandedLater = false;
    for (ValueId out : graph.node(n).outputs)
      for (NodeId user : graph.value(out).users) {
        if (graph.node(user).phase == Phase::Backward || !runsForward[user])
          demandedLater = true;
        else
          readByRunning = true;
      }
    runsForward[n] = readByRunning || !demandedLater;
  }

  std::vector<NodeId> order;
  order.reserve(numNodes);
  for (NodeId n : forward)
    if (runsForward[n])
      order.push_back(n);

  // What the backward phase finds resident: the outputs of checkpointed nodes
  // (kept from the forward pass until their last backward use) and fixed
  // values. Everything else of the forward pass was freed after its last
  // forward use and has to be recomputed on demand.
  std::vector<char> available(graph.numValues(), 0);
  for (ValueId v = 0, e = static_cast<ValueId>(graph.numValues()); v < e; ++v) {
    const GraphValue &value = graph.value(v);
    available[v] = value.isFixed() || isCheckpoint[value.producer];
  }

  // ensure(v) with an explicit stack (the recursion would be as deep as the
  // forward chain): post-order over the producers of non-available inputs.
  // Once computed, a node's outputs are available for the rest of the backward
  // phase, so each forward node is computed at most once here, and a node on
  // the stack is never pushed again (that would be a cycle).
  struct Frame {
    NodeId node;
    size_t nextInput;
  };
  std::vector<Frame> stack;
  auto compute = [&](NodeId n) {
    order.push_back(n);
    for (ValueId out : graph.node(n).outputs)
      available[out] = 1;
  };
  auto ensureInputsAndCompute = [&](NodeId root) {
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame &frame = stack.back();
      const std::vector<ValueId> &inputs = graph.node(frame.node).inputs;
      while (frame.nextInput < inputs.size() &&
             available[inputs[frame.nextInput]])
        ++frame.nextInput;
      if (frame.nextInput < inputs.size()) {
        NodeId producer = graph.value(inputs[frame.nextInput]).producer;
        stack.push_back({producer, 0}); // invalidates `frame`
        continue;
      }
      NodeId done = frame.node;
      stack.pop_back();
      compute(done);
    }
  };
  [[maybe_unused]] size_t forwardRuns = order.size();
  for (NodeId n : graph.backwardNodes())
    ensureInputsAndCompute(n);
  LLVM_DEBUG({
    size_t checkpoints = 0;
    for (NodeId n : forward)
      checkpoints += isCheckpoint[n];
    size_t backwardNodes = graph.backwardNodes().size();
    llvm::dbgs() << "schedule: " << checkpoints << " of " << forward.size()
                 << " forward nodes checkpointed: " << forwardRuns
                 << " run in the forward pass, "
                 << order.size() - forwardRuns - backwardNodes
                 << " forward computations in the backward pass\n";
  });

  return insertEarlyFrees(graph, order);
}
