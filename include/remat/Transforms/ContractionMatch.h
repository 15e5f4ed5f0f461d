//===- ContractionMatch.h - Recognise contractions by their maps -*- C++ -*-===//
//
// Which linalg ops a vendor library can run, whoever wrote them: a named op
// (linalg.matmul, linalg.batch_matmul, linalg.conv_2d_nchw_fchw, ...) or a
// linalg.generic, matched by its indexing maps and its body alone. The body
// must be `out = out + a * b` (math.fma or arith.mulf + arith.addf, either
// order) over two inputs; other inputs may only give loop ranges (unused in
// the body). Every operand access is reduced to an address: the element
// offset `sum_d coefficient[d] * i_d + constant` of loop index i, from the
// map and the operand's strides. The op is then
//
// * a matrix product (every map a projected permutation): batch, M, N and K
//   loops by which operands they index, several loops of one class merged
//   when their strides nest (a [B, S, D] x [D, E] linear layer is one M);
// * a convolution: one operand (the image) is indexed `s * p + d * r` along
//   some dimensions. On an input: p a loop of the output that the other
//   input does not index, r a loop of the other input that the output does
//   not index. With the image's outermost other loop among the output's
//   loops it is a forward correlation (a forward convolution, or, when the
//   other input is read flipped `K - 1 - r` with s = 1, the backward data of
//   a stride-1 convolution with padding (K-1)*d); with it among the reduced
//   loops it is the weight gradient (kernel taps p, output positions r). On
//   the output: p a loop of one input only (the output gradient's
//   positions), r of the other only (the kernel's taps): the backward data of
//   a convolution with stride s and dilation d written in the forward
//   convolution's loops, as remat-autodiff transposes it.
//
// Roles come from the maps alone, never from the declared iterator types:
// with the body `out + a * b` the op adds every point's product into the
// element its output map names, whatever is declared parallel.
//
// The candidate is then checked address by address: the library's own
// indexing of every operand, in the descriptor's sizes and strides, must give
// the op's address coefficient of every loop. Whatever does not pass (a
// grouped channel whose strides do not nest, a window with a constant offset
// the library cannot express, other bodies) stays a loop nest.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_CONTRACTIONMATCH_H
#define REMAT_TRANSFORMS_CONTRACTIONMATCH_H

#include "remat/Runtime/LibraryCalls.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <string>

namespace remat {

/// A linalg op the library calls can run.
struct MatchedContraction {
  /// Sizes and strides: the memref strides of buffers, row-major strides of
  /// tensors (what identity-layout bufferization gives them).
  lib::ContractionDesc desc;
  /// The op's operands in the roles of LibraryCalls.h: in0, in1, out.
  mlir::OpOperand *in0 = nullptr, *in1 = nullptr, *out = nullptr;
  /// Element offsets to add to each operand's own offset (constants of the
  /// indexing maps, and the start of a flipped kernel).
  int64_t in0Offset = 0, in1Offset = 0, outOffset = 0;
  /// Whether the library writes every element of the output operand (each
  /// once). Only then may a zero fill before the call go, the call
  /// overwriting: a backward data written through windows of its output
  /// reaches (O-1)*s + (K-1)*d + 1 positions, which may be fewer than the
  /// buffer holds.
  bool writesWholeOutput = true;
};

/// The contraction `op` is, or std::nullopt with `whyNot` saying why not.
std::optional<MatchedContraction>
matchContraction(mlir::linalg::LinalgOp op, std::string &whyNot);

/// How far one step of each loop of `op` moves `operand`'s address, in
/// elements (its strides through its indexing map), or std::nullopt when the
/// map is not linear or the strides are not static.
std::optional<llvm::SmallVector<int64_t>>
loopAddressCoefficients(mlir::linalg::LinalgOp op, mlir::OpOperand *operand);

} // namespace remat

#endif // REMAT_TRANSFORMS_CONTRACTIONMATCH_H
