//===- MemoryPlacement.cpp - Buffers at compile-time arena offsets --------===//
//
// The offline placement problem (dynamic storage allocation): greedy
// heuristics, MiniMalloc's exact search over canonical solutions, and the
// buffers of a schedule as the simulator counts them. See MemoryPlacement.h.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/MemoryPlacement.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

using namespace remat;

// -debug-only=remat-placement: the heuristics' arenas, the exact search's
// probes (capacity, outcome, nodes) and the winner.
#define DEBUG_TYPE "remat-placement"

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static uint64_t alignUp(uint64_t value, uint64_t alignment) {
  // Alignments are powers of two (checkPlacementProblem).
  return (value + alignment - 1) & ~(alignment - 1);
}

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}
} // namespace

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
static std::vector<uint64_t>
skylineDive(const std::vector<PlacementBuffer> &buffers,
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

//===----------------------------------------------------------------------===//
// Exact search: MiniMalloc's canonical solutions
//===----------------------------------------------------------------------===//
//
// Moffitt, "MiniMalloc" (ASPLOS'23), §4: a placement can always be pushed
// down ("gravity") until every buffer rests on a conflicting buffer or on
// the floor, without raising the arena; listing such a placement by
// increasing (offset, index) gives its *canonical* sequence, in which each
// buffer sits at its minimum offset given the buffers before it (the highest
// top of the conflicting buffers placed, rounded up to its alignment). The
// search enumerates canonical sequences depth first: at each node, the
// candidates are the unplaced buffers by (minimum offset, preorder index),
// and a candidate is skipped when
//  - canonical order: its offset is below the last placed offset (or equal
//    with a smaller index): the sequence would not be sorted (§4.1);
//  - dominance: some unplaced buffer would fit entirely below it at its own
//    minimum offset (min over unplaced of offset + size <= this offset): the
//    gravity version of any completion puts that buffer first (§4.3, "check
//    dominance");
//  - after a failed candidate that overlaps no unplaced buffer ("hatless"),
//    every later candidate fails too: its position is the same in every
//    completion, so any canonical completion starts with it or an earlier
//    candidate (§4.3);
// and a partial placement is cut when a section (a stretch of time with a
// constant set of live buffers, which therefore all conflict) cannot hold
// its unplaced buffers above its floor: max(last offset, floor, least
// minimum offset of its unplaced buffers) + their sizes > capacity (§4.2:
// section inference, monotonic floor, unallocated floor). Buffers whose
// lifetimes never meet across a time cut form independent partitions (§4.4,
// the static form of the decomposition). The static preorders are the
// paper's defaults, WAT, TAW and TWA (W: lifetime, A: area, T: the largest
// section total the buffer is in), tried in turn with a node limit that
// doubles each round (§5.1).

namespace {

/// A set of buffers that meet no buffer outside it in time.
struct Partition {
  std::vector<size_t> buffers; // indices into the problem
};

std::vector<Partition>
staticPartitions(const std::vector<PlacementBuffer> &buffers) {
  std::vector<size_t> order;
  for (size_t i = 0, e = buffers.size(); i < e; ++i)
    if (!buffers[i].isEmpty())
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].begin < buffers[b].begin;
  });
  std::vector<Partition> partitions;
  int64_t reach = std::numeric_limits<int64_t>::min();
  for (size_t i : order) {
    if (partitions.empty() || buffers[i].begin >= reach)
      partitions.emplace_back();
    partitions.back().buffers.push_back(i);
    reach = std::max(reach, buffers[i].end);
  }
  return partitions;
}

enum class SubOutcome { Found, Infeasible, Aborted, Timeout };

