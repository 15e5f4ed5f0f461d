//===- CbcBound.h - CBC's best bound on a mixed-integer program -*- C++ -*-===//
//
// Private to lib/Solvers. A mixed-integer program in triplet form, and the
// bound COIN-OR CBC proves on its minimum within a wall-clock limit. It is
// implemented in CheckmateCbc.cpp, the only translation unit that includes
// CBC's headers (they need RTTI); only standard types cross this interface.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_SOLVERS_CBCBOUND_H
#define REMAT_LIB_SOLVERS_CBCBOUND_H

#include <optional>
#include <vector>

class OsiClpSolverInterface;

namespace remat {

/// min objective . x subject to rowLower <= A x <= rowUpper and
/// columnLower <= x <= columnUpper, the columns marked `integer` integral.
/// A is given by its nonzeros (rowIndex[k], columnIndex[k], elements[k]).
struct MixedIntegerProgram {
  std::vector<double> objective, columnLower, columnUpper;
  std::vector<char> integer;
  std::vector<double> rowLower, rowUpper;
  std::vector<int> rowIndex, columnIndex;
  std::vector<double> elements;
};

/// Loads `program` into `solver` (its matrix built in one piece: appending
/// rows one by one reallocates it each time, 50 s for densenet201's joint
/// residency model against 0.1 s this way) and marks its integer columns.
/// CLP's log is silenced.
void loadProgram(OsiClpSolverInterface &solver,
                 const MixedIntegerProgram &program);

/// What CBC proves about the program's minimum.
struct MixedIntegerBound {
  /// No solution of the program is below it: CBC's best bound when it
  /// stopped (at the limit, or proven), at least the root relaxation's.
  double bound = 0;
  bool optimal = false;
};

/// CBC's bound within `seconds` of wall-clock time; nullopt when the root
/// relaxation is not solved in that time (or the program is infeasible).
std::optional<MixedIntegerBound>
cbcLowerBound(const MixedIntegerProgram &program, double seconds);

} // namespace remat

#endif // REMAT_LIB_SOLVERS_CBCBOUND_H
