//===- PlacementHeuristics.cpp - The placement problem and greedy fits ----===//
//
// The offline placement problem (dynamic storage allocation, see
// MemoryPlacement.h): its check, conflicts, the live peak and the lower
// bound, the breadths of the sections a buffer lives in, and the check of a
// placement; then the greedy heuristics as production compilers use them
// (TFLite's arena planner, Pisarchyk & Lee 2020: best fit by decreasing
// size, by number of conflicts, by lifetime, by area or breadth; first fit
// in program order as the naive reference) and the skyline dive, one dive
// of MiniMalloc's search (ASPLOS'23, §4.1) without backtracking
// (placeGreedy, skylineDive). The exact search is in PlacementSearch.cpp,
// placeBuffers, which runs both, in MemoryPlacement.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/MemoryPlacement.h"

#include "PlacementInternal.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

using namespace remat;

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

bool remat::placementConflict(const PlacementBuffer &a,
                              const PlacementBuffer &b) {
  return !a.isEmpty() && !b.isEmpty() && a.begin < b.end && b.begin < a.end;
}

llvm::Error
remat::checkPlacementProblem(const std::vector<PlacementBuffer> &buffers) {
  // Every offset a solver produces is at most the sum of all sizes and
  // alignment paddings (stacking every buffer is always a placement); keeping
  // that sum below 2^62 means no offset + bytes computation can wrap.
  constexpr uint64_t kLimit = uint64_t(1) << 62;
  uint64_t total = 0;
  for (size_t i = 0, e = buffers.size(); i < e; ++i) {
    const PlacementBuffer &b = buffers[i];
    std::string where = "buffer " + std::to_string(i) + ": ";
    if (!llvm::isPowerOf2_64(b.alignment))
      return makeError(where + "alignment " + llvm::Twine(b.alignment) +
                       " is not a power of two");
    if (b.begin > b.end)
      return makeError(where + "lifetime [" + llvm::Twine(b.begin) + ", " +
                       llvm::Twine(b.end) + ") ends before it begins");
    if (b.bytes >= kLimit || b.alignment >= kLimit ||
        total >= kLimit - b.bytes - b.alignment)
      return makeError(where + "the sizes add up to 2^62 bytes or more");
    total += b.bytes + b.alignment;
  }
  return llvm::Error::success();
}

namespace {
/// A change of the live set at a time: ends (+0) sort before begins (+1) at
/// the same time, since lifetimes are half-open.
struct Event {
  int64_t time;
  int kind; // 0: end, 1: begin
  size_t buffer;
  bool operator<(const Event &other) const {
    return std::tie(time, kind, buffer) <
           std::tie(other.time, other.kind, other.buffer);
  }
};

std::vector<Event> sortedEvents(const std::vector<PlacementBuffer> &buffers) {
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0, e = buffers.size(); i < e; ++i) {
    if (buffers[i].isEmpty())
      continue;
    events.push_back({buffers[i].begin, 1, i});
    events.push_back({buffers[i].end, 0, i});
  }
  std::sort(events.begin(), events.end());
  return events;
}
} // namespace

uint64_t remat::placementLivePeak(const std::vector<PlacementBuffer> &buffers) {
  uint64_t live = 0, peak = 0;
  for (const Event &event : sortedEvents(buffers)) {
    if (event.kind == 1) {
      live += buffers[event.buffer].bytes;
      peak = std::max(peak, live);
    } else {
      live -= buffers[event.buffer].bytes;
    }
  }
  return peak;
}

uint64_t
remat::placementLowerBound(const std::vector<PlacementBuffer> &buffers) {
  uint64_t grain = 0;
  for (const PlacementBuffer &b : buffers)
    if (!b.isEmpty())
      grain = grain ? std::min(grain, b.alignment) : b.alignment;
  if (grain <= 1)
    return placementLivePeak(buffers);
  // Sweep the steps with the sum of rounded sizes and the multiset of the
  // roundings of the buffers alive; evaluate after each group of events of
  // one time, when the live set is the set alive at that time.
  std::vector<Event> events = sortedEvents(buffers);
  std::multiset<uint64_t> waste;
  uint64_t rounded = 0, bound = 0;
  for (size_t i = 0, e = events.size(); i < e; ++i) {
    const PlacementBuffer &b = buffers[events[i].buffer];
    uint64_t up = alignUp(b.bytes, grain);
    if (events[i].kind == 1) {
      rounded += up;
      waste.insert(up - b.bytes);
    } else {
      rounded -= up;
      waste.erase(waste.find(up - b.bytes));
    }
    bool lastOfTime = i + 1 == e || events[i + 1].time != events[i].time;
    if (lastOfTime && !waste.empty())
      bound = std::max(bound, rounded - *waste.rbegin());
  }
  return std::max(bound, placementLivePeak(buffers));
}

