//===- GraphExtraction.cpp - training step -> TrainingGraph ---------------===//
//
// The adapter of DESIGN.md §4-§5 (extractTrainingGraph), the pass that
// prepares a step so that its buffers are the graph's values
// (remat-normalize-destinations), and the test pass that prints the graph.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/GraphExtraction.h"
#include "remat/Dialect/RematDialect.h"
#include "remat/Graph/GraphIO.h"
#include "remat/Interfaces/RematCostModelOpInterface.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/ExternalModels.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace remat {
#define GEN_PASS_DEF_REMATNORMALIZEDESTINATIONSPASS
#define GEN_PASS_DEF_REMATPRINTGRAPHPASS
#define GEN_PASS_DEF_REMATINLINECALLSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

// -debug-only=remat-graph-extraction: the figures of every extracted graph.
// remat-inline-calls and remat-normalize-destinations print under their own
// pass names (DEBUG_WITH_TYPE).
#define DEBUG_TYPE "remat-graph-extraction"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Bytes one element takes in a buffer: what the LLVM lowering of memrefs
/// allocates per element (an i1 or i4 is a whole byte, an i24 four), not its
/// bit width.
static uint64_t elementStorageBytes(Type element) {
  if (auto complex = dyn_cast<ComplexType>(element))
    return 2 * elementStorageBytes(complex.getElementType());
  if (isa<IndexType>(element) || !element.isIntOrFloat())
    return 8;
  uint64_t bytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  return llvm::PowerOf2Ceil(bytes);
}

/// Bytes of a statically shaped tensor's buffer, or nothing when they do
/// not fit the graph's byte counts (more than INT64_MAX: every peak, budget
/// and report field is exact in an int64 as long as the buffers of a step
/// add up to no more than that). The element count is multiplied out with
/// checked arithmetic: ShapedType::getNumElements would wrap silently.
static std::optional<uint64_t> checkedBufferBytes(ShapedType shaped) {
  uint64_t total = elementStorageBytes(shaped.getElementType());
  for (int64_t dim : shaped.getShape()) {
    std::optional<uint64_t> product =
        llvm::checkedMulUnsigned(total, static_cast<uint64_t>(dim));
    if (!product || *product > uint64_t(INT64_MAX))
      return std::nullopt;
    total = *product;
  }
  return total;
}

uint64_t remat::bufferBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  std::optional<uint64_t> bytes = checkedBufferBytes(shaped);
  assert(bytes && "byte count not checked by extraction");
  return bytes ? *bytes : uint64_t(INT64_MAX);
}

bool remat::isTrainingStep(FunctionOpInterface func) {
  if (func.isExternal())
    return false;
  if (func->hasAttr(RematDialect::kStepAttr))
    return true;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, RematDialect::kTangentAttr))
      return true;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, RematDialect::kLossAttr))
      return true;
  WalkResult found = func.walk([](Operation *op) {
    if (op->hasAttr(RematDialect::kLossAttr) ||
        op->hasAttr(RematDialect::kSeedAttr) ||
        op->hasAttr(RematDialect::kPhaseAttr))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Views alias their source's buffer after bufferization.
static bool isTensorView(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp, tensor::BitcastOp>(op);
}

/// Every value `op` reads: operands and values its regions capture.
static SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  if (op->getNumRegions() != 0) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    values.append(captured.begin(), captured.end());
  }
  return values;
}

/// If `op`'s single result is used only as the destination of one
/// destination-style op, returns that use: `op` then writes the same buffer.
static OpOperand *singleDestinationUse(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return nullptr;
  if (!isa<tensor::EmptyOp>(op) && !isa<DestinationStyleOpInterface>(op))
    return nullptr;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  if (!dps || !dps.isDpsInit(&use))
    return nullptr;
  return &use;
}

namespace {
/// Which values of a step derive from its arguments and constants alone
/// (arguments, constants, their views, scalar arithmetic on them), as opposed
/// to buffers the step computes.
class FixedDerived {
public:
  explicit FixedDerived(Block &block) : block(block) {}

  bool isFixed(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &block;
    auto it = memo.find(value);
    if (it != memo.end())
      return it->second;
    Operation *def = value.getDefiningOp();
    bool fixed = false;
    if (isa<arith::ConstantOp>(def))
      fixed = true;
    else if (isTensorView(def))
      fixed = isFixed(def->getOperand(0));
    else if (isMemoryEffectFree(def) &&
             llvm::none_of(def->getResultTypes(),
                           [](Type t) { return isa<TensorType>(t); }))
      fixed = llvm::all_of(readValues(def),
                           [&](Value read) { return isFixed(read); });
    memo[value] = fixed;
    return fixed;
  }

