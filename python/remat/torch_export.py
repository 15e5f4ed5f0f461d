#!/usr/bin/python3
"""Export a PyTorch training step to a linalg-on-tensors MLIR training step.

The exporter's command line (run with Debian's /usr/bin/python3, which has
torch 1.13 and functorch):

  torch_export.py MODEL [--batch N] [--size H W | --seq N] -o STEP.mlir ...

`torch_export.py --help` lists the options. The code is the package
torch_export/ next to this script, whose __init__.py documents the export
and lists its modules; this script only runs its cli.main.
"""

import os
import sys

if __name__ == "__main__":
    # The package is torch_export/ in this script's directory (a directory
    # wins over this file of the same name). Python puts the directory first
    # on sys.path for a script, unless told not to (-P, -I): make sure.
    HERE = os.path.dirname(os.path.realpath(__file__))
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from torch_export.cli import main
    sys.exit(main(sys.argv[1:]))