/// The depth-first search on one partition, for one capacity and one
/// preorder. Local buffer ids are preorder positions, so the tie-break of
/// the canonical order is the local id.
class PartitionSearch {
public:
  PartitionSearch(const std::vector<PlacementBuffer> &problem,
                  const std::vector<size_t> &members, uint64_t capacity)
      : capacity(capacity) {
    const size_t m = members.size();
    // Sections: the elementary intervals between consecutive event times.
    std::vector<int64_t> times;
    for (size_t i : members) {
      times.push_back(problem[i].begin);
      times.push_back(problem[i].end);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    numSections = times.size() - 1;
    global = members;
    size.resize(m);
    align.resize(m);
    first.resize(m);
    last.resize(m);
    for (size_t k = 0; k < m; ++k) {
      const PlacementBuffer &b = problem[members[k]];
      size[k] = b.bytes;
      align[k] = b.alignment;
      first[k] = std::lower_bound(times.begin(), times.end(), b.begin) -
                 times.begin();
      last[k] = std::lower_bound(times.begin(), times.end(), b.end) -
                times.begin();
    }
    sectionTotal.assign(numSections, 0);
    for (size_t k = 0; k < m; ++k)
      for (size_t s = first[k]; s < last[k]; ++s)
        sectionTotal[s] += size[k];
    // The unallocated-floor inference reads the members of every section a
    // raised buffer spans, at each node: on densenet121's plan (3098
    // buffers) that made a node 12x slower (1.65 ms against 0.14 ms) for no
    // node saved. It only strengthens the pruning, so it runs where the
    // sections hold few members in all (small instances, where proofs of
    // infeasibility are within reach).
    uint64_t memberships = 0;
    for (size_t k = 0; k < m; ++k)
      memberships += last[k] - first[k];
    useUnallocatedFloor = memberships <= (uint64_t(1) << 16);
  }

  /// Sorts the local buffers by a preorder ("WAT", "TAW", "TWA").
  void preorder(llvm::StringRef keys) {
    const size_t m = size.size();
    std::vector<uint64_t> total(m, 0);
    for (size_t k = 0; k < m; ++k)
      for (size_t s = first[k]; s < last[k]; ++s)
        total[k] = std::max(total[k], sectionTotal[s]);
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    auto width = [&](size_t k) { return last[k] - first[k]; };
    auto area = [&](size_t k) {
      return (unsigned __int128)size[k] * (unsigned __int128)width(k);
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      for (char key : keys) {
        if (key == 'W' && width(a) != width(b))
          return width(a) > width(b);
        if (key == 'A' && area(a) != area(b))
          return area(a) > area(b);
        if (key == 'T' && total[a] != total[b])
          return total[a] > total[b];
      }
      return false;
    });
    auto permute = [&](auto &vector) {
      auto copy = vector;
      for (size_t k = 0; k < m; ++k)
        vector[k] = copy[order[k]];
    };
    permute(global);
    permute(size);
    permute(align);
    permute(first);
    permute(last);
    members.assign(numSections, {});
    if (useUnallocatedFloor)
      for (size_t k = 0; k < m; ++k)
        for (size_t s = first[k]; s < last[k]; ++s)
          members[s].push_back(k);
  }

  SubOutcome run(uint64_t nodeLimit, Clock::time_point deadline,
                 bool hasDeadline, uint64_t &nodes,
                 std::vector<uint64_t> &offsets);

private:
  bool overlaps(size_t a, size_t b) const {
    return first[a] < last[b] && first[b] < last[a];
  }

  uint64_t capacity;
  size_t numSections = 0;
  std::vector<size_t> global;
  std::vector<uint64_t> size, align;
  std::vector<size_t> first, last; // section range [first, last)
  std::vector<uint64_t> sectionTotal;
  std::vector<std::vector<size_t>> members;
  bool useUnallocatedFloor = true;
};