  /// True if `op` reads nothing but fixed-derived values apart from its own
  /// destinations.
  bool readsOnlyFixed(Operation *op) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    for (Value read : readValues(op)) {
      bool isInit = dps && llvm::any_of(dps.getDpsInits(),
                                        [&](Value init) { return init == read; });
      if (!isInit && !isFixed(read))
        return false;
    }
    return true;
  }

private:
  Block &block;
  llvm::DenseMap<Value, bool> memo;
};
} // namespace

static LogicalResult checkType(Type type, Location loc, StringRef what) {
  if (isa<BaseMemRefType>(type))
    return emitError(loc) << what << " has memref type " << type
                          << "; a training step must be in tensor form";
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return success();
  if (!shaped.hasRank())
    return emitError(loc) << what << " has unranked type " << type
                          << "; the training graph needs statically shaped "
                             "tensors";
  if (!shaped.hasStaticShape())
    return emitError(loc) << what << " has dynamic shape " << type
                          << "; the training graph needs statically shaped "
                             "tensors";
  if (!checkedBufferBytes(shaped))
    return emitError(loc) << what << " of type " << type
                          << " takes more than 2^63-1 bytes; byte counts of "
                             "the training graph must fit in 63 bits";
  return success();
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

TrainingGraphAnalysis::TrainingGraphAnalysis(Operation *op) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  step = func && remat::isTrainingStep(func);
  if (!step)
    return;
  FailureOr<ExtractedGraph> graph = extractTrainingGraph(func);
  if (succeeded(graph))
    extracted = std::move(*graph);
}

FailureOr<const ExtractedGraph *>
remat::graphForModulePass(AnalysisManager am, Operation *passOp,
                          FunctionOpInterface func,
                          std::optional<ExtractedGraph> &storage) {
  if (func->getParentOp() == passOp && isTrainingStep(func))
    return am.getChildAnalysis<TrainingGraphAnalysis>(func).get();
  FailureOr<ExtractedGraph> graph = extractTrainingGraph(func);
  if (failed(graph))
    return failure();
  storage = std::move(*graph);
  return &*storage;
}

