// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-generate-main=entry=step

// expected-error @below {{entry function 'step' not found}}
module {
  func.func @other() {
    return
  }
}

// -----

module {
  func.func @step() {
    return
  }
  // expected-error @below {{remat-generate-main: the module already has a 'main'}}
  func.func @main() {
    return
  }
}
