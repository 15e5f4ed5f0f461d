//===- Debug.cpp - -debug and -debug-only for the remat tools -------------===//
//
// LLVM registers -debug and -debug-only only when it is built without
// NDEBUG; Debian's LLVM 22 is not, so the tools register them here, on the
// same flag and type filter that LLVM_DEBUG reads (remat/Support/Debug.h).
// An LLVM with assertions has its own: then nothing is registered.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

// Whatever NDEBUG and REMAT_DISABLE_DEBUG_OUTPUT say, libLLVM exports the
// real function (llvm/Support/Debug.h may have made it a macro).
#ifdef NDEBUG
#undef setCurrentDebugTypes
namespace llvm {
LLVM_ABI void setCurrentDebugTypes(const char **Types, unsigned Count);
} // namespace llvm
#endif

namespace cl = llvm::cl;

namespace {

/// The types of every -debug-only occurrence so far (setCurrentDebugTypes
/// replaces the list, so each occurrence passes all of them).
std::vector<std::string> &debugTypes() {
  static std::vector<std::string> types;
  return types;
}

/// cl::opt's external storage for -debug-only: assigning a value enables
/// debug output for its comma-separated types (as LLVM's DebugOnlyOpt).
struct DebugOnlyStorage {
  void operator=(const std::string &value) const {
    if (value.empty())
      return;
    llvm::DebugFlag = true;
    llvm::SmallVector<llvm::StringRef, 8> types;
    llvm::StringRef(value).split(types, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef type : types)
      if (!type.trim().empty())
        debugTypes().push_back(type.trim().str());
    std::vector<const char *> names;
    for (const std::string &type : debugTypes())
      names.push_back(type.c_str());
    llvm::setCurrentDebugTypes(names.data(), unsigned(names.size()));
  }
};

DebugOnlyStorage debugOnlyStorage;

bool isRegistered(llvm::StringRef name) {
  // getRegisteredOptions() first initialises LLVM's common options, among
  // them an assertions-enabled LLVM's -debug and -debug-only.
  return cl::getRegisteredOptions().count(name) != 0;
}

} // namespace

cl::OptionCategory &remat::debugOptionCategory() {
  static cl::OptionCategory category("Debug output options");
  return category;
}

void remat::registerDebugOptions() {
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  // Heap-allocated and never freed, as LLVM's own: the parser keeps
  // pointers to them until the process ends.
  if (!isRegistered("debug"))
    new cl::opt<bool, /*ExternalStorage=*/true>(
        "debug",
        cl::desc("Enable debug output of every remat component "
                 "(LLVM_DEBUG)"),
        cl::location(llvm::DebugFlag), cl::cat(debugOptionCategory()));
  if (!isRegistered("debug-only"))
    new cl::opt<DebugOnlyStorage, /*ExternalStorage=*/true,
                cl::parser<std::string>>(
        "debug-only",
        cl::desc("Enable debug output of the given comma-separated debug "
                 "types only (remat-rotor, remat-checkmate-ilp, ...)"),
        cl::value_desc("type,..."), cl::location(debugOnlyStorage),
        cl::ValueRequired, cl::cat(debugOptionCategory()));
}