FailureOr<ExtractedGraph> remat::extractTrainingGraph(FunctionOpInterface func) {
  if (func.isExternal())
    return func.emitError("training step '")
           << func.getName() << "' has no body";
  if (!llvm::hasSingleElement(func.getFunctionBody()))
    return func.emitError("training step '")
           << func.getName() << "' must have exactly one block, found "
           << func.getFunctionBody().getBlocks().size();
  Block &block = func.front();
  for (BlockArgument arg : block.getArguments())
    if (failed(checkType(arg.getType(), arg.getLoc(),
                         "argument #" + std::to_string(arg.getArgNumber()))))
      return failure();
  for (Operation &op : block.without_terminator()) {
    for (Value result : op.getResults())
      if (failed(checkType(result.getType(), op.getLoc(), "result")))
        return failure();
    // The graph models one buffer per result of a top-level op. A tensor or
    // buffer made inside a region (an scf.for body's temporaries, allocated
    // once per iteration) is memory that no node accounts for: the predicted
    // peak would be below the measured one, silently. Linalg and pad bodies
    // compute scalars and pass.
    for (Region &region : op.getRegions()) {
      WalkResult nested = region.walk([&](Operation *inner) {
        for (Value result : inner->getResults()) {
          if (!isa<ShapedType>(result.getType()))
            continue;
          InFlightDiagnostic diag = inner->emitError()
                                    << "'" << inner->getName()
                                    << "' makes a " << result.getType()
                                    << " inside the region of '"
                                    << op.getName()
                                    << "': the training graph has no node "
                                       "for memory made inside a region, so "
                                       "the predicted peak would miss it; "
                                       "unroll the loop or move the op out "
                                       "of the region";
          diag.attachNote(op.getLoc()) << "region of this op";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (nested.wasInterrupted())
        return failure();
    }
    for (Value operand : op.getOperands())
      if (failed(checkType(operand.getType(), op.getLoc(), "operand")))
        return failure();
  }

  ExtractedGraph extracted;
  TrainingGraph &graph = extracted.graph;
  // The buffers of the step must add up to at most INT64_MAX bytes, so that
  // no peak the simulator or a solver computes can wrap (TrainingGraph::verify
  // checks the same for graph files).
  uint64_t stepBytes = 0;
  auto countBytes = [&](uint64_t bytes, Location loc) -> LogicalResult {
    std::optional<uint64_t> sum = llvm::checkedAddUnsigned(stepBytes, bytes);
    if (!sum || *sum > uint64_t(INT64_MAX))
      return emitError(loc) << "the buffers of training step '"
                            << func.getName()
                            << "' add up to more than 2^63-1 bytes here; byte "
                               "counts of the training graph must fit in 63 "
                               "bits";
    stepBytes = *sum;
    return success();
  };
  for (BlockArgument arg : block.getArguments()) {
    if (failed(countBytes(bufferBytes(arg.getType()), arg.getLoc())))
      return failure();
    extracted.valueOf[arg] = graph.addFixedValue(
        "arg" + std::to_string(arg.getArgNumber()), bufferBytes(arg.getType()));
  }

  // Pass 1 (reverse order): the op whose buffer each destination-chain
  // member writes, i.e. the head of its group. Only an initialisation joins
  // its user's node: an op that reads nothing the step computes (a fill, a
  // broadcast of a bias, a product of arguments). An op that reads computed
  // values (a partial sum that the next op accumulates into, a slice inserted
  // before the next one) runs where the program put it, as a node of its
  // own whose buffer the user updates in place (Node::reuses); grouped, it
  // would run at its user's place and keep its inputs alive until then.
  FixedDerived fixedDerived(block);
  llvm::DenseMap<Operation *, Operation *> chainHead;
  for (Operation &op : llvm::reverse(block.without_terminator()))
    if (OpOperand *use = singleDestinationUse(&op);
        use && fixedDerived.readsOnlyFixed(&op)) {
      Operation *user = use->getOwner();
      auto it = chainHead.find(user);
      chainHead[&op] = it == chainHead.end() ? user : it->second;
    }

  // Pass 2 (program order): nodes, views and the prelude.
  llvm::DenseMap<Operation *, NodeId> nodeOfHead;
  llvm::DenseMap<Operation *, unsigned> position;
  unsigned index = 0;
  for (Operation &op : block.without_terminator())
    position[&op] = index++;
  auto readsGraphValue = [&](Operation *op) {
    return llvm::any_of(readValues(op),
                        [&](Value v) { return extracted.valueOf.count(v); });
  };

  for (Operation &opRef : block.without_terminator()) {
    Operation *op = &opRef;
    if (chainHead.count(op))
      continue; // placed with its head
    if (isTensorView(op)) {
      Value source = op->getOperand(0);
      auto it = extracted.valueOf.find(source);
      if (it == extracted.valueOf.end()) {
        extracted.preludeOps.push_back(op); // view of a constant
        continue;
      }
      // Copied out first: inserting the view's entry may grow the map and
      // invalidate `it`.
      ValueId sourceValue = it->second;
      extracted.valueOf[op->getResult(0)] = sourceValue;
      NodeId producer = graph.value(sourceValue).producer;
      if (producer < 0)
        extracted.preludeOps.push_back(op); // view of an argument
      else
        extracted.nodeOps[producer].push_back(op);
      continue;
    }
    bool producesTensor = llvm::any_of(op->getResultTypes(), [](Type t) {
      return isa<TensorType>(t);
    });
    if (isa<arith::ConstantOp>(op) ||
        (!producesTensor && !readsGraphValue(op) && isMemoryEffectFree(op))) {
      extracted.preludeOps.push_back(op);
      continue;
    }
    // A node headed by `op`.
    std::string opName = op->getName().getStringRef().str();
    if (auto kernel = dyn_cast<KernelOp>(op))
      opName = kernel.getKernel().str();
    NodeId node = graph.addNode("", opName, 0, Phase::Forward, {});
    graph.node(node).name = "n" + std::to_string(node);
    nodeOfHead[op] = node;
    extracted.headOps.push_back(op);
    extracted.nodeOps.emplace_back();
    extracted.nodeOps.back().push_back(op);
    for (OpResult result : op->getResults()) {
      if (failed(countBytes(bufferBytes(result.getType()), op->getLoc())))
        return failure();
      extracted.valueOf[result] = graph.addOutput(
          node,
          graph.node(node).name + "." + std::to_string(result.getResultNumber()),
          bufferBytes(result.getType()));
    }
  }

  // Chain members join their head's node; their results are the buffer of
  // the head result they initialise.
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    auto it = chainHead.find(&op);
    if (it == chainHead.end())
      continue;
    NodeId node = nodeOfHead.lookup(it->second);
    extracted.nodeOps[node].push_back(&op);
    OpOperand *use = singleDestinationUse(&op);
    Value tied = cast<DestinationStyleOpInterface>(use->getOwner())
                     .getTiedOpResult(use);
    extracted.valueOf[op.getResult(0)] = extracted.valueOf.lookup(tied);
  }
  for (auto &ops : extracted.nodeOps)
    llvm::sort(ops, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });

  // Inputs and costs. Solvers and the simulator add costs up, so their sum
  // over the whole step must be finite: the op that makes it overflow is the
  // error, rather than an infinite cost that no solver can compare.
  double stepCost = 0;
  for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node) {
    std::vector<ValueId> inputs;
    double cost = 0;
    for (Operation *op : extracted.nodeOps[node]) {
      // The op's cost model (RematCostModelOpInterface; `remat.cost`
      // overrides it, an op without one costs 1).
      double opCost = getRematCost(op);
      cost += opCost;
      stepCost += opCost;
      if (!std::isfinite(stepCost)) {
        std::string text;
        llvm::raw_string_ostream(text)
            << "the costs of training step '" << func.getName()
            << "' sum to more than "
            << llvm::format("%g", std::numeric_limits<double>::max())
            << " with this op's (" << llvm::format("%g", opCost)
            << "); the total cost of a step must be finite: scale "
               "'remat.cost' down";
        return op->emitError(text);
      }
      for (Value read : readValues(op)) {
        auto it = extracted.valueOf.find(read);
        if (it == extracted.valueOf.end() ||
            graph.value(it->second).producer == node)
          continue;
        inputs.push_back(it->second);
      }
    }
    Node &n = graph.node(node);
    n.cost = cost;
    // Scratch memory the ops need while the node runs (a library call's
    // workspace, declared through the op's cost model): the ops of a node
    // run one after the other, so the largest.
    for (Operation *op : extracted.nodeOps[node])
      n.workspaceBytes =
          std::max<uint64_t>(n.workspaceBytes, getRematWorkspaceBytes(op));
    // The operands the node's ops update in place (by their cost models; the
    // destination-style inits by default) that are buffers of other nodes:
    // reused when nothing reads them afterwards (the simulator decides).
    for (Operation *op : extracted.nodeOps[node]) {
      if (isTensorView(op))
        continue;
      for (OpOperand &operand : op->getOpOperands()) {
        Value updated = getRematInPlaceResult(operand);
        if (!updated)
          continue;
        auto in = extracted.valueOf.find(operand.get());
        auto out = extracted.valueOf.find(updated);
        if (in == extracted.valueOf.end() || out == extracted.valueOf.end())
          continue;
        const GraphValue &source = graph.value(in->second);
        if (source.isFixed() || source.producer == node ||
            graph.value(out->second).producer != node ||
            source.bytes != graph.value(out->second).bytes ||
            llvm::any_of(n.reuses, [&](auto pair) {
              return pair.first == in->second || pair.second == out->second;
            }))
          continue;
        n.reuses.emplace_back(in->second, out->second);
      }
    }
    llvm::sort(inputs);
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (ValueId input : inputs) {
      n.inputs.push_back(input);
      std::vector<NodeId> &users = graph.value(input).users;
      if (users.empty() || users.back() != node)
        users.push_back(node);
    }
  }

  // Forward/backward split (DESIGN.md §4): backward ops depend on a seed.
  llvm::DenseSet<Value> seedy;
  for (BlockArgument arg : block.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), RematDialect::kTangentAttr))
      seedy.insert(arg);
  bool hasSeed = !seedy.empty();
  for (Operation &op : block.without_terminator())
    if (op.hasAttr(RematDialect::kSeedAttr)) {
      hasSeed = true;
      seedy.insert(op.getResults().begin(), op.getResults().end());
    }
  std::vector<Phase> phase(graph.numNodes(), Phase::Forward);
  Operation *terminator = block.getTerminator();
  // The loss: results marked remat.loss, else the function's result #0.
  SmallVector<Value> loss;
  for (Operation &op : block.without_terminator())
    if (op.hasAttr(RematDialect::kLossAttr))
      loss.append(op.getResults().begin(), op.getResults().end());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, RematDialect::kLossAttr))
      loss.push_back(terminator->getOperand(i));
  if (loss.empty() && terminator->getNumOperands() != 0)
    loss.push_back(terminator->getOperand(0));
  std::vector<bool> producesLoss(graph.numNodes(), false);
  for (Value v : loss) {
    auto it = extracted.valueOf.find(v);
    if (it != extracted.valueOf.end() && graph.value(it->second).producer >= 0)
      producesLoss[graph.value(it->second).producer] = true;
  }
  if (hasSeed) {
    for (Operation &op : block.without_terminator())
      if (llvm::any_of(readValues(&op), [&](Value v) { return seedy.count(v); }))
        seedy.insert(op.getResults().begin(), op.getResults().end());
    NodeId firstBackward = static_cast<NodeId>(graph.numNodes());
    for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node)
      for (Operation *op : extracted.nodeOps[node])
        if (llvm::any_of(op->getResults(),
                         [&](Value v) { return seedy.count(v); })) {
          phase[node] = Phase::Backward;
          firstBackward = std::min(firstBackward, node);
        }
    // A node that depends on no seed but that the forward part does not need
    // (it produces no loss and no forward node reads it) and that the program
    // computes among the backward ops belongs to the backward part: a
    // hand-written backward transposes activations and weights for its
    // matmuls (dW = a^T dz, dx = dz W^T), or compares a pre-activation with
    // zero, right where it needs the result. Counted as forward, such a node
    // would be computed in the forward pass by every plan and its result kept
    // until the backward, which the program never does. Reverse program order
    // sees every reader first. A node the program computes before the
    // backward begins (a pooling index, a mask kept instead of its input)
    // stays forward, where the program put it.
    for (NodeId node = static_cast<NodeId>(graph.numNodes()) - 1;
         node > firstBackward; --node) {
      if (phase[node] == Phase::Backward || producesLoss[node])
        continue;
      bool readByForward = false;
      for (ValueId out : graph.node(node).outputs)
        for (NodeId user : graph.value(out).users)
          readByForward |= phase[user] == Phase::Forward;
      if (!readByForward)
        phase[node] = Phase::Backward;
    }
  } else {
    if (loss.empty())
      return func.emitError("training step '")
             << func.getName()
             << "' has no loss and no gradient seed: mark the loss with "
                "'remat.loss', a seed with 'remat.seed' or an argument with "
                "'remat.tangent'";
    // Forward = the nodes the loss depends on.
    std::vector<bool> needed = producesLoss;
    for (NodeId node = graph.numNodes() - 1; node >= 0; --node) {
      if (!needed[node]) {
        phase[node] = Phase::Backward;
        continue;
      }
      for (ValueId input : graph.node(node).inputs)
        if (graph.value(input).producer >= 0)
          needed[graph.value(input).producer] = true;
    }
  }
  // A view joins the node of its source for placement only: its own marker
  // (a backward reader's view of a forward value) says nothing of the node.
  for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node)
    for (Operation *op : extracted.nodeOps[node])
      if (auto forced = op->getAttrOfType<StringAttr>(RematDialect::kPhaseAttr);
          forced && !isTensorView(op))
        phase[node] =
            forced.getValue() == "backward" ? Phase::Backward : Phase::Forward;

  for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node) {
    graph.node(node).phase = phase[node];
    // A call is no node: the callee's temporaries and the buffer it returns
    // (which no early free can release: only the callee knows where it comes
    // from) are memory the graph would not see. remat-inline-calls inlines
    // the calls of pure functions; a print without results may stay in the
    // backward part.
    for (Operation *op : extracted.nodeOps[node])
      if (auto call = dyn_cast<func::CallOp>(op);
          call && (phase[node] == Phase::Forward ||
                   llvm::any_of(call.getResultTypes(),
                                [](Type t) { return isa<TensorType>(t); })))
        return call.emitError("call of '@")
               << call.getCallee() << "' in training step '"
               << func.getName()
               << "' cannot be a node of the training graph (the callee's "
                  "temporaries and the buffer it returns would be memory no "
                  "node accounts for); run remat-inline-calls first (the "
                  "remat pipelines do): it inlines the calls of pure "
                  "functions and says why it cannot inline the others";
    if (phase[node] != Phase::Forward)
      continue;
    for (Operation *op : extracted.nodeOps[node]) {
      if (!isMemoryEffectFree(op))
        return op->emitError("side-effecting op in the forward part of "
                             "training step '")
               << func.getName()
               << "' cannot be recomputed; mark it 'remat.phase = "
                  "\"backward\"' or remove the effect";
    }
    for (ValueId input : graph.node(node).inputs) {
      NodeId producer = graph.value(input).producer;
      if (producer >= 0 && phase[producer] == Phase::Backward)
        return extracted.headOps[node]->emitError(
                   "forward op reads a value computed by the backward part "
                   "(")
               << extracted.headOps[producer]->getName() << " at "
               << extracted.headOps[producer]->getLoc()
               << "); check the remat.phase / remat.seed markers";
    }
  }

  for (Value returned : terminator->getOperands()) {
    auto it = extracted.valueOf.find(returned);
    if (it != extracted.valueOf.end() && !graph.value(it->second).isFixed())
      graph.markOutput(it->second);
  }
  if (llvm::Error err = graph.verify()) {
    std::string message = llvm::toString(std::move(err));
    return func.emitError("internal error: extracted training graph is "
                          "inconsistent: ")
           << message;
  }
  LLVM_DEBUG({
    size_t forward = 0;
    for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node)
      forward += graph.node(node).phase == Phase::Forward;
    llvm::dbgs() << "remat-graph-extraction @" << func.getName() << ": "
                 << graph.numNodes() << " nodes (" << forward
                 << " forward), " << graph.numValues() << " values, "
                 << graph.savedActivations().size() << " saved activations, "
                 << graph.fixedBytes() << " fixed bytes, "
                 << extracted.preludeOps.size() << " prelude ops\n";
  });
  return extracted;
}

