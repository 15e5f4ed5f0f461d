//===- fuzz-graph-json.cpp - Fuzz the JSON graph readers ------------------===//
//
// Feeds the input, parsed as JSON, to every graph reader: the native format
// (TrainingGraph::fromJSON) and the node-link importer (Checkmate's,
// Moccasin's and the project's own dialects, chosen from the content). A
// reader may reject the input with an error; it must never crash. A graph
// that is accepted must pass TrainingGraph::verify, and the project's
// exports of it must read back. The text reader (readGraph, which parses a
// node-link document one element at a time) must agree with the DOM
// readers: the same graph, or for valid JSON the same error.
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

static void mismatch(const char *what, const std::string &dom,
                     const std::string &text) {
  std::fprintf(stderr,
               "fuzz-graph-json: readGraph disagrees with the DOM readers "
               "(%s)\n  DOM:      %s\n  readGraph: %s\n",
               what, dom.c_str(), text.c_str());
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<TrainingGraph> read = readGraph(text, "input");
  // llvm::json::parse recurses once per level: too deep a text is rejected
  // by readGraph and never given to the parser.
  if (llvm::Error err = checkJSONNesting(text)) {
    llvm::consumeError(std::move(err));
    if (read)
      mismatch("accepted a text nested too deep", "", "");
    llvm::consumeError(read.takeError());
    return 0;
  }
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json) {
    llvm::consumeError(json.takeError());
    // Invalid JSON: readGraph must reject it too (its message may place a
    // malformed literal one byte apart).
    if (read)
      mismatch("accepted invalid JSON", "", "");
    llvm::consumeError(read.takeError());
    return 0;
  }
  // Every reader on every document, whatever its shape.
  checkAccepted("fromJSON", TrainingGraph::fromJSON(*json));
  checkAccepted("importNodeLinkGraph", importNodeLinkGraph(*json));
  // What remat-solve reads, the DOM way, against readGraph.
  llvm::Expected<TrainingGraph> dom = isNodeLinkGraph(*json)
                                          ? importNodeLinkGraph(*json)
                                          : TrainingGraph::fromJSON(*json);
  if (!dom || !read) {
    std::string domError = dom ? "" : llvm::toString(dom.takeError());
    std::string readError = read ? "" : llvm::toString(read.takeError());
    if (readError != (domError.empty() ? "" : "'input': " + domError))
      mismatch("error", domError, readError);
    return 0;
  }
  if (llvm::json::Value(dom->toJSON()) != llvm::json::Value(read->toJSON()))
    mismatch("graph", "", "");
  return 0;
}
