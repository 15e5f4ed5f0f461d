# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "REMAT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.remat_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%PYTHON", config.python_executable))
config.substitutions.append(("%remat_src_root", config.remat_src_root))
config.substitutions.append(("%examples", os.path.join(config.remat_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.remat_tools_dir, append_path=True)

# oneDNN's scratchpads (the workspace of the CPU library calls, part of every
# plan) depend on its thread count: one thread, so that the byte figures the
# tests check are the same on every machine.
config.environment["OMP_NUM_THREADS"] = "1"
# remat-run JIT-compiles at -O0 in the tests: they check results and bytes,
# not speed (bench/), and LLVM's -O3 takes seconds on a model's step. Tests
# of the optimised code pass --opt-level themselves.
config.environment["REMAT_RUN_OPT_LEVEL"] = "0"

tool_dirs = [config.remat_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["remat-opt", "remat-run", "remat-solve"],
                                  tool_dirs)

# GPU tests (later issues) only where a CUDA device is usable.
if os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda")

# Without a device (docs/gpu.md): `cuda-runtime` when the project's CUDA
# runtime was built (GPU executables can be linked), `ptxas` when the
# toolkit's ptxas can assemble PTX (format=cubin, PTX validation).
if getattr(config, "remat_have_cuda", "OFF").upper() in ("ON", "TRUE", "1"):
    config.available_features.add("cuda-runtime")
_ptxas = os.path.join(getattr(config, "remat_cuda_toolkit", ""), "bin", "ptxas")
if getattr(config, "remat_cuda_toolkit", "") and os.access(_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
config.substitutions.append(("%host_cc", getattr(config, "host_cc", "cc")))
config.substitutions.append(("%host_cxx", getattr(config, "host_cxx", "c++")))
config.substitutions.append(("%remat_lib_dir", config.remat_lib_dir))

# Integration (test/Integration): install this build tree and build an
# out-of-tree consumer against it; load the plugin into a stock mlir-opt.
config.substitutions.append(("%remat_build_root", config.remat_obj_root))
config.substitutions.append(("%cmake_exe", config.cmake_command))
config.substitutions.append(
    ("%consumer_cmake_args",
     "%s -DCMAKE_CXX_COMPILER=%s -DMLIR_DIR=%s -DLLVM_DIR=%s"
     % (config.consumer_generator_args, config.host_cxx,
        config.mlir_cmake_dir, config.llvm_cmake_dir)))
# `remat-plugin`: RematPlugin.so was configured and the mlir-opt of the MLIR
# we build against exists (Debian's links the shared libMLIR.so, as the
# plugin does: one copy of MLIR's registries in the process).
_mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
if getattr(config, "remat_plugin", "") and os.access(_mlir_opt, os.X_OK):
    config.available_features.add("remat-plugin")
config.substitutions.append(("%remat_plugin", config.remat_plugin))
config.substitutions.append(("%stock_mlir_opt", _mlir_opt))
