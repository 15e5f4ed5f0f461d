//===- Budget.cpp - Memory budgets written as text ------------------------===//
//
// Numbers are read exactly, as mantissa x 10^exp10 x 2^exp2 with an
// arbitrary-precision mantissa, and scaled to bytes with APInt arithmetic:
// the float round trip of the parsers this replaces turned 1e20 bytes into
// 0 and rounded 57% of 100 bytes down to 56.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Budget.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace remat;
using llvm::APInt;
using llvm::StringRef;

namespace {

/// A non-negative number, exactly: mantissa x 10^exp10 x 2^exp2.
struct ExactNumber {
  APInt mantissa;
  int64_t exp10 = 0;
  int64_t exp2 = 0;
};

/// Why a number did not parse.
enum class NumberError { Syntax, Negative, NotFinite };

/// The units, the longer names first so that "KiB" is not read as "B".
struct Unit {
  StringRef name;
  uint64_t scale;
};
constexpr Unit kUnits[] = {{"KiB", uint64_t(1) << 10},
                           {"MiB", uint64_t(1) << 20},
                           {"GiB", uint64_t(1) << 30},
                           {"TiB", uint64_t(1) << 40},
                           {"KB", 1000},
                           {"MB", 1000000},
                           {"GB", 1000000000},
                           {"TB", 1000000000000},
                           {"B", 1}};

/// A budget's text split into its number and its unit or '%'.
struct BudgetParts {
  StringRef number;
  bool percent = false;
  uint64_t unitScale = 1;
};

BudgetParts splitBudget(StringRef text) {
  BudgetParts parts;
  parts.number = text.trim();
  if (parts.number.consume_back("%")) {
    parts.percent = true;
  } else {
    for (const Unit &unit : kUnits)
      if (parts.number.consume_back(unit.name)) {
        parts.unitScale = unit.scale;
        break;
      }
  }
  parts.number = parts.number.rtrim();
  return parts;
}

llvm::Error budgetError(StringRef text, const llvm::Twine &reason) {
  return llvm::createStringError("invalid budget '" + text + "': " + reason);
}

llvm::Error syntaxError(StringRef text) {
  return budgetError(text, "expected bytes (an integer or decimal number, "
                           "optionally with B, KB, MB, GB, TB, KiB, MiB, GiB "
                           "or TiB) or a percentage such as '60%'");
}

llvm::Error tooLargeError(StringRef text) {
  return budgetError(text, "it exceeds 2^64-1 bytes");
}

/// Reads an exponent's optional sign and digits from the front of `text`;
/// saturates far beyond any exponent that matters.
std::optional<int64_t> consumeExponent(StringRef &text) {
  bool negative = false;
  if (text.consume_front("-"))
    negative = true;
  else
    (void)text.consume_front("+");
  if (text.empty() || !llvm::isDigit(text.front()))
    return std::nullopt;
  int64_t value = 0;
  while (!text.empty() && llvm::isDigit(text.front())) {
    value = std::min<int64_t>(value * 10 + (text.front() - '0'), 1000000000);
    text = text.drop_front();
  }
  return negative ? -value : value;
}

/// Reads digits of `radix` and at most one '.', as the mantissa's digits
/// and the number of digits after the point. At least one digit.
std::optional<std::pair<std::string, int64_t>>
consumeSignificand(StringRef &text, unsigned radix) {
  std::string digits;
  int64_t fractionDigits = 0;
  bool point = false;
  auto isRadixDigit = [&](char c) {
    return radix == 16 ? llvm::isHexDigit(c) : llvm::isDigit(c);
  };
  for (; !text.empty(); text = text.drop_front()) {
    char c = text.front();
    if (c == '.' && !point) {
      point = true;
    } else if (isRadixDigit(c)) {
      digits.push_back(c);
      fractionDigits += point;
    } else {
      break;
    }
  }
  if (digits.empty())
    return std::nullopt;
  return std::make_pair(std::move(digits), fractionDigits);
}

/// Parses a number (the grammar of Budget.h) exactly.
std::optional<ExactNumber> parseNumber(StringRef text, NumberError &error) {
  error = NumberError::Syntax;
  if (text.starts_with("-")) {
    error = NumberError::Negative;
    return std::nullopt;
  }
  (void)text.consume_front("+");
  // NaN and infinity, as strtod and APFloat spell them.
  std::string lower = text.lower();
  if (lower == "inf" || lower == "infinity" || lower == "nan" ||
      lower == "snan" || StringRef(lower).starts_with("nan(") ||
      StringRef(lower).starts_with("snan(")) {
    error = NumberError::NotFinite;
    return std::nullopt;
  }
  bool hex = text.consume_front("0x") || text.consume_front("0X");
  std::optional<std::pair<std::string, int64_t>> significand =
      consumeSignificand(text, hex ? 16 : 10);
  if (!significand)
    return std::nullopt;
  ExactNumber number;
  if (StringRef(significand->first)
          .getAsInteger(hex ? 16 : 10, number.mantissa))
    return std::nullopt;
  std::optional<int64_t> exponent = 0;
  // A hex float needs its binary exponent (as in C and APFloat); a decimal
  // exponent is optional.
  if (hex ? (text.consume_front("p") || text.consume_front("P"))
          : (text.consume_front("e") || text.consume_front("E")))
    exponent = consumeExponent(text);
  else if (hex)
    return std::nullopt;
  if (!exponent || !text.empty())
    return std::nullopt;
  if (hex)
    number.exp2 = *exponent - 4 * significand->second;
  else
    number.exp10 = *exponent - significand->second;
  return number;
}

/// A positive finite double, exactly.
ExactNumber exactDouble(double value) {
  int exponent;
  double fraction = std::frexp(value, &exponent);
  ExactNumber number;
  number.mantissa = APInt(64, static_cast<uint64_t>(std::ldexp(fraction, 53)));
  number.exp2 = exponent - 53;
  return number;
}

/// floor(number x multiplier / divisor), or nullopt when that is above
/// 2^64-1. `divisor` is not 0.
std::optional<uint64_t> scaleExactly(const ExactNumber &number,
                                     uint64_t multiplier, uint64_t divisor) {
  if (number.mantissa.isZero() || multiplier == 0)
    return 0;
  // Bounds of log2 of the result, to settle huge and tiny exponents without
  // the arithmetic (which would need as many bits as the exponent says).
  const double log2Of10 = std::log2(10.0);
  double scale = static_cast<double>(number.exp10) * log2Of10 +
                 static_cast<double>(number.exp2) +
                 std::log2(static_cast<double>(multiplier)) -
                 std::log2(static_cast<double>(divisor));
  unsigned bits = number.mantissa.getActiveBits();
  if (static_cast<double>(bits - 1) + scale >= 65)
    return std::nullopt;
  if (static_cast<double>(bits) + scale < -2)
    return 0;
  // Now every exponent is bounded by about the mantissa's width, and
  // numerator / denominator fit in `width` bits.
  unsigned up10 = number.exp10 > 0 ? number.exp10 : 0;
  unsigned down10 = number.exp10 < 0 ? -number.exp10 : 0;
  unsigned up2 = number.exp2 > 0 ? number.exp2 : 0;
  unsigned down2 = number.exp2 < 0 ? -number.exp2 : 0;
  unsigned width =
      std::max(bits + 64 + 4 * up10 + up2, 64 + 4 * down10 + down2) + 2;
  APInt numerator = number.mantissa.zextOrTrunc(width) * multiplier;
  APInt denominator(width, divisor);
  for (unsigned i = 0; i < up10; ++i)
    numerator *= 10;
  for (unsigned i = 0; i < down10; ++i)
    denominator *= 10;
  numerator <<= up2;
  denominator <<= down2;
  APInt quotient = numerator.udiv(denominator);
  if (quotient.getActiveBits() > 64)
    return std::nullopt;
  return quotient.getZExtValue();
}

llvm::Error numberError(StringRef text, NumberError error) {
  switch (error) {
  case NumberError::Negative:
    return budgetError(text, "a budget cannot be negative");
  case NumberError::NotFinite:
    return budgetError(text, "a budget must be a finite number");
  case NumberError::Syntax:
    break;
  }
  return syntaxError(text);
}

} // namespace