uint64_t remat::placementArena(const std::vector<PlacementBuffer> &buffers,
                               const std::vector<uint64_t> &offsets) {
  uint64_t arena = 0;
  for (size_t i = 0, e = buffers.size(); i < e; ++i)
    if (!buffers[i].isEmpty())
      arena = std::max(arena, offsets[i] + buffers[i].bytes);
  return arena;
}

llvm::Error remat::verifyPlacement(const std::vector<PlacementBuffer> &buffers,
                                   const std::vector<uint64_t> &offsets) {
  if (offsets.size() != buffers.size())
    return makeError("placement: " + llvm::Twine(offsets.size()) +
                     " offsets for " + llvm::Twine(buffers.size()) +
                     " buffers");
  for (size_t i = 0, e = buffers.size(); i < e; ++i)
    if (offsets[i] % buffers[i].alignment != 0)
      return makeError("placement: buffer " + llvm::Twine(i) + " at offset " +
                       llvm::Twine(offsets[i]) + " is not aligned to " +
                       llvm::Twine(buffers[i].alignment));
  // A sweep over time: each buffer is compared with the buffers alive when
  // it begins, which are all the buffers it conflicts with that began first.
  std::vector<size_t> alive;
  for (const Event &event : sortedEvents(buffers)) {
    if (event.kind == 0) {
      alive.erase(std::find(alive.begin(), alive.end(), event.buffer));
      continue;
    }
    size_t i = event.buffer;
    for (size_t j : alive)
      if (offsets[i] < offsets[j] + buffers[j].bytes &&
          offsets[j] < offsets[i] + buffers[i].bytes)
        return makeError("placement: buffers " + llvm::Twine(j) + " and " +
                         llvm::Twine(i) + " are alive at step " +
                         llvm::Twine(event.time) + " and overlap in [" +
                         llvm::Twine(std::max(offsets[i], offsets[j])) + ", " +
                         llvm::Twine(std::min(offsets[i] + buffers[i].bytes,
                                              offsets[j] + buffers[j].bytes)) +
                         ")");
    alive.push_back(i);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Greedy heuristics
//===----------------------------------------------------------------------===//

std::string remat::placementMethodName(PlacementOrder order,
                                       PlacementFit fit) {
  const char *orderName = "";
  switch (order) {
  case PlacementOrder::Size:
    orderName = "size";
    break;
  case PlacementOrder::Conflicts:
    orderName = "conflicts";
    break;
  case PlacementOrder::Lifetime:
    orderName = "lifetime";
    break;
  case PlacementOrder::Area:
    orderName = "area";
    break;
  case PlacementOrder::Program:
    orderName = "program";
    break;
  case PlacementOrder::Breadth:
    orderName = "breadth";
    break;
  }
  if (fit == PlacementFit::Skyline)
    return std::string("skyline-") + orderName;
  // The usual names: "greedy by X" is best fit (TFLite), the program-order
  // reference is first fit (what a bump allocator with reuse would do).
  if (order == PlacementOrder::Program)
    return std::string(fit == PlacementFit::First ? "first-fit-" : "best-fit-") +
           orderName;
  return std::string(fit == PlacementFit::Best ? "greedy-" : "first-fit-") +
         orderName;
}

/// For each buffer, how many others it conflicts with: all non-empty
/// buffers less those that end before it begins, less those that begin
/// after it ends (two binary searches each).
static std::vector<uint64_t>
conflictCounts(const std::vector<PlacementBuffer> &buffers) {
  std::vector<int64_t> begins, ends;
  for (const PlacementBuffer &b : buffers)
    if (!b.isEmpty()) {
      begins.push_back(b.begin);
      ends.push_back(b.end);
    }
  std::sort(begins.begin(), begins.end());
  std::sort(ends.begin(), ends.end());
  std::vector<uint64_t> counts(buffers.size(), 0);
  for (size_t i = 0, e = buffers.size(); i < e; ++i) {
    const PlacementBuffer &b = buffers[i];
    if (b.isEmpty())
      continue;
    uint64_t endedBefore =
        std::upper_bound(ends.begin(), ends.end(), b.begin) - ends.begin();
    uint64_t beginAfter =
        begins.end() - std::lower_bound(begins.begin(), begins.end(), b.end);
    counts[i] = begins.size() - endedBefore - beginAfter - 1;
  }
  return counts;
}

// The totals of the elementary intervals between event times, and a sparse
// table for the range maxima.
std::vector<uint64_t>
remat::placementBreadths(const std::vector<PlacementBuffer> &buffers) {
  std::vector<int64_t> times;
  for (const PlacementBuffer &b : buffers)
    if (!b.isEmpty()) {
      times.push_back(b.begin);
      times.push_back(b.end);
    }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto index = [&](int64_t t) {
    return std::lower_bound(times.begin(), times.end(), t) - times.begin();
  };
  const size_t sections = times.empty() ? 0 : times.size() - 1;
  std::vector<uint64_t> total(sections + 1, 0);
  // Difference array over the sections, then prefix sums.
  std::vector<int64_t> delta(sections + 1, 0);
  for (const PlacementBuffer &b : buffers)
    if (!b.isEmpty()) {
      delta[index(b.begin)] += static_cast<int64_t>(b.bytes);
      delta[index(b.end)] -= static_cast<int64_t>(b.bytes);
    }
  int64_t running = 0;
  for (size_t s = 0; s < sections; ++s) {
    running += delta[s];
    total[s] = static_cast<uint64_t>(running);
  }
  std::vector<std::vector<uint64_t>> table{total};
  for (size_t width = 1; 2 * width <= sections; width *= 2) {
    const std::vector<uint64_t> &last = table.back();
    std::vector<uint64_t> next(sections - 2 * width + 1);
    for (size_t s = 0; s < next.size(); ++s)
      next[s] = std::max(last[s], last[s + width]);
    table.push_back(std::move(next));
  }
  std::vector<uint64_t> result(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].isEmpty())
      continue;
    size_t lo = index(buffers[i].begin), hi = index(buffers[i].end);
    size_t level = 63 - __builtin_clzll(hi - lo);
    result[i] = std::max(table[level][lo], table[level][hi - (1u << level)]);
  }
  return result;
}

