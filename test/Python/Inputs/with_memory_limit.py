"""Runs a command with its address space limited (RLIMIT_AS):
    with_memory_limit.py GIB COMMAND [ARGS...]
so that a test can show that a program does not materialise more than it
needs (an allocation beyond the limit fails at once instead of swapping)."""
import os
import resource
import sys

limit = int(float(sys.argv[1]) * 2 ** 30)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.execvp(sys.argv[2], sys.argv[2:])
