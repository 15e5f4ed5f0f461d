// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-assign-arena -o /dev/null
//
// remat-assign-arena checks the plan's offsets against the buffers'
// lifetimes in the program: two buffers alive at once never overlap.

#id = affine_map<(i) -> (i)>
func.func @overlap(%x: memref<16xf32>) attributes {remat.arena_bytes = 128 : i64} {
  %a = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attrs = {remat.operand_offsets = [-1, 0]} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  // expected-error @+1 {{overlaps a buffer alive at the same time}}
  %b = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) attrs = {remat.operand_offsets = [0, 32]} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

#id = affine_map<(i) -> (i)>
func.func @outside(%x: memref<16xf32>) attributes {remat.arena_bytes = 32 : i64} {
  // expected-error @+1 {{does not fit the arena of 32 bytes}}
  %a = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attrs = {remat.operand_offsets = [-1, 0]} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %a : memref<16xf32>
  return
}
