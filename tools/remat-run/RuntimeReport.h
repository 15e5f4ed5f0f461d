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

#include <cstdint>
#include <optional>

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

} // namespace remat_run

#endif // REMAT_RUN_RUNTIMEREPORT_H
