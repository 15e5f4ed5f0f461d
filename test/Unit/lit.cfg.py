# -*- Python -*-
# The GoogleTest binaries (unittests/), run by lit so that check-remat covers
# them; every binary whose name ends in "Tests" is a suite.
import os

import lit.formats

config.name = "REMAT-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.remat_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