//===----------------------------------------------------------------------===//
// remat-inline-calls
//===----------------------------------------------------------------------===//

namespace {

/// Why `call` cannot be inlined into a training step, as a predicate of its
/// callee ("is only declared: ..."), or std::nullopt if it can: the callee
/// is a func.func of the module with one block, no op with memory effects
/// (calls it makes are checked the same way), no recursion and no marker of
/// its own. `active` holds the callees being checked, for recursion.
std::optional<std::string>
whyNotInlinable(func::CallOp call, SymbolTableCollection &symbols,
                SmallVectorImpl<Operation *> &active) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee)
    return std::string("is not a func.func of the module");
  if (callee.isExternal())
    return std::string("is only declared: its effects are unknown");
  if (llvm::is_contained(active, callee.getOperation()))
    return std::string("is recursive");
  if (isTrainingStep(callee))
    return std::string("is a training step itself (it carries remat "
                       "markers)");
  if (!llvm::hasSingleElement(callee.getBody()))
    return "has " + std::to_string(callee.getBody().getBlocks().size()) +
           " blocks";
  active.push_back(callee);
  std::optional<std::string> reason;
  callee.getBody().walk([&](Operation *op) {
    if (auto nested = dyn_cast<func::CallOp>(op)) {
      if (std::optional<std::string> inner =
              whyNotInlinable(nested, symbols, active)) {
        reason = ("calls '@" + nested.getCallee() + "', which ").str() + *inner;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    // The walk visits nested ops on its own: an op with recursive effects
    // is judged by its own effects only.
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    bool free = op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                    ? !effects || effects.hasNoEffect()
                    : isMemoryEffectFree(op);
    if (free)
      return WalkResult::advance();
    std::string where;
    llvm::raw_string_ostream(where) << op->getLoc();
    reason = ("has an op with memory effects ('" +
              op->getName().getStringRef() + "' at " + where + ")")
                 .str();
    return WalkResult::interrupt();
  });
  active.pop_back();
  return reason;
}

/// Replaces `call` by a copy of its callee's ops (whyNotInlinable said it
/// can), carrying the call's markers over.
LogicalResult inlineCall(func::CallOp call, func::FuncOp callee) {
  if (call->hasAttr(RematDialect::kCostAttr))
    return call.emitError("'remat.cost' on a call of '@")
           << callee.getSymName()
           << "' cannot be honoured: calls of pure functions are inlined "
              "into the step, where the callee's ops have costs of their "
              "own; put 'remat.cost' on them";
  Block &body = callee.front();
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  // The loss or seed that the call's results are must be values the inlined
  // ops compute: the marker moves onto their defining ops.
  for (StringRef marker : {RematDialect::kLossAttr, RematDialect::kSeedAttr})
    if (call->hasAttr(marker))
      for (Value returned : terminator.getOperands())
        if (isa<BlockArgument>(returned))
          return call.emitError("'")
                 << marker << "' on a call of '@" << callee.getSymName()
                 << "' marks a value the callee does not compute (it returns "
                    "its argument #"
                 << cast<BlockArgument>(returned).getArgNumber()
                 << "); mark the op that computes it";
  OpBuilder builder(call);
  IRMapping mapping;
  mapping.map(body.getArguments(), call.getOperands());
  Attribute phase = call->getAttr(RematDialect::kPhaseAttr);
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    clone->setLoc(CallSiteLoc::get(op.getLoc(), call.getLoc()));
    if (phase)
      clone->setAttr(RematDialect::kPhaseAttr, phase);
  }
  SmallVector<Value> results;
  for (Value returned : terminator.getOperands())
    results.push_back(mapping.lookup(returned));
  for (StringRef marker : {RematDialect::kLossAttr, RematDialect::kSeedAttr})
    if (call->hasAttr(marker))
      for (Value result : results)
        result.getDefiningOp()->setAttr(marker,
                                        UnitAttr::get(call.getContext()));
  call.replaceAllUsesWith(results);
  call.erase();
  return success();
}