llvm::Expected<BudgetSpec> remat::parseBudgetSpec(StringRef text) {
  text = text.trim();
  BudgetParts parts = splitBudget(text);
  NumberError error;
  std::optional<ExactNumber> number = parseNumber(parts.number, error);
  if (!number)
    return numberError(text, error);

  BudgetSpec spec;
  spec.text = text.str();
  if (parts.percent) {
    spec.kind = BudgetSpec::PercentOfReference;
    if (number->mantissa.isZero())
      return budgetError(text, "a percentage must be more than 0%");
    // Above 100 x (2^64-1) percent, no reference gives a budget in range.
    if (!scaleExactly(*number, 1, 100))
      return tooLargeError(text);
    // Below 100 / (2^64-1) percent, no reference gives a byte (and the
    // double shown in messages could underflow to 0).
    if (scaleExactly(*number, std::numeric_limits<uint64_t>::max(), 100) == 0u)
      return budgetError(text, "a percentage this small is less than 1 byte "
                               "of any reference");
    if (parts.number.getAsDouble(spec.percent))
      spec.percent = 0; // Not reached: APFloat reads this syntax too.
    return spec;
  }
  std::optional<uint64_t> bytes = scaleExactly(*number, parts.unitScale, 1);
  if (!bytes)
    return tooLargeError(text);
  if (*bytes == 0)
    return budgetError(text, "a budget must be at least 1 byte");
  spec.bytes = *bytes;
  return spec;
}

