//===- ExternalModels.h - the remat interfaces on upstream ops ---*- C++ -*-===//
//
// The external models that give the upstream ops a training step is made of
// the remat op interfaces (remat/Interfaces). remat::registerRematDialects
// attaches them all; a compiler with a registry of its own calls these.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_EXTERNALMODELS_H
#define REMAT_TRANSFORMS_EXTERNALMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace remat {

/// RematCostModelOpInterface on every linalg structured op (FLOPs: its
/// iteration points times the ops of its body; the workspace that
/// remat-plan-library-calls stored in `remat.workspace_bytes`), every tensor
/// op (0 for `tensor.empty` and the views, 1 otherwise) and every arith and
/// math op (1). In-place updates: the destination-style ties.
void registerRematCostModels(mlir::DialectRegistry &registry);

/// RematDifferentiableOpInterface (the rules of remat-autodiff) on every
/// linalg structured op (linalg.generic's rule, named ops through their
/// generalized form), on tensor.empty, extract_slice, insert_slice,
/// collapse_shape, expand_shape, pad, concat, cast and extract, and on the
/// scalar arith/math ops with a derivative (add, sub, mul, div, neg, the
/// max/min ops, select, extf, truncf; exp, exp2, expm1, the logs, tanh,
/// sqrt, rsqrt, powf, erf, absf, copysign, fma, sin, cos).
void registerRematDifferentiableModels(mlir::DialectRegistry &registry);

/// All of the above. The passes that read the models (those that extract
/// graphs, and remat-autodiff) also declare them as dependencies, so that a
/// stock mlir-opt that loads only the pass plugin gets them as well.
void registerRematExternalModels(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_TRANSFORMS_EXTERNALMODELS_H
