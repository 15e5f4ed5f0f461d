//===- PlacementSearch.cpp - MiniMalloc's exact search --------------------===//
//
// The exact search for a placement within a capacity (searchPlacement):
// MiniMalloc's depth-first search over canonical solutions (M. D. Moffitt,
// "MiniMalloc: A Lightweight Memory Allocator for Hardware-Accelerated
// Machine Learning", ASPLOS 2023, §4-§5; the comment below maps each rule to
// its section), on the independent partitions of the problem. The problem
// and the greedy heuristics are in PlacementHeuristics.cpp; placeBuffers,
// which probes capacities with this search, in MemoryPlacement.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/MemoryPlacement.h"

#include "PlacementInternal.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>

using namespace remat;

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
