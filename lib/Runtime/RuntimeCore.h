//===- RuntimeCore.h - What the CPU and CUDA runtimes share -----*- C++ -*-===//
//
// The one copy of the runtimes' bookkeeping, compiled into both
// (lib/Runtime/CMakeLists.txt, the object library RematRuntimeCore):
//
// * `Counters`: the exact size of every live pointer, the live and peak
//   bytes, the measurement window (`remat_rt_step_begin` / `_end`) and the
//   peak inside it, the window's wall time, the announced prediction, the
//   REMAT_RT_TRACE trace and the `remat-runtime:` exit report.
// * The `remat_rt_*` functions of CpuRuntime.h (window, readers, reset,
//   printing of results), defined once in RuntimeCore.cpp on these counters.
//
// What differs between the runtimes is three functions below (`fatal`,
// `beforeStepEdge`, `hostElements`) that the core declares and each runtime
// defines: the core is linked into exactly one runtime at a time.
//
// Private to lib/Runtime and plain C++ (no MLIR, no LLVM: the CPU runtime
// is loaded into mlir-runner, which has its own copy). Everything here has
// hidden visibility: the libraries export the C functions of CpuRuntime.h
// and CudaRuntime.h, not this.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_RUNTIME_RUNTIMECORE_H
#define REMAT_LIB_RUNTIME_RUNTIMECORE_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#pragma GCC visibility push(hidden)

namespace remat::rt {

/// The memory the process holds as the OS (or the driver) sees it, bytes:
/// `current` now, `peak` the high-water mark so far (-1: unknown).
struct ResidentMemory {
  int64_t current = -1;
  int64_t peak = -1;
};

/// Live and peak bytes of one allocator, and the step window. Every member
/// function takes the mutex; the counters are exact, never sampled.
class Counters {
public:
  Counters();

  /// Counts `size` bytes at `ptr`. False, and nothing counted, when `ptr` is
  /// already live (the caller reports it).
  bool recordAlloc(void *ptr, size_t size);
  /// Uncounts `ptr`. False when `ptr` is not live (double free, or a free of
  /// a view or a global; the caller reports it).
  bool recordFree(void *ptr);

  /// Opens the window: its base is the live bytes now but the arenas' (the
  /// inputs, which the simulator counts as fixed memory; an arena is its
  /// step's memory, in every window that uses it). A nested begin keeps the
  /// outer window. `resident` is the process's memory as the OS sees it now.
  /// A window with a `tag` (0 and up: which of several steps it measures)
  /// also counts toward that tag's own peak and window count.
  void stepBegin(ResidentMemory resident, int64_t tag = -1);
  /// Closes the window, keeping the worst step peak of all windows, the
  /// window's wall time and its growth of resident memory; warns on stderr
  /// when none is open.
  void stepEnd(ResidentMemory resident);

  /// The arena of step `key` (remat_rt_arena) is now `bytes` (allocated or
  /// grown): counted live from now on. A window counts, as its step's
  /// memory, the arenas it uses (asks for) whenever they were allocated.
  void useArena(int64_t key, int64_t bytes);

  /// The counters at one instant (the readers of CpuRuntime.h).
  struct Figures {
    int64_t liveBytes;
    int64_t totalPeakBytes;
    /// The largest peak of any closed or open window; the total peak if
    /// none began.
    int64_t stepPeakBytes;
    int64_t allocations;
    /// Wall time of the last closed window in nanoseconds, -1 if none
    /// closed.
    int64_t stepTimeNs;
    /// The arena's bytes (0 without one).
    int64_t arenaBytes;
    /// The largest growth of resident memory over a window, -1 if unknown.
    int64_t residentGrowth;
  };
  Figures figures();
  /// Forgets every counter and live pointer (the pointers are not freed:
  /// the caller may still hold them) and the window; keeps the prediction.
  void reset();

  /// Per-op timers (remat-instrument-op-timers): with `hostClock`, the wall
  /// time between `opBegin(id)` and `opEnd(id)` is added to op `id`'s time
  /// in the open window; without, the runtime timed the op itself and hands
  /// its time to `addOpTime` before the window closes. Each closed window
  /// keeps its own totals.
  void opBegin(int64_t id, bool hostClock);
  void opEnd(int64_t id);
  /// Adds `ns` to op `id`'s time in the open window (nothing outside one).
  void addOpTime(int64_t id, int64_t ns);
  /// The op being timed now, -1 outside a timer.
  int64_t timedOpId();

  /// The simulator's figures, printed by `printReport` (-1: unknown).
  void setPrediction(int64_t predictedPeakBytes, int64_t fixedBytes);

  /// The exit report on stdout:
  ///   remat-runtime: step_peak_bytes=N total_peak_bytes=M
  ///     live_bytes_at_exit=K allocations=A[ step_time_ns=T]
  ///     [ window_times_ns=T1,T2,...]
  /// (the wall time of every closed window, in order); then, per tag of a
  /// tagged window, in tag order,
  ///   remat-runtime-step: tag=K step_peak_bytes=N windows=W
  /// and, when ops were timed, one line per op before them:
  ///   remat-profile: op=<id> ns=<median over the windows after the first,
  ///   or the only window's>
  /// and, after `setPrediction`,
  ///   remat-run: fixed_bytes=F total_peak_bytes=M
  ///   remat-run: measured_peak_bytes=N predicted_peak_bytes=P
  void printReport(bool withStepTime);

private:
  Figures figuresLocked() const;

