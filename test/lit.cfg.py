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
config.substitutions.append(("%remat_lib_dir", config.remat_lib_dir))