SubOutcome PartitionSearch::run(uint64_t nodeLimit, Clock::time_point deadline,
                                bool hasDeadline, uint64_t &nodes,
                                std::vector<uint64_t> &offsets) {
  const size_t m = size.size();
  constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> offset(m, kUnplaced), minOffset(m, 0);
  std::vector<uint64_t> floor(numSections, 0), total = sectionTotal;

  struct Change {
    size_t index;
    uint64_t old;
  };
  // Undo logs: minimum offsets and section floors changed by the
  // placements on the current path.
  std::vector<Change> offsetLog, floorLog;

  struct Frame {
    std::vector<size_t> order; // unplaced, by (minOffset, id)
    size_t next = 0;
    uint64_t minHeight = 0;
    uint64_t lastOffset = 0;
    size_t lastId = 0;
    bool hasLast = false;
    // The candidate placed from this frame, and where the logs stood.
    size_t placed = SIZE_MAX;
    size_t offsetMark = 0, floorMark = 0;
    bool hatless = false;
  };

  // The child's candidates: the parent's, less the buffer just placed, by
  // (minimum offset, id). Only the buffers in `raised` (whose minimum offset
  // the placement raised) move, and only later: the others keep their
  // order, so a merge with the few raised ones, sorted, replaces a full sort
  // (O(m + r log r) per node instead of O(m log m)).
  std::vector<char> isRaised(m, 0);
  std::vector<size_t> moved;
  auto byKey = [&](size_t a, size_t b) {
    return std::tie(minOffset[a], a) < std::tie(minOffset[b], b);
  };
  auto makeOrder = [&](const std::vector<size_t> &from, size_t skip,
                       const std::vector<size_t> &raised, Frame &frame) {
    for (size_t j : raised)
      isRaised[j] = 1;
    moved.assign(raised.begin(), raised.end());
    std::sort(moved.begin(), moved.end(), byKey);
    frame.order.clear();
    frame.order.reserve(from.size());
    size_t next = 0;
    for (size_t k : from) {
      if (k == skip || isRaised[k])
        continue;
      while (next < moved.size() && byKey(moved[next], k))
        frame.order.push_back(moved[next++]);
      frame.order.push_back(k);
    }
    frame.order.insert(frame.order.end(), moved.begin() + next, moved.end());
    for (size_t j : raised)
      isRaised[j] = 0;
    frame.minHeight = std::numeric_limits<uint64_t>::max();
    for (size_t k : frame.order)
      frame.minHeight = std::min(frame.minHeight, minOffset[k] + size[k]);
  };

  auto undo = [&](Frame &frame) {
    size_t k = frame.placed;
    while (floorLog.size() > frame.floorMark) {
      floor[floorLog.back().index] = floorLog.back().old;
      floorLog.pop_back();
    }
    while (offsetLog.size() > frame.offsetMark) {
      minOffset[offsetLog.back().index] = offsetLog.back().old;
      offsetLog.pop_back();
    }
    for (size_t s = first[k]; s < last[k]; ++s)
      total[s] += size[k];
    offset[k] = kUnplaced;
    frame.placed = SIZE_MAX;
  };

  // Places k at its minimum offset; false if the partial placement is cut.
  std::vector<size_t> affected;
  std::vector<uint64_t> visited(numSections, 0);
  uint64_t stamp = 0;
  auto place = [&](Frame &frame, size_t k) {
    frame.placed = k;
    frame.offsetMark = offsetLog.size();
    frame.floorMark = floorLog.size();
    const uint64_t at = minOffset[k], top = at + size[k];
    offset[k] = at;
    bool ok = top <= capacity;
    frame.hatless = true;
    affected.clear();
    for (size_t j : frame.order) {
      if (j == k || !overlaps(j, k))
        continue;
      frame.hatless = false;
      uint64_t raised = alignUp(top, align[j]);
      if (minOffset[j] >= raised)
        continue;
      offsetLog.push_back({j, minOffset[j]});
      minOffset[j] = raised;
      ok &= raised + size[j] <= capacity;
      affected.push_back(j);
    }
    for (size_t s = first[k]; s < last[k]; ++s) {
      floorLog.push_back({s, floor[s]});
      floor[s] = top;
      total[s] -= size[k];
    }
    // Unallocated floor: a section's unplaced buffers all sit at or above
    // the least of their minimum offsets. Only the sections of buffers
    // whose minimum offset rose can change; each is visited once.
    if (useUnallocatedFloor) {
      ++stamp;
      for (size_t j : affected)
        for (size_t s = first[j]; s < last[j]; ++s) {
          if (visited[s] == stamp)
            continue;
          visited[s] = stamp;
          uint64_t least = std::numeric_limits<uint64_t>::max();
          for (size_t other : members[s])
            if (offset[other] == kUnplaced)
              least = std::min(least, minOffset[other]);
          if (least != std::numeric_limits<uint64_t>::max() &&
              least > floor[s]) {
            floorLog.push_back({s, floor[s]});
            floor[s] = least;
          }
        }
    }
    if (!ok)
      return false;
    // Section inference with the monotonic floor (every later buffer goes
    // at or above `at`).
    for (size_t s = 0; s < numSections; ++s)
      if (total[s] > 0 &&
          std::max(at, floor[s]) > capacity - std::min(capacity, total[s]))
        return false;
    return true;
  };

  std::vector<Frame> stack;
  stack.emplace_back();
  {
    // Every minimum offset is 0 at the root: the ids are the order.
    std::vector<size_t> all(m);
    std::iota(all.begin(), all.end(), 0);
    makeOrder(all, SIZE_MAX, {}, stack.back());
  }
  // The root must pass the section check too (some section may hold more
  // than the capacity before anything is placed).
  for (size_t s = 0; s < numSections; ++s)
    if (total[s] > capacity)
      return SubOutcome::Infeasible;

  uint64_t localNodes = 0;
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.placed != SIZE_MAX) {
      bool hatless = frame.hatless;
      undo(frame);
      if (hatless) {
        stack.pop_back();
        continue;
      }
    }
    bool descended = false;
    while (frame.next < frame.order.size()) {
      size_t k = frame.order[frame.next++];
      uint64_t at = minOffset[k];
      // Sorted by offset: once one candidate is dominated, all later are.
      if (at >= frame.minHeight)
        break;
      if (frame.hasLast && (at < frame.lastOffset ||
                            (at == frame.lastOffset && k < frame.lastId)))
        continue;
      bool ok = place(frame, k);
      if (!ok) {
        bool hatless = frame.hatless;
        undo(frame);
        if (hatless)
          break;
        continue;
      }
      if (frame.order.size() == 1) {
        // Every buffer placed.
        for (size_t j = 0; j < m; ++j)
          offsets[global[j]] = offset[j];
        nodes += localNodes;
        return SubOutcome::Found;
      }
      if (++localNodes > nodeLimit) {
        nodes += localNodes;
        return SubOutcome::Aborted;
      }
      if (hasDeadline && Clock::now() > deadline) {
        nodes += localNodes;
        return SubOutcome::Timeout;
      }
      Frame child;
      child.lastOffset = at;
      child.lastId = k;
      child.hasLast = true;
      makeOrder(frame.order, k, affected, child);
      stack.push_back(std::move(child)); // invalidates `frame`
      descended = true;
      break;
    }
    if (!descended) {
      // Exhausted: pop; the parent undoes its placement on its next turn.
      if (stack.back().placed == SIZE_MAX)
        stack.pop_back();
    }
  }
  nodes += localNodes;
  return SubOutcome::Infeasible;
}

} // namespace

