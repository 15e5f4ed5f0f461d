//===- Budget.h - Memory budgets written as text --------------*- C++ -*-===//
//
// The one parser of the memory budgets that users write: remat-opt's
// `budget=` pass option, remat-solve's `--budget` and `--device-memory`, the
// benchmarks' `--budgets`. A budget is a byte count or a percentage of a
// reference (the checkpoint-all peak), and is computed exactly: no value
// goes through a double on its way to bytes, so a budget too large for a
// uint64_t is an error and never wraps or becomes 0.
//
// Syntax (surrounding whitespace is ignored, and so is whitespace before
// the unit or '%'):
//
//   budget  := number [unit] | number '%'
//   number  := ['+'] decimal | ['+'] hex
//   decimal := digits ['.' [digits]] [exp] | '.' digits [exp]
//   exp     := ('e' | 'E') ['+' | '-'] digits
//   hex     := '0x' (hexdigits ['.' [hexdigits]] | '.' hexdigits)
//              ('p' | 'P') ['+' | '-'] digits          (a C hex float)
//   unit    := 'B' | 'KB' | 'MB' | 'GB' | 'TB'       (powers of 1000)
//            | 'KiB' | 'MiB' | 'GiB' | 'TiB'         (powers of 1024)
//
// A fractional byte count is rounded down ("1.5B" is 1 byte). Errors: a
// negative sign, NaN or infinity, anything else that is not the syntax, a
// value above 2^64-1 bytes, a percentage of 0, and a budget of 0 bytes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_BUDGET_H
#define REMAT_SUPPORT_BUDGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace remat {

/// A budget as parsed: bytes, or a percentage still to be resolved against a
/// reference.
struct BudgetSpec {
  enum Kind { Bytes, PercentOfReference };
  Kind kind = Bytes;
  /// Bytes: the budget, at least 1.
  uint64_t bytes = 0;
  /// PercentOfReference: the percentage (> 0; 150 means 1.5 times the
  /// reference), as the nearest double, for display.
  double percent = 0;
  /// The budget as written, trimmed. Messages quote it, and resolveBudget
  /// reads the percentage from it exactly rather than from `percent` (57%
  /// of 100 bytes is 57 bytes, where doubles give 56); when it is empty,
  /// `percent` is used.
  std::string text;
};

/// Parses `text` (syntax above) and checks what does not depend on the
/// reference: a byte count is in [1, 2^64-1], a percentage is finite and
/// more than 0 (more than 100 is allowed). The error is one sentence that
/// quotes `text`: "invalid budget '<text>': ...".
llvm::Expected<BudgetSpec> parseBudgetSpec(llvm::StringRef text);

/// The budget in bytes: `spec.bytes`, or the percentage of `referenceBytes`
/// rounded down. An error when that is 0 bytes or more than 2^64-1 bytes.
llvm::Expected<uint64_t> resolveBudget(const BudgetSpec &spec,
                                       uint64_t referenceBytes);

/// parseBudgetSpec, then resolveBudget against `referenceBytes`.
llvm::Expected<uint64_t> parseBudget(llvm::StringRef text,
                                     uint64_t referenceBytes);

} // namespace remat

#endif // REMAT_SUPPORT_BUDGET_H
