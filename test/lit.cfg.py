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
llvm_config.add_tool_substitutions(["remat-opt", "remat-run"], tool_dirs)

# GPU tests (later issues) only where a CUDA device is usable.
if os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda")