  std::mutex mutex;
  std::unordered_map<void *, size_t> liveSizes;
  int64_t liveTotal = 0;
  int64_t totalPeak = 0;
  int64_t allocationCount = 0;
  // The window: live bytes when it began, the largest live bytes inside it,
  // and the largest step peak of all closed windows (a program may run
  // several steps; the report keeps the worst).
  bool everBegan = false;
  bool inStep = false;
  int64_t stepBase = 0;
  int64_t stepMax = 0;
  int64_t bestStepPeak = 0;
  std::chrono::steady_clock::time_point stepStart;
  // The open window's tag (-1: none), and per tag its worst step peak and
  // number of windows: a program that runs several steps (a module's own
  // main) gets each step measured apart.
  int64_t currentTag = -1;
  struct TagFigures {
    int64_t stepPeak = 0;
    int64_t windows = 0;
  };
  std::map<int64_t, TagFigures> tags;
  int64_t lastStepNs = -1;
  // The wall time of every closed window, in order (remat-run --repeat
  // takes their median after the first).
  std::vector<int64_t> windowNs;
  // Per-op timers: the op being timed and since when, the open window's
  // totals by op, and every closed window's.
  int64_t arenaBytes = 0; // all arenas
  std::unordered_map<int64_t, int64_t> arenas;
  // The arenas the open window used, and the bytes of those it has not
  // (held, but not the window's step memory).
  std::unordered_map<int64_t, bool> windowArenas;
  int64_t windowUnusedArenas = 0;
  ResidentMemory windowResident;
  int64_t residentGrowth = -1;
  int64_t timedOp = -1;
  bool timedOnHost = true;
  std::chrono::steady_clock::time_point opStart;
  std::unordered_map<int64_t, int64_t> windowOpNs;
  std::vector<std::unordered_map<int64_t, int64_t>> closedOpNs;
  bool hasPrediction = false;
  int64_t predicted = -1;
  int64_t fixed = -1;
  // REMAT_RT_TRACE set: every allocation and free on stderr, with the live
  // bytes after it (relative to the window's base while one is open).
  bool trace;
};

/// The process's counters. Allocated once and never destroyed, so that
/// allocations made by other static destructors at exit (and the exit
/// report itself) never touch a destroyed map.
Counters &counters();

/// "0x..." as printf's %p writes it, for error messages.
std::string pointerText(const void *ptr);

/// The head of a ranked memref descriptor
///   { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
///     int64_t strides[rank]; }
/// (the same for every T).
struct DescriptorHead {
  char *allocated;
  char *aligned;
  int64_t offset;
};
inline const int64_t *descriptorSizes(const void *descriptor) {
  return reinterpret_cast<const int64_t *>(
      static_cast<const DescriptorHead *>(descriptor) + 1);
}

//===----------------------------------------------------------------------===//
// Defined by each runtime.
//===----------------------------------------------------------------------===//

/// Prints `<runtime>: error: <message>` on stderr (after flushing stdout)
/// and ends the program: the CPU runtime aborts, the CUDA runtime exits 1
/// without its exit report.
[[noreturn]] void fatal(const std::string &message);

/// Called before a window opens or closes, without the counters' lock: the
/// CUDA runtime synchronizes the device, so that the window's time and bytes
/// are the step's; nothing on the CPU.
void beforeStepEdge();

/// REMAT_LIB_TRACE set: one line on stderr per library call site,
///   remat-library: op=<id> <call>
/// where <id> is the op being timed (remat-run --profile-costs) or -1, and
/// <call> says what ran (the descriptor, the algorithm, the workspace).
/// Said once per (op, call): a profile's op ids then name the library calls
/// they timed.
void traceLibraryCall(const std::string &call);

/// At the edges of a timed op (`remat_rt_op_begin` / `_end`, before the
/// counters hear of it, without their lock). True: the runtime times the op
/// itself and calls `Counters::addOpTime` before the window closes (the CUDA
/// runtime's stream timing: events on the program's stream, no host wait).
/// False: the core times it on the host clock, after the runtime waited for
/// the work before it (the CUDA runtime's sync timing synchronizes the
/// device; the CPU runtime has nothing to wait for).
bool opTimerEdge(int64_t id, bool begin);

/// The memory the process holds now: the resident set on the CPU
/// (/proc/self/statm, getrusage's high-water mark), the device memory in use
/// on the GPU (cuMemGetInfo).
ResidentMemory residentMemory();

/// The `bytes` bytes at `first` (the lowest element of a result being
/// printed) readable by the host: `first` itself for host memory, else a
/// copy in `buffer`.
const void *hostElements(const void *first, size_t bytes,
                         std::vector<unsigned char> &buffer);

} // namespace remat::rt

#pragma GCC visibility pop

#endif // REMAT_LIB_RUNTIME_RUNTIMECORE_H