struct InlineCalls : public remat::impl::RematInlineCallsPassBase<InlineCalls> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    bool failedAny = false;
    for (auto step : module.getOps<func::FuncOp>()) {
      if (!isTrainingStep(step))
        continue;
      // Until nothing changes: an inlined body may bring calls of its own
      // (recursion is rejected, so this ends).
      for (bool changed = true; changed && !failedAny;) {
        changed = false;
        SmallVector<func::CallOp> calls;
        step.walk([&](func::CallOp call) { calls.push_back(call); });
        for (func::CallOp call : calls) {
          SmallVector<Operation *> active{step};
          std::optional<std::string> reason =
              whyNotInlinable(call, symbols, active);
          if (!reason) {
            auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                call, call.getCalleeAttr());
            DEBUG_WITH_TYPE("remat-inline-calls",
                            llvm::dbgs() << "remat-inline-calls: @"
                                         << callee.getSymName() << " into @"
                                         << step.getSymName() << " at "
                                         << call.getLoc() << "\n");
            if (failed(inlineCall(call, callee)))
              failedAny = true;
            else
              changed = true;
            continue;
          }
          // Left alone: a call without tensor results (a print); the
          // extraction rejects it in the forward part.
          if (llvm::none_of(call.getResultTypes(),
                            [](Type t) { return isa<TensorType>(t); }))
            continue;
          call.emitError("call of '@")
              << call.getCallee() << "' cannot be a node of the training "
              << "graph of '" << step.getSymName()
              << "': only calls of pure functions are supported (they are "
                 "inlined into the step), and '@"
              << call.getCallee() << "' " << *reason;
          failedAny = true;
        }
      }
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// remat-normalize-destinations
//===----------------------------------------------------------------------===//