PlacementSearchOutcome
remat::searchPlacement(const std::vector<PlacementBuffer> &buffers,
                       uint64_t capacity, double seconds,
                       std::vector<uint64_t> &offsets, uint64_t *nodes,
                       const std::vector<uint64_t> *incumbent) {
  offsets.assign(buffers.size(), 0);
  uint64_t visited = 0;
  const bool hasDeadline = seconds > 0;
  // Clamped so that a huge limit cannot overflow the clock's representation.
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          hasDeadline ? std::min(seconds, 1e7) : 0));
  auto finish = [&](PlacementSearchOutcome outcome) {
    if (nodes)
      *nodes = visited;
    return outcome;
  };
  for (const Partition &partition : staticPartitions(buffers)) {
    // A partition that the incumbent already places within the capacity
    // needs no search: partitions are independent.
    if (incumbent && incumbent->size() == buffers.size()) {
      uint64_t top = 0;
      for (size_t i : partition.buffers)
        top = std::max(top, (*incumbent)[i] + buffers[i].bytes);
      if (top <= capacity) {
        for (size_t i : partition.buffers)
          offsets[i] = (*incumbent)[i];
        continue;
      }
    }
    // MiniMalloc's round robin over its preorders with a node limit that
    // doubles each round: the first preorder that finds a placement or
    // exhausts its search (a proof) decides.
    static const char *const kPreorders[] = {"WAT", "TAW", "TWA"};
    std::vector<PartitionSearch> searches;
    for (const char *keys : kPreorders) {
      searches.emplace_back(buffers, partition.buffers, capacity);
      searches.back().preorder(keys);
    }
    uint64_t limit = std::max<uint64_t>(partition.buffers.size(), 16);
    std::optional<SubOutcome> decided;
    while (!decided) {
      limit *= 2;
      for (PartitionSearch &search : searches) {
        SubOutcome outcome =
            search.run(limit, deadline, hasDeadline, visited, offsets);
        if (outcome == SubOutcome::Found || outcome == SubOutcome::Infeasible ||
            outcome == SubOutcome::Timeout) {
          decided = outcome;
          break;
        }
      }
      if (!decided && hasDeadline && Clock::now() > deadline)
        decided = SubOutcome::Timeout;
    }
    if (*decided == SubOutcome::Infeasible)
      return finish(PlacementSearchOutcome::Infeasible);
    if (*decided == SubOutcome::Timeout)
      return finish(PlacementSearchOutcome::Stopped);
  }
  return finish(PlacementSearchOutcome::Found);
}

