// remat-print-graph{function=F} on a function without any remat marker: the
// graph is extracted all the same (the TrainingGraphAnalysis only holds
// marked steps, so the pass extracts this one itself) and printed; it used
// to fail without a word.
// RUN: remat-opt %s --remat-print-graph=function=helper -o /dev/null | FileCheck %s
// CHECK: "format": "remat-training-graph"
// CHECK: "name": "arg0"
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