namespace {

/// True if `value` is produced by a chain `tensor.empty -> (DPS op)*` whose
/// links each have exactly one use: it then is a private destination.
bool isPrivateDestination(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || !value.hasOneUse())
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  auto dps = dyn_cast<DestinationStyleOpInterface>(def);
  if (!dps || def->getNumResults() != 1)
    return false;
  return llvm::all_of(dps.getDpsInits(),
                      [](Value init) { return isPrivateDestination(init); });
}

/// True if `value` comes from a chain `tensor.empty -> (DPS op)*` (possibly
/// shared): such a chain can be cloned for each of its users.
bool isClonableChain(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  auto dps = dyn_cast<DestinationStyleOpInterface>(def);
  if (!dps || def->getNumResults() != 1 || !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(dps.getDpsInits(),
                      [](Value init) { return isClonableChain(init); });
}

Value cloneChain(OpBuilder &builder, Value value) {
  Operation *def = value.getDefiningOp();
  IRMapping mapping;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    for (Value init : dps.getDpsInits())
      mapping.map(init, cloneChain(builder, init));
  return builder.clone(*def, mapping)->getResult(0);
}

/// True if `value`, returned, is a view that bufferization gives a strided
/// layout: a proper `tensor.extract_slice` (through reshapes and casts).
/// One-shot bufferization returns identity-layout buffers only, so it copies
/// such a view into a buffer of its own at the return - an allocation no op
/// of the step made, which the training graph would not see.
bool isStridedViewAtReturn(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(
            def)) {
      value = def->getOperand(0);
      continue;
    }
    auto slice = dyn_cast<tensor::ExtractSliceOp>(def);
    if (!slice)
      return false;
    auto isZero = [](OpFoldResult r) { return isConstantIntValue(r, 0); };
    auto isOne = [](OpFoldResult r) { return isConstantIntValue(r, 1); };
    bool whole = slice.getSourceType() == slice.getResultType() &&
                 llvm::all_of(slice.getMixedOffsets(), isZero) &&
                 llvm::all_of(slice.getMixedStrides(), isOne);
    return !whole;
  }
  return false;
}

