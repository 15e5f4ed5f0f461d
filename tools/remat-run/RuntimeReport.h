//===- RuntimeReport.h - the runtimes' `remat-runtime:` line ----*- C++ -*-===//
//
// The line that the runtime core (lib/Runtime/RuntimeCore.cpp) prints at exit
// for the CPU and the CUDA runtime alike, read back by remat-run for both
// targets.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUN_RUNTIMEREPORT_H
#define REMAT_RUN_RUNTIMEREPORT_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace remat_run {

/// The fields of a `remat-runtime: key=value ...` line.
struct RuntimeReport {
  std::optional<int64_t> stepPeak, totalPeak, liveAtExit, allocations,
      stepTimeNs;
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

} // namespace remat_run

#endif // REMAT_RUN_RUNTIMEREPORT_H
