// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-prepare-loops-for-cpu))" | FileCheck %s

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#grouped = affine_map<(n, c, h, w) -> (n, 0, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>

// ReLU6 over a whole NCHW buffer: one loop of 512 iterations, and
// maximumf/minimumf against constants as one compare and one select each.
// CHECK-LABEL: func.func @relu6
// CHECK-DAG:     %[[IN:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : memref<4x8x4x4xf32> into memref<512xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1, 2, 3]] : memref<4x8x4x4xf32> into memref<512xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[IN]] : memref<512xf32>) outs(%[[OUT]] : memref<512xf32>)
// CHECK:           %[[GT:.*]] = arith.cmpf ugt, %[[X:.*]], %[[ZERO:.*]] : f32
// CHECK-NEXT:      %[[MAX:.*]] = arith.select %[[GT]], %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf ult, %[[MAX]], %[[SIX:.*]] : f32
// CHECK-NEXT:      %[[MIN:.*]] = arith.select %[[LT]], %[[MAX]], %[[SIX]] : f32
// CHECK-NEXT:      linalg.yield %[[MIN]] : f32
// CHECK-NOT:     arith.maximumf
func.func @relu6(%in: memref<4x8x4x4xf32>, %out: memref<4x8x4x4xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<4x8x4x4xf32>) outs(%out : memref<4x8x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %six = arith.constant 6.0 : f32
    %m = arith.maximumf %x, %zero : f32
    %n = arith.minimumf %m, %six : f32
    linalg.yield %n : f32
  }
  return
}

// Two operands: the NaN test and the signed-zero fix-up stay.
// CHECK-LABEL: func.func @maximum_of_two
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ugt, %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[PICK:.*]] = arith.select %[[GT]], %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[XB:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK-NEXT:      %[[YB:.*]] = arith.bitcast %[[Y]] : f32 to i32
// CHECK-NEXT:      %[[AND:.*]] = arith.andi %[[XB]], %[[YB]] : i32
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpf oeq, %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[ZEROS:.*]] = arith.bitcast %[[AND]] : i32 to f32
// CHECK-NEXT:      %[[PICK2:.*]] = arith.select %[[EQ]], %[[ZEROS]], %[[PICK]] : f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[Y]], %[[Y]] : f32
// CHECK-NEXT:      %[[RES:.*]] = arith.select %[[NAN]], %[[Y]], %[[PICK2]] : f32
// CHECK-NEXT:      linalg.yield %[[RES]] : f32
func.func @maximum_of_two(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %out: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<16x16xf32>, memref<16x16xf32>) outs(%out : memref<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.maximumf %x, %y : f32
    linalg.yield %m : f32
  }
  return
}

// A zero of the losing sign: minimumf(x, +0) keeps the fix-up (-0 < +0),
// maximumf(-0, x) too (the constant moves to the right).
// CHECK-LABEL: func.func @signed_zero_constants
// CHECK-SAME:    (%[[A:.*]]: f32)
// CHECK-DAG:     %[[PZ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[NZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:         arith.cmpf ult, %[[A]], %[[PZ]] : f32
// CHECK:         arith.ori
// CHECK:         arith.cmpf oeq, %[[A]], %[[PZ]] : f32
// CHECK:         arith.cmpf ugt, %[[A]], %[[NZ]] : f32
// CHECK:         arith.andi
// CHECK:         arith.cmpf oeq, %[[A]], %[[NZ]] : f32
// CHECK-NOT:     arith.cmpf uno
// CHECK:         return
func.func @signed_zero_constants(%a: f32) -> (f32, f32) {
  %pz = arith.constant 0.0 : f32
  %nz = arith.constant -0.0 : f32
  %min = arith.minimumf %a, %pz : f32
  %max = arith.maximumf %nz, %a : f32
  return %min, %max : f32, f32
}