struct NormalizeDestinations
    : public remat::impl::RematNormalizeDestinationsPassBase<
          NormalizeDestinations> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (!isTrainingStep(func) || !llvm::hasSingleElement(func.getFunctionBody()))
      return;
    SmallVector<DestinationStyleOpInterface> ops;
    for (Operation &op : func.front())
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(&op))
        if (dps.hasPureTensorSemantics())
          ops.push_back(dps);
    // Program order: an op's own destination is private before it becomes
    // another op's destination.
    for (DestinationStyleOpInterface dps : ops) {
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        Value value = init.get();
        if (isPrivateDestination(value))
          continue;
        OpBuilder builder(dps);
        auto type = cast<RankedTensorType>(value.getType());
        auto linalgOp = dyn_cast<linalg::LinalgOp>(dps.getOperation());
        bool readsInit =
            !linalgOp || linalgOp.payloadUsesValueFromOperand(&init);
        DEBUG_WITH_TYPE("remat-normalize-destinations",
                        llvm::dbgs()
                            << "remat-normalize-destinations: "
                            << dps->getName() << " at " << dps.getLoc()
                            << ": shared destination replaced by "
                            << (!readsInit ? "tensor.empty (not read)"
                                : isClonableChain(value)
                                    ? "a clone of its init chain"
                                    : "a linalg.copy of it")
                            << "\n");
        if (!readsInit) {
          init.set(tensor::EmptyOp::create(builder, dps.getLoc(),
                                           type.getShape(),
                                           type.getElementType()));
        } else if (isClonableChain(value)) {
          init.set(cloneChain(builder, value));
        } else {
          Value empty = tensor::EmptyOp::create(
              builder, dps.getLoc(), type.getShape(), type.getElementType());
          init.set(linalg::CopyOp::create(builder, dps.getLoc(), value, empty)
                       ->getResult(0));
        }
      }
    }
    // A returned strided view is copied into a buffer of its own here, as a
    // node of the graph, rather than by bufferization at the return.
    Operation *terminator = func.front().getTerminator();
    for (OpOperand &result : terminator->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(result.get().getType());
      if (!type || !isStridedViewAtReturn(result.get()))
        continue;
      OpBuilder builder(terminator);
      Location loc = result.get().getLoc();
      Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType());
      DEBUG_WITH_TYPE("remat-normalize-destinations",
                      llvm::dbgs() << "remat-normalize-destinations: result #"
                                   << result.getOperandNumber()
                                   << " is a strided view: copied\n");
      result.set(linalg::CopyOp::create(builder, loc, result.get(), empty)
                     ->getResult(0));
    }
    // Shared or now unused chains left behind. The block's own reverse
    // iterators stay valid when the current op is erased (a std::reverse_iterator
    // over without_terminator() would point at the erased op).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(func.front())))
      if (op.getNumResults() == 1 && op.use_empty() &&
          isMemoryEffectFree(&op) &&
          (isa<tensor::EmptyOp>(op) || (isa<DestinationStyleOpInterface>(op) &&
                                        isClonableChain(op.getResult(0)))))
        op.erase();
  }
};

