// RUN: remat-opt %s --split-input-file --remat-assign-arena | FileCheck %s
// RUN: remat-opt %s --split-input-file --remat-assign-arena --remat-lower-library-calls="target=gpu" | FileCheck %s --check-prefix=LIB
//
// remat-assign-arena applies the plan's placement (remat-apply with arena) to
// the bufferized step: the step's arena is asked for once at the top (key 0:
// the module's first step), every buffer becomes a view of it at the offset
// that the ops using it carry (remat.operand_offsets) and its free
// disappears; the returned buffer is a view too, and a caller's free of it
// is removed. A buffer without a planned offset stays an allocation.

// CHECK-LABEL: func.func @step
// CHECK-NEXT: %[[KEY:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[SIZE:.*]] = arith.constant 192 : i64
// CHECK-NEXT: %[[ARENA:.*]] = call @remat_rt_arena(%[[KEY]], %[[SIZE]]) {remat.arena_bytes = 192 : i64} : (i64, i64) -> memref<?xi8>
// CHECK: %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.*]] = memref.view %[[ARENA]][%[[OA]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[OB:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[B:.*]] = memref.view %[[ARENA]][%[[OB]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[OC:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = memref.view %[[ARENA]][%[[OC]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[OR:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[R:.*]] = memref.view %[[ARENA]][%[[OR]]][] : memref<?xi8> to memref<16xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.dealloc %[[T]]
// CHECK-NOT: memref.dealloc
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @caller
// CHECK-NEXT: %[[RES:.*]] = call @step
// CHECK-NEXT: return
// CHECK: func.func private @remat_rt_arena(i64, i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
#id = affine_map<(i) -> (i)>
func.func @step(%x: memref<16xf32>) -> memref<16xf32> attributes {remat.arena_bytes = 192 : i64} {
  %a = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attrs = {remat.operand_offsets = [-1, 0]} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  %b = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) attrs = {remat.operand_offsets = [0, 64]} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %a : memref<16xf32>
  // %a is dead: %c takes its place.
  %c = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : memref<16xf32>) outs(%c : memref<16xf32>) attrs = {remat.operand_offsets = [64, 0]} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %b : memref<16xf32>
  %r = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<16xf32>) outs(%r : memref<16xf32>) attrs = {remat.operand_offsets = [0, 128]} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %c : memref<16xf32>
  // Not planned: stays an allocation, freed where it was.
  %t = memref.alloc() : memref<16xf32>
  memref.copy %r, %t : memref<16xf32> to memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  return %r : memref<16xf32>
}
func.func @caller(%x: memref<16xf32>) {
  %r = call @step(%x) : (memref<16xf32>) -> memref<16xf32>
  memref.dealloc %r : memref<16xf32>
  return
}

// -----

// A library call's workspace is its planned part of the arena: no
// allocation, no free.
// LIB-LABEL: func.func @workspace
// LIB: %[[ARENA:.*]] = call @remat_rt_arena
// LIB: %[[OW:.*]] = arith.constant 4096 : index
// LIB-NEXT: %[[WS:.*]] = memref.view %[[ARENA]][%[[OW]]][] : memref<?xi8> to memref<4096xi8>
// LIB: call @remat_lib_contraction
// LIB-NOT: memref.dealloc
func.func @workspace(%a: memref<32x16xf32>, %b: memref<16x32xf32>) -> memref<32x32xf32> attributes {remat.arena_bytes = 8192 : i64} {
  %c = memref.alloc() : memref<32x32xf32>
  linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = 4096 : i64, remat.workspace_offset = 4096 : i64, remat.operand_offsets = [-1, -1, -1]} ins(%a, %b : memref<32x16xf32>, memref<16x32xf32>) outs(%c : memref<32x32xf32>)
  return %c : memref<32x32xf32>
}
