//===- fuzz-budget.cpp - Fuzz the budget parser ---------------------------===//
//
// Feeds the input as a budget string to parseBudgetSpec and parseBudget
// against a few references. Invariants: a parse never crashes; a success is
// at least 1 byte (a percentage is finite, >= 0); parseBudget agrees with parseBudgetSpec + resolveBudget; a
// byte count does not depend on the reference; a plain decimal integer
// (optional '+', digits, optional 'B') parses to exactly its value.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Budget.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace remat;

static void check(bool ok, const char *what, llvm::StringRef text) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz-budget: %s for '%s'\n", what, text.str().c_str());
  std::abort();
}

/// The value of a plain integer budget ("[+]digits[B]", whitespace around),
/// or nullopt when the text is not one or overflows.
static std::optional<uint64_t> plainInteger(llvm::StringRef text) {
  llvm::StringRef s = text.trim();
  s.consume_front("+");
  if (s.ends_with("B") && !s.ends_with("iB") && !s.ends_with("KB") &&
      !s.ends_with("MB") && !s.ends_with("GB") && !s.ends_with("TB"))
    s = s.drop_back().rtrim();
  if (s.empty() || s.find_first_not_of("0123456789") != llvm::StringRef::npos)
    return std::nullopt;
  uint64_t value = 0;
  for (char c : s) {
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec(text);
  std::optional<BudgetSpec> parsed;
  if (spec) {
    parsed = *spec;
    if (spec->kind == BudgetSpec::Bytes)
      check(spec->bytes >= 1, "a byte budget of 0", text);
    else
      // Budget.h promises a finite percentage above 0 (a percentage too
      // small to give 1 byte of any reference, such as "1e-400%", whose
      // double would underflow to 0, is an error).
      check(std::isfinite(spec->percent) && spec->percent > 0,
            "a percentage that is not finite and above 0", text);
  } else {
    llvm::consumeError(spec.takeError());
  }

  std::optional<uint64_t> plain = plainInteger(text);
  if (plain && *plain >= 1)
    check(parsed && parsed->kind == BudgetSpec::Bytes &&
              parsed->bytes == *plain,
          "a plain integer not parsed exactly", text);
  if (plain && *plain == 0)
    check(!parsed, "a budget of 0 accepted", text);

  static const uint64_t references[] = {1, 3, 100, 1000003, 1ull << 40,
                                        UINT64_MAX};
  for (uint64_t reference : references) {
    llvm::Expected<uint64_t> bytes = parseBudget(text, reference);
    if (!bytes) {
      llvm::consumeError(bytes.takeError());
      // A byte count is valid whatever the reference.
      check(!parsed || parsed->kind != BudgetSpec::Bytes,
            "parseBudget rejects what parseBudgetSpec accepted", text);
      continue;
    }
    check(*bytes >= 1, "a resolved budget of 0", text);
    check(parsed.has_value(), "parseBudget accepts what parseBudgetSpec rejects",
          text);
    if (parsed->kind == BudgetSpec::Bytes)
      check(*bytes == parsed->bytes, "a byte count depends on the reference",
            text);
    llvm::Expected<uint64_t> resolved = resolveBudget(*parsed, reference);
    check(resolved && *resolved == *bytes,
          "parseBudget differs from parseBudgetSpec + resolveBudget", text);
    if (!resolved)
      llvm::consumeError(resolved.takeError());
    if (plain)
      check(*bytes == *plain, "a plain integer not exact", text);
  }
  return 0;
}