//===----------------------------------------------------------------------===//
// remat-print-graph
//===----------------------------------------------------------------------===//

struct RematPrintGraph
    : public remat::impl::RematPrintGraphPassBase<RematPrintGraph> {
  using Base::Base;

  // The cost models of the upstream ops, also in a stock mlir-opt that
  // loaded only the pass plugin.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerRematExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "node-link" && format != "native") {
      module.emitError("remat-print-graph: unknown format '")
          << format << "' (expected 'node-link' or 'native')";
      return signalPassFailure();
    }
    func::FuncOp step;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!function.empty() ? func.getName() != function
                            : !isTrainingStep(func))
        continue;
      if (step) {
        module.emitError("remat-print-graph: several training steps ('")
            << step.getSymName() << "', '" << func.getName()
            << "'): choose one with function=<name>";
        return signalPassFailure();
      }
      step = func;
    }
    if (!step) {
      module.emitError("remat-print-graph: ")
          << (function.empty() ? std::string("no training step in the module")
                               : "no function '" + function + "'");
      return signalPassFailure();
    }
    // Printing changes nothing: every analysis stays valid.
    markAllAnalysesPreserved();
    std::optional<ExtractedGraph> storage;
    FailureOr<const ExtractedGraph *> extracted =
        graphForModulePass(getAnalysisManager(), module, step, storage);
    if (failed(extracted))
      return signalPassFailure();
    const TrainingGraph &graph = (*extracted)->graph;
    llvm::json::Value json = format == "native" ? graph.toJSON()
                                                : exportNodeLinkGraph(graph);
    llvm::outs() << llvm::formatv("{0:2}\n", json);
  }
};

} // namespace
