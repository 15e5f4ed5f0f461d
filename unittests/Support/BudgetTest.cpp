//===- BudgetTest.cpp - Parsing memory budgets ----------------------------===//

#include "remat/Support/Budget.h"

#include "gtest/gtest.h"

#include <limits>

using namespace remat;

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

/// The bytes of `text` against `reference`, or a failure that shows the
/// error.
::testing::AssertionResult bytesAre(llvm::StringRef text, uint64_t reference,
                                    uint64_t expected) {
  llvm::Expected<uint64_t> bytes = parseBudget(text, reference);
  if (!bytes)
    return ::testing::AssertionFailure()
           << "'" << text.str()
           << "' failed: " << llvm::toString(bytes.takeError());
  if (*bytes != expected)
    return ::testing::AssertionFailure()
           << "'" << text.str() << "' gave " << *bytes << ", not " << expected;
  return ::testing::AssertionSuccess();
}

/// The error of `text` against `reference` ("" if it parsed).
std::string errorOf(llvm::StringRef text, uint64_t reference = 1000) {
  llvm::Expected<uint64_t> bytes = parseBudget(text, reference);
  if (bytes)
    return "";
  return llvm::toString(bytes.takeError());
}

/// A budget that parses: its text, the reference, the bytes it resolves to.
struct Case {
  const char *text;
  uint64_t reference;
  uint64_t bytes;
};

void expectBytes(llvm::ArrayRef<Case> cases) {
  for (const Case &c : cases)
    EXPECT_TRUE(bytesAre(c.text, c.reference, c.bytes));
}

TEST(Budget, Integers) {
  expectBytes({
      {"1", 0, 1},
      {"12345", 0, 12345},
      {"+7", 0, 7},
      {"007", 0, 7},
      {"  1600  ", 0, 1600},
      // Exact to the last byte: no float round trip.
      {"18446744073709551615", 0, kMax},
      {"9007199254740993", 0, 9007199254740993ull},
  });
}

TEST(Budget, Units) {
  expectBytes({
      {"100B", 0, 100},
      {"64KiB", 0, 64 * 1024},
      {"1.5MiB", 0, 1572864},
      {"1.5KiB", 0, 1536},
      {"2GiB", 0, uint64_t(2) << 30},
      {"3TiB", 0, uint64_t(3) << 40},
      {"2KB", 0, 2000},
      {"16GB", 0, 16000000000ull},
      {"3MB", 0, 3000000},
      {"1.25TB", 0, 1250000000000ull},
      // Decimals x unit are exact: 13.153337344 * 1e9 is not, in doubles.
      {"13.153337344GB", 0, 13153337344ull},
      {"1.5 MiB", 0, 1572864},
      {" 12 KB ", 0, 12000},
      // Units after an exponent, and 16 EiB - 1 in TiB.
      {"1e3KiB", 0, 1024000},
      {"16777215.9999999999990905052982270717620849609375TiB", 0, kMax},
  });
}

TEST(Budget, Decimals) {
  expectBytes({
      {"1.5", 0, 1}, // Fractional bytes round down.
      {"2.999B", 0, 2},
      {".5KB", 0, 500},
      {"5.", 0, 5},
      {"1e3", 0, 1000},
      {"1E3", 0, 1000},
      {"2.5e+2", 0, 250},
      {"123456e-3", 0, 123},
      // 1e19 fits a uint64_t: exact, not 0.
      {"1e19", 0, 10000000000000000000ull},
      {"18446744073709551615.999", 0, kMax},
      // Hex floats, which APFloat read in the old parsers.
      {"0x1p4", 0, 16},
      {"0x1.8p1KiB", 0, 3 * 1024},
      {"0X10P0B", 0, 16},
  });
}

TEST(Budget, Percentages) {
  expectBytes({
      {"60%", 1000, 600},
      {"60 %", 1000, 600},
      {"75%", 2148, 1611},
      {"12.5%", 1000, 125},
      // Exact: in doubles 57 / 100 * 100 is 56.99..., 33.3 / 100 * 1000
      // 332.99...
      {"57%", 100, 57},
      {"33.3%", 1000, 333},
      {"70%", 1000, 700},
      {"80%", 655364, 524291}, // Rounded down.
      // More than 100% stays allowed, as before.
      {"150%", 1000, 1500},
      {"100%", kMax, kMax},
      {"1e-10%", uint64_t(1) << 50, 1125},
  });

  llvm::Expected<BudgetSpec> spec = parseBudgetSpec(" 60% ");
  ASSERT_TRUE(static_cast<bool>(spec));
  EXPECT_EQ(spec->kind, BudgetSpec::PercentOfReference);
  EXPECT_EQ(spec->percent, 60.0);
  EXPECT_EQ(spec->text, "60%");
  llvm::Expected<uint64_t> bytes = resolveBudget(*spec, 5000);
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_EQ(*bytes, 3000u);

  // A spec built by hand resolves from its double.
  BudgetSpec byHand;
  byHand.kind = BudgetSpec::PercentOfReference;
  byHand.percent = 50;
  bytes = resolveBudget(byHand, 1001);
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_EQ(*bytes, 500u);
}