llvm::Expected<uint64_t> remat::resolveBudget(const BudgetSpec &spec,
                                              uint64_t referenceBytes) {
  if (spec.kind == BudgetSpec::Bytes) {
    if (spec.bytes == 0)
      return budgetError(spec.text, "a budget must be at least 1 byte");
    return spec.bytes;
  }
  // The percentage exactly as written; a spec built by hand has its double.
  std::optional<ExactNumber> percent;
  std::string shown = spec.text;
  if (!spec.text.empty()) {
    BudgetParts parts = splitBudget(spec.text);
    NumberError error;
    if (!parts.percent)
      return syntaxError(spec.text);
    percent = parseNumber(parts.number, error);
    if (!percent)
      return numberError(spec.text, error);
  } else {
    shown = llvm::formatv("{0}%", spec.percent).str();
    if (!std::isfinite(spec.percent))
      return numberError(shown, NumberError::NotFinite);
    if (spec.percent < 0)
      return numberError(shown, NumberError::Negative);
    percent = spec.percent > 0 ? exactDouble(spec.percent)
                               : ExactNumber{APInt(64, 0)};
  }
  if (percent->mantissa.isZero())
    return budgetError(shown, "a percentage must be more than 0%");
  std::optional<uint64_t> bytes = scaleExactly(*percent, referenceBytes, 100);
  if (!bytes)
    return budgetError(shown, "that percentage of the reference of " +
                                  llvm::Twine(referenceBytes) +
                                  " bytes exceeds 2^64-1 bytes");
  if (*bytes == 0)
    return budgetError(shown, "that percentage of the reference of " +
                                  llvm::Twine(referenceBytes) +
                                  " bytes is less than 1 byte");
  return *bytes;
}

llvm::Expected<uint64_t> remat::parseBudget(StringRef text,
                                            uint64_t referenceBytes) {
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec(text);
  if (!spec)
    return spec.takeError();
  return resolveBudget(*spec, referenceBytes);
}
