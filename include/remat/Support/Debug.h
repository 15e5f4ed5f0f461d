//===- Debug.h - LLVM_DEBUG output in release builds ----------*- C++ -*-===//
//
// Debug output the LLVM way: a translation unit defines DEBUG_TYPE after its
// includes and writes
//
//   #include "remat/Support/Debug.h"
//   #define DEBUG_TYPE "remat-rotor"
//   ...
//   LLVM_DEBUG(llvm::dbgs() << "rotor: " << ... << "\n");
//
// and `remat-solve -debug-only=remat-rotor` (or `-debug` for every type)
// prints it on stderr. Every solver, the structure analysis, the simulator
// and the graph readers have a type; docs/budget-solvers.md lists them.
//
// Why this header and not llvm/Support/Debug.h alone: LLVM compiles
// LLVM_DEBUG to nothing when NDEBUG is defined, and so does Debian's LLVM
// 22 (built with NDEBUG, without -debug/-debug-only) as well as this
// project's Release build. The flag and the type filter are still in
// libLLVM, unconditionally (llvm::DebugFlag, llvm::isCurrentDebugType,
// llvm::setCurrentDebugTypes; lib/Support/Debug.cpp of LLVM defines them
// "even though LLVM might be built with NDEBUG"); only the header hides
// them behind macros. Under NDEBUG this header takes those macros back and
// defines DEBUG_WITH_TYPE (which LLVM_DEBUG expands to) exactly as LLVM
// does without NDEBUG: a test of one global bool, then the type filter. Hot
// loops pay that one load and branch, and only where they contain an
// LLVM_DEBUG (the solvers print per phase, not per inner iteration).
//
// The options: remat::registerDebugOptions() (below) adds `-debug` and
// `-debug-only=<type,...>` to a tool's command line unless LLVM has them
// already (an assertions-enabled LLVM registers its own, which set the same
// flag and filter). Embedders set llvm::DebugFlag and call
// llvm::setCurrentDebugTypes themselves. A library never prints unless
// asked: without -debug, nothing here writes anything.
//
// -DREMAT_ENABLE_DEBUG_OUTPUT=OFF at configure time defines
// REMAT_DISABLE_DEBUG_OUTPUT (on every target that links RematSupport):
// LLVM_DEBUG is then LLVM's own, i.e. nothing in an NDEBUG build.
//
// LDBG() (llvm/Support/DebugLog.h) is not taken back: it stays a no-op
// under NDEBUG. Use LLVM_DEBUG.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_DEBUG_H
#define REMAT_SUPPORT_DEBUG_H

#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

#if defined(NDEBUG) && !defined(REMAT_DISABLE_DEBUG_OUTPUT)
// llvm/Support/Debug.h replaced the functions by macros that do nothing;
// declare the real ones, which libLLVM exports whatever NDEBUG was.
#undef isCurrentDebugType
#undef setCurrentDebugType
#undef setCurrentDebugTypes
namespace llvm {
LLVM_ABI bool isCurrentDebugType(const char *Type, int Level);
LLVM_ABI void setCurrentDebugType(const char *Type);
LLVM_ABI void setCurrentDebugTypes(const char **Types, unsigned Count);
} // namespace llvm

#undef DEBUG_WITH_TYPE
#define DEBUG_WITH_TYPE(TYPE, ...)                                             \
  do {                                                                         \
    if (::llvm::DebugFlag && ::llvm::isCurrentDebugType(TYPE, 1)) {            \
      __VA_ARGS__;                                                             \
    }                                                                          \
  } while (false)
#endif

/// 1 when LLVM_DEBUG statements are compiled in (and print under -debug).
#if !defined(NDEBUG) || !defined(REMAT_DISABLE_DEBUG_OUTPUT)
#define REMAT_DEBUG_OUTPUT_ENABLED 1
#else
#define REMAT_DEBUG_OUTPUT_ENABLED 0
#endif

namespace llvm {
namespace cl {
class OptionCategory;
} // namespace cl
} // namespace llvm

namespace remat {

/// Registers `-debug` (llvm::DebugFlag) and `-debug-only=<type,...>`
/// (llvm::setCurrentDebugTypes; several occurrences add up) with LLVM's
/// command line, each only if no option of that name is registered already.
/// Call it before cl::ParseCommandLineOptions (or MlirOptMain); calling it
/// again does nothing.
void registerDebugOptions();

/// The category of the options above, for cl::HideUnrelatedOptions.
llvm::cl::OptionCategory &debugOptionCategory();

/// "[a, b, c, ... (n in all)]": at most `limit` elements of `range`, so that
/// debug lines can name sets (checkpoints, stages) without flooding.
template <typename Range>
std::string debugList(const Range &range, size_t limit = 16) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  size_t count = 0;
  for (const auto &element : range) {
    if (count < limit)
      os << (count ? ", " : "") << element;
    ++count;
  }
  if (count > limit)
    os << ", ... (" << count << " in all)";
  os << ']';
  return text;
}

} // namespace remat

#endif // REMAT_SUPPORT_DEBUG_H