//===----------------------------------------------------------------------===//
// The placement: heuristics, then the exact search
//===----------------------------------------------------------------------===//

double PlacementResult::fragmentation() const {
  return livePeakBytes ? double(arenaBytes) / double(livePeakBytes) - 1 : 0;
}

llvm::json::Value PlacementResult::toJSON(bool withOffsets) const {
  llvm::json::Array attemptsJSON;
  for (const PlacementAttempt &attempt : attempts)
    attemptsJSON.push_back(llvm::json::Object{
        {"method", attempt.method},
        {"arena_bytes", attempt.arenaBytes},
        {"found", attempt.found},
        {"seconds", attempt.seconds}});
  llvm::json::Object object{
      {"arena_bytes", arenaBytes},
      {"live_peak_bytes", livePeakBytes},
      {"lower_bound_bytes", lowerBoundBytes},
      {"fragmentation", fragmentation()},
      {"method", method},
      {"optimal", optimal},
      {"search_finished", searchFinished},
      {"search_nodes", searchNodes},
      {"seconds", seconds},
      {"attempts", std::move(attemptsJSON)},
  };
  if (withOffsets)
    object["offsets"] = llvm::json::Array(offsets);
  return object;
}

llvm::ArrayRef<std::pair<PlacementOrder, PlacementFit>>
remat::placementHeuristics() {
  static const std::pair<PlacementOrder, PlacementFit> heuristics[] = {
    {PlacementOrder::Size, PlacementFit::Best},
    {PlacementOrder::Conflicts, PlacementFit::Best},
    {PlacementOrder::Lifetime, PlacementFit::Best},
    {PlacementOrder::Area, PlacementFit::Best},
    {PlacementOrder::Program, PlacementFit::First},
    {PlacementOrder::Lifetime, PlacementFit::Skyline},
    {PlacementOrder::Size, PlacementFit::Skyline},
    {PlacementOrder::Area, PlacementFit::Skyline},
    {PlacementOrder::Program, PlacementFit::Skyline},
    {PlacementOrder::Breadth, PlacementFit::Skyline},
    {PlacementOrder::Breadth, PlacementFit::Best},
  };
  return heuristics;
}