/// The non-empty buffers in the order a heuristic takes them.
static std::vector<size_t>
sequenceOf(const std::vector<PlacementBuffer> &buffers, PlacementOrder order) {
  const size_t n = buffers.size();
  std::vector<size_t> sequence;
  sequence.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (!buffers[i].isEmpty())
      sequence.push_back(i);
  auto length = [&](size_t i) {
    return static_cast<uint64_t>(buffers[i].end - buffers[i].begin);
  };
  // 128-bit products: bytes < 2^62, lifetimes up to 2^64.
  auto area = [&](size_t i) {
    return (unsigned __int128)buffers[i].bytes * length(i);
  };
  // Ties fall back to larger size, longer life, earlier begin, lower index:
  // deterministic on every platform (stable_sort on an index order).
  auto bySize = [&](size_t a, size_t b) {
    return std::make_tuple(buffers[a].bytes, length(a), -buffers[a].begin) >
           std::make_tuple(buffers[b].bytes, length(b), -buffers[b].begin);
  };
  switch (order) {
  case PlacementOrder::Size:
    std::stable_sort(sequence.begin(), sequence.end(), bySize);
    break;
  case PlacementOrder::Conflicts: {
    std::vector<uint64_t> counts = conflictCounts(buffers);
    std::stable_sort(sequence.begin(), sequence.end(), [&](size_t a, size_t b) {
      if (counts[a] != counts[b])
        return counts[a] > counts[b];
      return bySize(a, b);
    });
    break;
  }
  case PlacementOrder::Lifetime:
    std::stable_sort(sequence.begin(), sequence.end(), [&](size_t a, size_t b) {
      if (length(a) != length(b))
        return length(a) > length(b);
      return bySize(a, b);
    });
    break;
  case PlacementOrder::Area:
    std::stable_sort(sequence.begin(), sequence.end(), [&](size_t a, size_t b) {
      if (area(a) != area(b))
        return area(a) > area(b);
      return bySize(a, b);
    });
    break;
  case PlacementOrder::Program:
    std::stable_sort(sequence.begin(), sequence.end(), [&](size_t a, size_t b) {
      return buffers[a].begin < buffers[b].begin;
    });
    break;
  case PlacementOrder::Breadth: {
    std::vector<uint64_t> breadth = placementBreadths(buffers);
    std::stable_sort(sequence.begin(), sequence.end(), [&](size_t a, size_t b) {
      if (breadth[a] != breadth[b])
        return breadth[a] > breadth[b];
      if (area(a) != area(b))
        return area(a) > area(b);
      return bySize(a, b);
    });
    break;
  }
  }
  return sequence;
}