TEST(Budget, BytesSpec) {
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec("64KiB");
  ASSERT_TRUE(static_cast<bool>(spec));
  EXPECT_EQ(spec->kind, BudgetSpec::Bytes);
  EXPECT_EQ(spec->bytes, 65536u);
  llvm::Expected<uint64_t> bytes = resolveBudget(*spec, 0);
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_EQ(*bytes, 65536u);
}

TEST(Budget, TooLarge) {
  EXPECT_EQ(errorOf("18446744073709551616"),
            "invalid budget '18446744073709551616': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("1e20"), "invalid budget '1e20': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("1e999999999999"),
            "invalid budget '1e999999999999': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("16777216TiB"),
            "invalid budget '16777216TiB': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("2e10GB"),
            "invalid budget '2e10GB': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("1e30%"),
            "invalid budget '1e30%': it exceeds 2^64-1 bytes");
  EXPECT_EQ(errorOf("150%", kMax),
            "invalid budget '150%': that percentage of the reference of "
            "18446744073709551615 bytes exceeds 2^64-1 bytes");
}

TEST(Budget, Zero) {
  EXPECT_EQ(errorOf("0"),
            "invalid budget '0': a budget must be at least 1 byte");
  EXPECT_EQ(errorOf("0KiB"),
            "invalid budget '0KiB': a budget must be at least 1 byte");
  EXPECT_EQ(errorOf("0.5"),
            "invalid budget '0.5': a budget must be at least 1 byte");
  EXPECT_EQ(errorOf("1e-999999999"),
            "invalid budget '1e-999999999': a budget must be at least 1 byte");
  EXPECT_EQ(errorOf("0%"),
            "invalid budget '0%': a percentage must be more than 0%");
  EXPECT_EQ(errorOf("0.0%"),
            "invalid budget '0.0%': a percentage must be more than 0%");
  EXPECT_EQ(errorOf("0.01%", 50),
            "invalid budget '0.01%': that percentage of the reference of 50 "
            "bytes is less than 1 byte");
  EXPECT_EQ(errorOf("60%", 0),
            "invalid budget '60%': that percentage of the reference of 0 "
            "bytes is less than 1 byte");
}

TEST(Budget, Invalid) {
  const std::string syntax =
      "': expected bytes (an integer or decimal number, optionally with B, "
      "KB, MB, GB, TB, KiB, MiB, GiB or TiB) or a percentage such as '60%'";
  for (const char *text :
       {"",       "   ",  "12abc", "%",      "B",   "KiB",  "lots", "1e",
        "1e+",    ".",    "1..5",  "1.5.5",  "1,5", "0x10", "0x1B", "0xp3",
        "60KiB%", "60%%", "1 2",   "12 kib", "++5", "sweep"})
    EXPECT_EQ(errorOf(text),
              "invalid budget '" + llvm::StringRef(text).trim().str() + syntax)
        << text;
  EXPECT_EQ(errorOf("-1"), "invalid budget '-1': a budget cannot be negative");
  EXPECT_EQ(errorOf("-0"), "invalid budget '-0': a budget cannot be negative");
  EXPECT_EQ(errorOf("-5%"),
            "invalid budget '-5%': a budget cannot be negative");
  for (const char *text :
       {"nan", "NaN", "inf", "+inf", "Infinity", "INF%", "nanKiB", "nan(1)"})
    EXPECT_EQ(errorOf(text), "invalid budget '" + std::string(text) +
                                 "': a budget must be a finite number")
        << text;

  // parseBudgetSpec alone reports the same.
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec("12abc");
  ASSERT_FALSE(static_cast<bool>(spec));
  EXPECT_EQ(llvm::toString(spec.takeError()), "invalid budget '12abc" + syntax);
}

TEST(Budget, HandBuiltSpecs) {
  BudgetSpec zeroBytes;
  llvm::Expected<uint64_t> bytes = resolveBudget(zeroBytes, 100);
  ASSERT_FALSE(static_cast<bool>(bytes));
  llvm::consumeError(bytes.takeError());

  BudgetSpec nanPercent;
  nanPercent.kind = BudgetSpec::PercentOfReference;
  nanPercent.percent = std::numeric_limits<double>::quiet_NaN();
  bytes = resolveBudget(nanPercent, 100);
  ASSERT_FALSE(static_cast<bool>(bytes));
  llvm::consumeError(bytes.takeError());
}

} // namespace

// Found by fuzz-budget: a tiny percentage parsed, and its display double
// underflowed to 0. No reference gives it a byte: an error.
TEST(Budget, PercentTooSmallForAnyReferenceIsAnError) {
  llvm::Expected<remat::BudgetSpec> spec =
      remat::parseBudgetSpec("184466744607401e-381877460%");
  ASSERT_FALSE(bool(spec));
  EXPECT_NE(llvm::toString(spec.takeError()).find("less than 1 byte"),
            std::string::npos);
  llvm::Expected<remat::BudgetSpec> small = remat::parseBudgetSpec("1e-18%");
  ASSERT_FALSE(bool(small));
  llvm::consumeError(small.takeError());
  llvm::Expected<remat::BudgetSpec> fine = remat::parseBudgetSpec("1e-17%"); // 1.8 bytes of 2^64-1
  ASSERT_TRUE(bool(fine));
  EXPECT_GT(fine->percent, 0);
}