PlacementResult remat::placeBuffers(const std::vector<PlacementBuffer> &buffers,
                                    const PlacementOptions &options) {
  const Clock::time_point begin = Clock::now();
  PlacementResult result;
  result.livePeakBytes = placementLivePeak(buffers);
  result.lowerBoundBytes = placementLowerBound(buffers);

  auto adopt = [&](std::vector<uint64_t> offsets, std::string method) {
    uint64_t arena = placementArena(buffers, offsets);
    if (result.method.empty() || arena < result.arenaBytes) {
      result.offsets = std::move(offsets);
      result.arenaBytes = arena;
      result.method = std::move(method);
    }
  };

  // The incumbent without heuristics: every buffer stacked on the previous
  // one, always valid.
  if (!options.heuristics) {
    std::vector<uint64_t> offsets(buffers.size(), 0);
    uint64_t top = 0;
    for (size_t i = 0, e = buffers.size(); i < e; ++i)
      if (!buffers[i].isEmpty()) {
        offsets[i] = alignUp(top, buffers[i].alignment);
        top = offsets[i] + buffers[i].bytes;
      }
    adopt(std::move(offsets), "stacked");
  } else {
    for (auto [order, fit] : placementHeuristics()) {
      Clock::time_point start = Clock::now();
      std::vector<uint64_t> offsets = placeGreedy(buffers, order, fit);
      PlacementAttempt attempt;
      attempt.method = placementMethodName(order, fit);
      attempt.arenaBytes = placementArena(buffers, offsets);
      attempt.seconds = secondsSince(start);
      result.attempts.push_back(attempt);
      LLVM_DEBUG(llvm::dbgs() << "placement: " << attempt.method << " arena "
                              << attempt.arenaBytes << " ("
                              << llvm::format("%.4f", attempt.seconds)
                              << " s)\n");
      adopt(std::move(offsets), attempt.method);
    }
  }
  if (buffers.empty())
    result.method = "empty";

  // The time limit covers the random dives and the exact search.
  const Clock::time_point start = Clock::now();
  const bool limited = options.timeLimitSeconds > 0;
  auto timeLeft = [&] {
    return !limited || secondsSince(start) < options.timeLimitSeconds;
  };

  // Random dives: skyline dives whose priorities (lifetime, area or
  // breadth, in turn) are scaled by random factors of growing spread, so
  // that each dive breaks the ties of the lowest skyline differently. The
  // dives differ most where the deterministic heuristics disagree, at the
  // fullest steps; the best of a few often closes most of the remaining gap
  // on large plans, where the exact search rarely finishes.
  if (options.heuristics && options.randomDives > 0 &&
      result.arenaBytes > result.lowerBoundBytes) {
    Clock::time_point diveStart = Clock::now();
    std::vector<uint64_t> breadth = placementBreadths(buffers);
    uint64_t state = 0x22dec0de;
    std::vector<size_t> sequence;
    std::vector<double> key(buffers.size(), 0);
    uint64_t bestDive = 0;
    bool found = false;
    for (unsigned dive = 0; dive < options.randomDives && timeLeft() &&
                            result.arenaBytes > result.lowerBoundBytes;
         ++dive) {
      static const double kSpread[] = {0.05, 0.2, 0.5, 1.0};
      double spread = kSpread[dive % 4];
      unsigned base = (dive / 4) % 3;
      sequence.clear();
      for (size_t i = 0; i < buffers.size(); ++i) {
        const PlacementBuffer &b = buffers[i];
        if (b.isEmpty())
          continue;
        sequence.push_back(i);
        double length = double(b.end - b.begin);
        double primary = base == 0   ? length
                         : base == 1 ? length * double(b.bytes)
                                     : double(breadth[i]);
        // splitmix64 (fixed seed): the same dives on every platform.
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        double unit = double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
        key[i] = primary * (1 + spread * (unit - 0.5));
      }
      std::stable_sort(sequence.begin(), sequence.end(),
                       [&](size_t a, size_t b) { return key[a] > key[b]; });
      std::vector<uint64_t> offsets = skylineDive(buffers, sequence);
      uint64_t arena = placementArena(buffers, offsets);
      if (!found || arena < bestDive)
        bestDive = arena;
      found = true;
      adopt(std::move(offsets), "skyline-random");
    }
    PlacementAttempt attempt;
    attempt.method = "skyline-random";
    attempt.found = found;
    attempt.arenaBytes = found ? bestDive : 0;
    attempt.seconds = secondsSince(diveStart);
    result.attempts.push_back(attempt);
    LLVM_DEBUG(llvm::dbgs() << "placement: random dives: best arena "
                            << bestDive << " ("
                            << llvm::format("%.4f", attempt.seconds)
                            << " s)\n");
  }

  // Binary search on the capacity between the proven lower bound and the
  // incumbent, the lower bound first (the usual answer on real plans, where
  // a placement meeting the live peak often exists). Each probe gets half
  // of the time that remains, so that a hard first probe leaves time for
  // the others. `lo` is proven (no arena below it exists); `probe` is the
  // least capacity not yet tried, above the probes that stopped unproven.
  uint64_t lo = result.lowerBoundBytes;
  if (options.exact && lo < result.arenaBytes && timeLeft()) {
    Clock::time_point searchStart = Clock::now();
    bool improved = false, first = true;
    uint64_t probe = lo;
    while (probe < result.arenaBytes) {
      double remaining = options.timeLimitSeconds - secondsSince(start);
      if (limited && remaining <= 1e-4)
        break;
      uint64_t capacity =
          first ? probe : probe + (result.arenaBytes - 1 - probe) / 2;
      first = false;
      std::vector<uint64_t> offsets;
      uint64_t nodes = 0;
      PlacementSearchOutcome outcome = searchPlacement(
          buffers, capacity, limited ? std::max(remaining / 2, 1e-3) : 0,
          offsets, &nodes, &result.offsets);
      result.searchNodes += nodes;
      LLVM_DEBUG(llvm::dbgs()
                 << "placement: exact probe at " << capacity << ": "
                 << (outcome == PlacementSearchOutcome::Found
                         ? "found"
                         : outcome == PlacementSearchOutcome::Infeasible
                               ? "infeasible"
                               : "stopped")
                 << " after " << nodes << " nodes\n");
      switch (outcome) {
      case PlacementSearchOutcome::Found:
        result.arenaBytes = placementArena(buffers, offsets);
        result.offsets = std::move(offsets);
        result.method = "exact";
        improved = true;
        probe = std::min(probe, result.arenaBytes);
        break;
      case PlacementSearchOutcome::Infeasible:
        // Infeasible at `capacity` is infeasible at every smaller one.
        lo = std::max(lo, capacity + 1);
        probe = std::max(probe, capacity + 1);
        break;
      case PlacementSearchOutcome::Stopped:
        probe = capacity + 1;
        break;
      }
    }
    result.searchFinished = lo >= result.arenaBytes;
    PlacementAttempt attempt;
    attempt.method = "exact";
    attempt.found = improved;
    attempt.arenaBytes = improved ? result.arenaBytes : 0;
    attempt.seconds = secondsSince(searchStart);
    result.attempts.push_back(attempt);
  }
  result.lowerBoundBytes = std::max(result.lowerBoundBytes,
                                    std::min(lo, result.arenaBytes));
  result.optimal = result.arenaBytes <= result.lowerBoundBytes;
  result.seconds = secondsSince(begin);
  LLVM_DEBUG(llvm::dbgs() << "placement: " << buffers.size() << " buffers, "
                          << "arena " << result.arenaBytes << " by "
                          << result.method << ", live peak "
                          << result.livePeakBytes << ", lower bound "
                          << result.lowerBoundBytes
                          << (result.optimal ? " (optimal)" : "") << ", "
                          << llvm::format("%.4f", result.seconds) << " s\n");
  return result;
}

