// RUN: remat-opt %s --remat-generate-main=entry=step | FileCheck %s

// The generated main builds one deterministic input per argument, brackets
// the call with the runtime's step window, and prints every result.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.index 0
// CHECK: arith.remui
// CHECK: %[[W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: call @remat_rt_step_begin() : () -> ()
// CHECK-NEXT: %[[R:.*]]:2 = call @step(%[[X]], %[[W]])
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
// CHECK-NEXT: %[[C0:.*]] = tensor.cast %[[R]]#0 : tensor<f32> to tensor<*xf32>
// CHECK-NEXT: call @remat_rt_print_f32(%[[C0]])
// CHECK-NEXT: %[[C1:.*]] = tensor.cast %[[R]]#1 : tensor<4x8xf32> to tensor<*xf32>
// CHECK-NEXT: call @remat_rt_print_f32(%[[C1]])
// CHECK-DAG: func.func private @remat_rt_print_f32(tensor<*xf32>) attributes {llvm.emit_c_interface}
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) attributes {remat.step} {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %x : tensor<f32>, tensor<4x8xf32>
}