/// The skyline dive (PlacementFit::Skyline) with the ties broken by the
/// position in `sequence`, which lists the non-empty buffers.
std::vector<uint64_t>
remat::skylineDive(const std::vector<PlacementBuffer> &buffers,
                   const std::vector<size_t> &sequence) {
  const size_t n = buffers.size();
  std::vector<uint64_t> offsets(n, 0);
  // rank[i]: the tie-break. `lowest[i]`: the lowest offset buffer i can
  // take on top of the conflicting buffers placed so far (aligned).
  std::vector<size_t> rank(n, 0);
  for (size_t k = 0; k < sequence.size(); ++k)
    rank[sequence[k]] = k;
  std::vector<uint64_t> lowest(n, 0);
  std::vector<size_t> todo = sequence;
  while (!todo.empty()) {
    size_t pick = 0;
    for (size_t k = 1; k < todo.size(); ++k)
      if (std::tie(lowest[todo[k]], rank[todo[k]]) <
          std::tie(lowest[todo[pick]], rank[todo[pick]]))
        pick = k;
    size_t i = todo[pick];
    todo[pick] = todo.back();
    todo.pop_back();
    offsets[i] = lowest[i];
    const uint64_t top = offsets[i] + buffers[i].bytes;
    for (size_t j : todo)
      if (buffers[j].begin < buffers[i].end && buffers[i].begin < buffers[j].end)
        lowest[j] = std::max(lowest[j], alignUp(top, buffers[j].alignment));
  }
  return offsets;
}

std::vector<uint64_t>
remat::placeGreedy(const std::vector<PlacementBuffer> &buffers,
                   PlacementOrder order, PlacementFit fit) {
  const size_t n = buffers.size();
  std::vector<size_t> sequence = sequenceOf(buffers, order);
  if (fit == PlacementFit::Skyline)
    return skylineDive(buffers, sequence);

  std::vector<uint64_t> offsets(n, 0);
  // The placed buffers in increasing offset order. A buffer goes into a gap
  // between the conflicting placed buffers: walking them by offset, `cursor`
  // is the highest byte used by those seen so far, so [cursor, next offset)
  // is free of every conflicting buffer (TFLite's arena planner walks its
  // allocations the same way).
  std::vector<size_t> placed;
  placed.reserve(sequence.size());
  for (size_t i : sequence) {
    const PlacementBuffer &b = buffers[i];
    uint64_t cursor = 0;
    uint64_t bestOffset = 0, bestGap = std::numeric_limits<uint64_t>::max();
    bool chosen = false;
    for (size_t p : placed) {
      const PlacementBuffer &other = buffers[p];
      if (other.begin >= b.end || b.begin >= other.end)
        continue;
      uint64_t candidate = alignUp(cursor, b.alignment);
      if (offsets[p] >= candidate && offsets[p] - candidate >= b.bytes) {
        uint64_t gap = offsets[p] - cursor;
        if (gap < bestGap) {
          bestGap = gap;
          bestOffset = candidate;
          chosen = true;
          if (fit == PlacementFit::First)
            break;
        }
      }
      cursor = std::max(cursor, offsets[p] + other.bytes);
    }
    offsets[i] = chosen ? bestOffset : alignUp(cursor, b.alignment);
    auto at = std::upper_bound(
        placed.begin(), placed.end(), offsets[i],
        [&](uint64_t offset, size_t p) { return offset < offsets[p]; });
    placed.insert(at, i);
  }
  return offsets;
}
