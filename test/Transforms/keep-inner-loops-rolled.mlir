// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-keep-inner-loops-rolled))" | FileCheck %s
// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-keep-inner-loops-rolled{min-trip-count=4}))" | FileCheck %s --check-prefix=FOUR
// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-keep-inner-loops-rolled),convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// A padded copy's rows: the 32-iteration inner loop is kept rolled, the
// outer one and the 8-iteration one are LLVM's to unroll.
// CHECK-DAG: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[ROLLED:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @rows
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:           } {loop_annotation = #[[ROLLED]]}
// CHECK-NEXT:    }{{$}}
// CHECK:         scf.for
// CHECK:         }{{$}}
// CHECK-NEXT:    return

// FOUR-LABEL: func.func @rows
// FOUR-COUNT-2: loop_annotation

// The back edge of the rolled loop carries llvm.loop.unroll.disable.
// LLVM: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[DISABLE:[0-9]+]]}
// LLVM: ![[DISABLE]] = !{!"llvm.loop.unroll.disable"}
func.func @rows(%in: memref<16x32xf32>, %out: memref<16x34xf32>, %short: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %x = memref.load %in[%i, %j] : memref<16x32xf32>
      %j1 = arith.addi %j, %c1 : index
      memref.store %x, %out[%i, %j1] : memref<16x34xf32>
    }
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %y = memref.load %short[%k] : memref<8xf32>
    %z = arith.addf %y, %y : f32
    memref.store %z, %short[%k] : memref<8xf32>
  }
  return
}
