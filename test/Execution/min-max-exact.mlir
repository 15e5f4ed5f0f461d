// arith.maximumf / minimumf as remat-prepare-loops-for-cpu writes them
// (compares and selects that LLVM's loop vectoriser takes) give the same
// bits as the llvm.maximum / llvm.minimum intrinsics they otherwise lower
// to, on every pair of NaN, +0, -0, 1, -1, 6, +inf, -inf and with the
// constants of ReLU6 and of both signed zeros; both built at -O3 and run.
// The values are a public mutable global, so that LLVM cannot fold them.
//
// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-prepare-loops-for-cpu,convert-linalg-to-loops,remat-promote-loop-accumulators),lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)" -o %t.expanded.mlir
// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(convert-linalg-to-loops),lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)" -o %t.intrinsics.mlir
// RUN: FileCheck %s --check-prefix=EXPANDED < %t.expanded.mlir
// RUN: FileCheck %s --check-prefix=INTRINSICS < %t.intrinsics.mlir
// RUN: mlir-runner -O3 %t.expanded.mlir -e main -entry-point-result=void -shared-libs=%remat_lib_dir/libRematCpuRuntime.so > %t.expanded.txt
// RUN: mlir-runner -O3 %t.intrinsics.mlir -e main -entry-point-result=void -shared-libs=%remat_lib_dir/libRematCpuRuntime.so > %t.intrinsics.txt
// RUN: diff %t.expanded.txt %t.intrinsics.txt
// RUN: FileCheck %s < %t.expanded.txt

// EXPANDED-NOT: llvm.intr.maximum
// EXPANDED-NOT: llvm.intr.minimum
// INTRINSICS: llvm.intr.maximum

// The bits (as i32) of maximumf: row NaN, then row +0.
// CHECK-COUNT-8: sum=2143289344{{$}}
// CHECK-NEXT: sum=2143289344{{$}}
// CHECK-NEXT: sum=0{{$}}
// CHECK-NEXT: sum=0{{$}}
// CHECK-NEXT: sum=1065353216{{$}}
// CHECK-NEXT: sum=0{{$}}
// CHECK-NEXT: sum=1086324736{{$}}
// CHECK-NEXT: sum=2139095040{{$}}
// CHECK-NEXT: sum=0{{$}}
// Row -0: maximumf(-0, +0) = +0, maximumf(-0, -0) = -0.
// CHECK-NEXT: sum=2143289344{{$}}
// CHECK-NEXT: sum=0{{$}}
// CHECK-NEXT: sum=-2147483648{{$}}

#pair_i = affine_map<(i, j) -> (i)>
#pair_j = affine_map<(i, j) -> (j)>
#pair = affine_map<(i, j) -> (i, j)>
#one = affine_map<(i) -> (i)>

memref.global @values : memref<8xf32> = dense<[0x7FC00000, 0.0, -0.0, 1.0, -1.0, 6.0, 0x7F800000, 0xFF800000]>
func.func private @remat_rt_print_scalar_i32(i32)

func.func @min_max(%v: memref<8xf32>, %max: memref<8x8xf32>, %min: memref<8x8xf32>, %consts: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#pair_i, #pair_j, #pair, #pair], iterator_types = ["parallel", "parallel"]}
      ins(%v, %v : memref<8xf32>, memref<8xf32>) outs(%max, %min : memref<8x8xf32>, memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o0: f32, %o1: f32):
    %mx = arith.maximumf %a, %b : f32
    %mn = arith.minimumf %a, %b : f32
    linalg.yield %mx, %mn : f32, f32
  }
  // With constants: ReLU6, minimumf(x, +0), maximumf(-0, x), minimumf(x, -0).
  linalg.generic {indexing_maps = [#pair_j, #pair], iterator_types = ["parallel", "parallel"]}
      ins(%v : memref<8xf32>) outs(%consts : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %pz = arith.constant 0.0 : f32
    %nz = arith.constant -0.0 : f32
    %six = arith.constant 6.0 : f32
    %r0 = arith.maximumf %a, %pz : f32
    %relu6 = arith.minimumf %r0, %six : f32
    %minpz = arith.minimumf %a, %pz : f32
    %maxnz = arith.maximumf %nz, %a : f32
    %minnz = arith.minimumf %a, %nz : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %is0 = arith.cmpi eq, %i, %c0 : index
    %is1 = arith.cmpi eq, %i, %c1 : index
    %is2 = arith.cmpi eq, %i, %c2 : index
    %s2 = arith.select %is2, %maxnz, %minnz : f32
    %s1 = arith.select %is1, %minpz, %s2 : f32
    %s0 = arith.select %is0, %relu6, %s1 : f32
    linalg.yield %s0 : f32
  }
  return
}

func.func @print_bits(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %k = %c0 to %n step %c1 {
    %x = memref.load %m[%k] : memref<?xf32>
    %bits = arith.bitcast %x : f32 to i32
    func.call @remat_rt_print_scalar_i32(%bits) : (i32) -> ()
  }
  return
}

func.func @main() {
  %v = memref.get_global @values : memref<8xf32>
  %max = memref.alloc() : memref<8x8xf32>
  %min = memref.alloc() : memref<8x8xf32>
  %consts = memref.alloc() : memref<4x8xf32>
  func.call @min_max(%v, %max, %min, %consts) : (memref<8xf32>, memref<8x8xf32>, memref<8x8xf32>, memref<4x8xf32>) -> ()
  %max1 = memref.collapse_shape %max [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  %min1 = memref.collapse_shape %min [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  %consts1 = memref.collapse_shape %consts [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %maxd = memref.cast %max1 : memref<64xf32> to memref<?xf32>
  %mind = memref.cast %min1 : memref<64xf32> to memref<?xf32>
  %constsd = memref.cast %consts1 : memref<32xf32> to memref<?xf32>
  func.call @print_bits(%maxd) : (memref<?xf32>) -> ()
  func.call @print_bits(%mind) : (memref<?xf32>) -> ()
  func.call @print_bits(%constsd) : (memref<?xf32>) -> ()
  memref.dealloc %max : memref<8x8xf32>
  memref.dealloc %min : memref<8x8xf32>
  memref.dealloc %consts : memref<4x8xf32>
  return
}
