//===- RuntimeReport.h - the runtimes' `remat-runtime:` line ----*- C++ -*-===//
//
// The line that the runtime core (lib/Runtime/RuntimeCore.cpp) prints at exit
// for the CPU and the CUDA runtime alike, read back by remat-run for both
// targets.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUN_RUNTIMEREPORT_H
#define REMAT_RUN_RUNTIMEREPORT_H

#include "remat/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace remat_run {

/// The fields of a `remat-runtime: key=value ...` line.
struct RuntimeReport {
  std::optional<int64_t> stepPeak, totalPeak, liveAtExit, allocations,
      stepTimeNs, arenaBytes, residentGrowth;
  /// The wall time of every measured window, in order.
  llvm::SmallVector<int64_t> windowTimesNs;
  /// Per-op times (remat-profile: lines), by remat.profile_id.
  std::map<int64_t, int64_t> opNs;

  /// The step's time in seconds: the median of the windows after the first
  /// (a warm-up) when there are several, else the one window's; none when
  /// no window closed.
  std::optional<double> stepSeconds() const {
    llvm::SmallVector<int64_t> times(windowTimesNs.begin(),
                                     windowTimesNs.end());
    if (times.size() > 1)
      times.erase(times.begin());
    if (times.empty())
      return std::nullopt;
    llvm::sort(times);
    size_t n = times.size();
    double median = n % 2 ? double(times[n / 2])
                          : 0.5 * (double(times[n / 2 - 1]) + double(times[n / 2]));
    return median * 1e-9;
  }
};

/// Reads the fields of `line` (which starts with `remat-runtime:`) into
/// `report`; false on a value that is not an integer or when the peaks are
/// missing. Unknown keys are ignored.
inline bool parseRuntimeLine(llvm::StringRef line, RuntimeReport &report) {
  llvm::SmallVector<llvm::StringRef> fields;
  line.drop_front(llvm::StringRef("remat-runtime:").size())
      .split(fields, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    if (key == "window_times_ns") {
      llvm::SmallVector<llvm::StringRef> times;
      value.split(times, ',');
      for (llvm::StringRef t : times) {
        int64_t ns;
        if (t.trim().getAsInteger(10, ns))
          return false;
        report.windowTimesNs.push_back(ns);
      }
      continue;
    }
    int64_t v;
    if (value.trim().getAsInteger(10, v))
      return false;
    if (key == "step_peak_bytes")
      report.stepPeak = v;
    else if (key == "total_peak_bytes")
      report.totalPeak = v;
    else if (key == "live_bytes_at_exit")
      report.liveAtExit = v;
    else if (key == "allocations")
      report.allocations = v;
    else if (key == "step_time_ns")
      report.stepTimeNs = v;
    else if (key == "arena_bytes")
      report.arenaBytes = v;
    else if (key == "resident_growth_bytes")
      report.residentGrowth = v;
  }
  return report.stepPeak && report.totalPeak;
}

/// One `remat-runtime-step: tag=K step_peak_bytes=N windows=W` line: the
/// worst peak of the windows tagged K (one per call of step K) and how many
/// there were.
struct TaggedStepReport {
  int64_t stepPeak = 0;
  int64_t windows = 0;
};

/// Reads a `remat-runtime-step:` line into `tags`; false when malformed.
inline bool parseTaggedStepLine(llvm::StringRef line,
                                std::map<int64_t, TaggedStepReport> &tags) {
  llvm::SmallVector<llvm::StringRef> fields;
  line.drop_front(llvm::StringRef("remat-runtime-step:").size())
      .split(fields, ' ', -1, /*KeepEmpty=*/false);
  std::optional<int64_t> tag, peak, windows;
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    int64_t v;
    if (value.trim().getAsInteger(10, v))
      return false;
    if (key == "tag")
      tag = v;
    else if (key == "step_peak_bytes")
      peak = v;
    else if (key == "windows")
      windows = v;
  }
  if (!tag || !peak || !windows)
    return false;
  tags[*tag] = {*peak, *windows};
  return true;
}

/// What a compiled program printed (its output file): every line forwarded
/// to llvm::outs() but the runtime's report (parsed here) and, for a GPU
/// executable, its own `remat-run:` lines (remat-run prints its own after).
struct ProgramOutput {
  /// Why the file could not be read; empty when it was.
  std::string readError;
  bool sawReport = false, badReport = false;
  RuntimeReport report;
  /// The per-step lines of a program that measured several steps.
  std::map<int64_t, TaggedStepReport> tags;
};

inline ProgramOutput forwardProgramOutput(llvm::StringRef path,
                                          bool dropRunLines) {
  ProgramOutput result;
  auto output = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!output) {
    result.readError = output.getError().message();
    return result;
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*output)->getBuffer().split(lines, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back();
  for (llvm::StringRef line : lines) {
    if (line.starts_with("remat-profile:")) {
      // remat-profile: op=<id> ns=<time>
      std::string error;
      if (!remat::parseProfileLines(line, result.report.opNs, error))
        result.badReport = true;
      continue;
    }
    if (line.starts_with("remat-runtime:")) {
      result.sawReport = true;
      result.badReport |= !parseRuntimeLine(line, result.report);
      continue;
    }
    if (line.starts_with("remat-runtime-step:")) {
      result.badReport |= !parseTaggedStepLine(line, result.tags);
      continue;
    }
    if (dropRunLines && line.starts_with("remat-run:"))
      continue;
    llvm::outs() << line << "\n";
  }
  llvm::outs().flush();
  return result;
}

/// `remat-run: arena_bytes=<A> live_peak_bytes=<L> rss_growth_bytes=<R>`:
/// the arena the program allocated, the plan's live peak (the simulator's),
/// and the growth of the memory the OS sees over a step (the resident set on
/// the CPU, the device memory in use on the GPU); "none" when unknown.
inline void printMemoryFigures(const RuntimeReport &report,
                               std::optional<int64_t> livePeak) {
  auto text = [](std::optional<int64_t> v) {
    return v && *v >= 0 ? std::to_string(*v) : std::string("none");
  };
  llvm::outs() << "remat-run: arena_bytes=" << text(report.arenaBytes)
               << " live_peak_bytes=" << text(livePeak)
               << " rss_growth_bytes=" << text(report.residentGrowth) << "\n";
}

/// `remat-run: step_seconds=<median> windows=<n>` when a window closed.
inline void printStepSeconds(const RuntimeReport &report) {
  std::optional<double> seconds = report.stepSeconds();
  if (!seconds)
    return;
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", *seconds);
  llvm::outs() << "remat-run: step_seconds=" << text
               << " windows=" << report.windowTimesNs.size() << "\n";
}

} // namespace remat_run

#endif // REMAT_RUN_RUNTIMEREPORT_H
