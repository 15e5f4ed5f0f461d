// RUN: not remat-opt %s --remat-apply-profiled-costs="profile=%S/Inputs/apply-profiled-costs-none.txt" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not remat-opt %s --remat-apply-profiled-costs="profile=%S/Inputs/apply-profiled-costs-bad.txt" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not remat-opt %s --remat-apply-profiled-costs="profile=%S/Inputs/apply-profiled-costs-other.txt" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not remat-opt %s --remat-apply-profiled-costs="profile=%t.missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not remat-opt %s --remat-apply-profiled-costs 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: sed -e 's/remat.profile_id = [0-9] : i64, //' %s | not remat-opt --remat-apply-profiled-costs="profile=%S/Inputs/apply-profiled-costs.txt" 2>&1 | FileCheck %s --check-prefix=UNNUMBERED
//
// remat-apply-profiled-costs refuses, with the reason, a profile it cannot
// read or match to the numbered step.

func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.add {remat.profile_id = 0 : i64, remat.cost = 4.0 : f64} ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// NONE: error: remat-apply-profiled-costs: '{{.*}}apply-profiled-costs-none.txt' has no 'remat-profile: op=<id> ns=<ns>' line
// BAD: error: remat-apply-profiled-costs: '{{.*}}apply-profiled-costs-bad.txt': a profile line that does not read 'remat-profile: op=<id> ns=<ns>': 'remat-profile: op=one ns=3'
// OTHER: error: remat-apply-profiled-costs: '{{.*}}apply-profiled-costs-other.txt' times op 7, which no op carries: a profile of another numbered step?
// MISSING: error: remat-apply-profiled-costs: cannot read '{{.*}}.missing': No such file or directory
// NOFILE: error: remat-apply-profiled-costs: no profile given (option profile=<file>)
// UNNUMBERED: error: remat-apply-profiled-costs: no op carries remat.profile_id