//===----------------------------------------------------------------------===//
// The buffers of a schedule
//===----------------------------------------------------------------------===//

llvm::Expected<ScheduleBuffers>
remat::scheduleBuffers(const TrainingGraph &graph, const Schedule &schedule,
                       uint64_t alignment) {
  if (!llvm::isPowerOf2_64(alignment))
    return makeError("scheduleBuffers: alignment " + llvm::Twine(alignment) +
                     " is not a power of two");
  // The buffers follow the simulator's walk, so the plan must be one it
  // accepts (every read resident, no double allocation).
  SimulationReport report = simulate(graph, schedule);
  if (!report.valid)
    return makeError("scheduleBuffers: invalid schedule: " + report.error);

  const std::vector<std::vector<char>> inPlace =
      inPlaceUpdates(graph, schedule);
  const size_t numSteps = schedule.steps.size();
  ScheduleBuffers result;
  result.outputBuffers.resize(numSteps);
  result.workspaceBuffers.assign(numSteps, -1);
  // The buffer the live instance of each value holds; -1 when none (not
  // resident, fixed, or handed over by an in-place update).
  std::vector<int> holds(graph.numValues(), -1);
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

  auto newBuffer = [&](uint64_t bytes, int64_t begin, int64_t end) {
    result.buffers.push_back({bytes, alignment, begin, end});
    result.occupants.emplace_back();
    return static_cast<int>(result.buffers.size() - 1);
  };

  for (size_t i = 0; i < numSteps; ++i) {
    const Step &step = schedule.steps[i];
    const int64_t t = static_cast<int64_t>(i);
    if (!step.isCompute()) {
      int &buffer = holds[step.id];
      if (buffer >= 0)
        result.buffers[buffer].end = t;
      buffer = -1;
      continue;
    }
    const Node &node = graph.node(step.id);
    std::vector<int> &outs = result.outputBuffers[i];
    outs.assign(node.outputs.size(), -1);
    for (size_t k = 0, e = node.outputs.size(); k < e; ++k) {
      ValueId out = node.outputs[k];
      int buffer = -1;
      // An in-place update continues the input's buffer.
      for (size_t r = 0; r < node.reuses.size(); ++r)
        if (inPlace[i][r] && node.reuses[r].second == out &&
            holds[node.reuses[r].first] >= 0) {
          buffer = holds[node.reuses[r].first];
          holds[node.reuses[r].first] = -1;
        }
      if (buffer < 0)
        buffer = newBuffer(graph.value(out).bytes, t, kOpen);
      result.occupants[buffer].push_back({i, out});
      holds[out] = buffer;
      outs[k] = buffer;
    }
    if (node.workspaceBytes > 0) {
      int buffer = newBuffer(node.workspaceBytes, t, t + 1);
      result.occupants[buffer].push_back({i, -1});
      result.workspaceBuffers[i] = buffer;
    }
  }
  for (PlacementBuffer &buffer : result.buffers)
    if (buffer.end == kOpen)
      buffer.end = static_cast<int64_t>(numSteps);
  return result;
}

llvm::Expected<SchedulePlacement>
remat::placeSchedule(const TrainingGraph &graph, const Schedule &schedule,
                     uint64_t alignment, const PlacementOptions &options) {
  llvm::Expected<ScheduleBuffers> buffers =
      scheduleBuffers(graph, schedule, alignment);
  if (!buffers)
    return buffers.takeError();
  SchedulePlacement result;
  result.placement = placeBuffers(buffers->buffers, options);
  result.buffers = std::move(*buffers);
  return result;
}