// A batch norm's gradient sums: the grouped view (4x1x8x4x4 read at
// (n, 0, c, h, w)) is viewed without its unit dimension, the channel loop
// (the outputs' element) goes outside the images, the rows and columns
// become one loop, and both sums are reassociable.
// CHECK-LABEL: func.func @batch_norm_sums
// CHECK-DAG:     %[[X3:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2], [3], [4]] : memref<4x1x8x4x4xf32> into memref<4x8x4x4xf32>
// CHECK-DAG:     %[[DY:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<4x8x4x4xf32> into memref<4x8x16xf32>
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %[[X3]] {{\[}}[0], [1], [2, 3]] : memref<4x8x4x4xf32> into memref<4x8x16xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[DY]], %[[X]], %arg2 : memref<4x8x16xf32>, memref<4x8x16xf32>, memref<8xf32>) outs(%arg3, %arg4 : memref<8xf64>, memref<8xf64>)
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f64
// CHECK:           arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f64
func.func @batch_norm_sums(%dy: memref<4x8x4x4xf32>, %x: memref<4x1x8x4x4xf32>, %mean: memref<8xf32>, %s0: memref<8xf64>, %s1: memref<8xf64>) {
  linalg.generic {indexing_maps = [#id4, #grouped, #chan, #chan, #chan], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x, %mean : memref<4x8x4x4xf32>, memref<4x1x8x4x4xf32>, memref<8xf32>) outs(%s0, %s1 : memref<8xf64>, memref<8xf64>) {
  ^bb0(%g: f32, %v: f32, %mu: f32, %a0: f64, %a1: f64):
    %d = arith.subf %v, %mu : f32
    %p = arith.mulf %d, %g : f32
    %ge = arith.extf %g : f32 to f64
    %n0 = arith.addf %a0, %ge : f64
    %pe = arith.extf %p : f32 to f64
    %n1 = arith.addf %a1, %pe : f64
    linalg.yield %n0, %n1 : f64, f64
  }
  return
}

// A padded interior (a view with the rows of a wider buffer): the rows
// stay a loop of their own, the batch and channels merge.
// CHECK-LABEL: func.func @padded_interior
// CHECK:         memref.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : memref<4x8x4x4xf32> into memref<32x4x4xf32>
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<4x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>> into memref<32x4x4xf32, strided<[36, 6, 1], offset: 7>>
// CHECK:         iterator_types = ["parallel", "parallel", "parallel"]
func.func @padded_interior(%in: memref<4x8x4x4xf32>, %padded: memref<4x8x6x6xf32>) {
  %interior = memref.subview %padded[0, 0, 1, 1] [4, 8, 4, 4] [1, 1, 1, 1] : memref<4x8x6x6xf32> to memref<4x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<4x8x4x4xf32>) outs(%interior : memref<4x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// remat-autodiff's transpose of an embedding lookup: the token and position
// loops (reductions) come first, the output's row v and column d after. The
// innermost loop is d (unit stride everywhere); v, which names the output
// row, goes outside the reductions, so that each row takes its 128 terms
// while it is in cache (before: the whole 512x256 output swept once per
// token). linalg.index follows the interchange.
// CHECK-LABEL: func.func @embedding_gradient
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%arg0, %arg1 : memref<2x64xi64>, memref<2x64x256xf32>) outs(%arg2 : memref<512x256xf32>)
// CHECK:           linalg.index 0 : index
func.func @embedding_gradient(%tokens: memref<2x64xi64>, %g: memref<2x64x256xf32>, %dw: memref<512x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, d, v) -> (b, s)>, affine_map<(b, s, d, v) -> (b, s, d)>, affine_map<(b, s, d, v) -> (v, d)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%tokens, %g : memref<2x64xi64>, memref<2x64x256xf32>) outs(%dw : memref<512x256xf32>) {
  ^bb0(%t: i64, %x: f32, %acc: f32):
    %ti = arith.index_cast %t : i64 to index
    %v = linalg.index 3 : index
    %hit = arith.cmpi eq, %ti, %v : index
    %zero = arith.constant 0.0 : f32
    %add = arith.select %hit, %x, %zero : f32
    %s = arith.addf %acc, %add : f32
    linalg.yield %s : f32
  }
  return
}
