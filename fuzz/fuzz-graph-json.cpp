//===- fuzz-graph-json.cpp - Fuzz the JSON graph readers ------------------===//
//
// Feeds the input, parsed as JSON, to every graph reader: the native format
// (TrainingGraph::fromJSON) and the node-link importer (Checkmate's,
// Moccasin's and the project's own dialects, chosen from the content). A
// reader may reject the input with an error; it must never crash. A graph
// that is accepted must pass TrainingGraph::verify, and the project's
// exports of it must read back.
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/GraphIO.h"
#include "remat/Graph/TrainingGraph.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace remat;

static void fail(const char *what, llvm::Error err) {
  std::fprintf(stderr, "fuzz-graph-json: %s: %s\n", what,
               llvm::toString(std::move(err)).c_str());
  std::abort();
}

static void checkAccepted(const char *reader,
                          llvm::Expected<TrainingGraph> graph) {
  if (!graph) {
    llvm::consumeError(graph.takeError());
    return;
  }
  if (llvm::Error err = graph->verify())
    fail(reader, std::move(err));
  // Round trips through both writers must read back.
  llvm::Expected<TrainingGraph> native = TrainingGraph::fromJSON(graph->toJSON());
  if (!native)
    fail("native round trip", native.takeError());
  llvm::Expected<TrainingGraph> nodeLink =
      importNodeLinkGraph(exportNodeLinkGraph(*graph));
  if (!nodeLink)
    fail("node-link round trip", nodeLink.takeError());
  if (native->numNodes() != graph->numNodes() ||
      nodeLink->numNodes() != graph->numNodes() ||
      native->numValues() != graph->numValues() ||
      nodeLink->numValues() != graph->numValues()) {
    std::fprintf(stderr, "fuzz-graph-json: %s: round trip changed the graph\n",
                 reader);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    llvm::consumeError(json.takeError());
    return 0;
  }
  // Every reader on every document, whatever its shape.
  checkAccepted("fromJSON", TrainingGraph::fromJSON(*json));
  checkAccepted("importNodeLinkGraph", importNodeLinkGraph(*json));
  (void)isNodeLinkGraph(*json);
  return 0;
}
