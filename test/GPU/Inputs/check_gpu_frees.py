"""Checks that the GPU program allocates, computes and frees like the CPU one.

Usage: check_gpu_frees.py CPU_DUMP GPU_DUMP

CPU_DUMP: stderr of `remat-opt --remat-lower-to-cpu=... 
          --mlir-print-ir-after=remat-early-free`;
GPU_DUMP: stderr of `remat-opt --remat-lower-to-gpu=...
          --mlir-print-ir-after=gpu-async-region`.

For every function, the sequence of events in its body must be the same:
`alloc <type>` (memref.alloc / gpu.alloc), `compute` (a top-level linalg op /
a gpu.launch_func: every linalg op becomes exactly one kernel) and `free <k>`
(memref.dealloc / gpu.dealloc of the k-th allocation). On the GPU side the
async tokens must form one chain per block: `gpu.wait async` starts it, every
allocation, launch and free depends on exactly the previous token, and a
synchronous `gpu.wait` on the last token comes before any call and before the
return. Prints one line per function and exits non-zero on the first failure.
"""
import re
import sys

DUMP = re.compile(r"^// -----// IR Dump After .* //----- //$")
FUNC = re.compile(r"^func\.func (?:private )?@([\w$.]+)")


def functions(path):
    """Maps function name -> list of body lines, from a print-ir-after dump
    (one function per dump; declarations have no body and are skipped)."""
    result, name, lines, expect_header = {}, None, [], False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if DUMP.match(line):
                if name and lines:
                    result[name] = lines
                name, lines, expect_header = None, [], True
                continue
            if expect_header:
                expect_header = False
                m = FUNC.match(line)
                name = m.group(1) if m and line.endswith("{") else None
                continue
            if name is not None:
                lines.append(line)
    if name and lines:
        result[name] = lines
    return result


def cpu_events(lines):
    events, index = [], {}
    for line in lines:
        m = re.match(r"^\s{2}(%[\w.]+) = memref\.alloc\(\) : (.*)$", line)
        if m:
            index[m.group(1)] = len(index)
            events.append(("alloc", m.group(2).strip()))
            continue
        m = re.match(r"^\s{2}memref\.dealloc (%[\w.]+) :", line)
        if m:
            events.append(("free", index[m.group(1)]))
            continue
        if re.match(r"^\s{2}(%[\w.]+ = )?linalg\.", line):
            events.append(("compute",))
    return events


def gpu_events(lines, fname):
    events, index = [], {}
    token = None  # the current token of the chain
    chain_ok = True

    def depend(deps, produced):
        nonlocal token, chain_ok
        if token is None or deps != [token]:
            sys.exit(f"FAIL: @{fname}: '{line.strip()}' depends on {deps}, "
                     f"expected [{token}]")
        token = produced

    for line in lines:
        m = re.match(r"^\s{2}(%[\w.]+) = gpu\.wait async$", line)
        if m:
            if token is not None:
                sys.exit(f"FAIL: @{fname}: new chain while {token} is live")
            token = m.group(1)
            continue
        m = re.match(r"^\s{2}gpu\.wait \[(%[\w.]+)\]$", line)
        if m:
            if m.group(1) != token:
                sys.exit(f"FAIL: @{fname}: gpu.wait on {m.group(1)}, "
                         f"expected {token}")
            token = None
            continue
        m = re.match(r"^\s{2}(%[\w.]+), (%[\w.]+) = gpu\.alloc async "
                     r"\[([^\]]*)\] \(\) : (.*)$", line)
        if m:
            depend([d.strip() for d in m.group(3).split(",")], m.group(2))
            index[m.group(1)] = len(index)
            events.append(("alloc", m.group(4).strip()))
            continue
        m = re.match(r"^\s{2}(%[\w.]+) = gpu\.dealloc async \[([^\]]*)\] "
                     r"(%[\w.]+) :", line)
        if m:
            depend([d.strip() for d in m.group(2).split(",")], m.group(1))
            events.append(("free", index[m.group(3)]))
            continue
        m = re.match(r"^\s{2}(%[\w.]+) = gpu\.launch_func async "
                     r"\[([^\]]*)\]", line)
        if m:
            depend([d.strip() for d in m.group(2).split(",")], m.group(1))
            events.append(("compute",))
            continue
        if re.search(r"\bgpu\.(alloc|dealloc|launch_func|memcpy)\b", line):
            sys.exit(f"FAIL: @{fname}: synchronous or unexpected GPU op: "
                     f"{line.strip()}")
        if re.match(r"^\s{2}((%[\w.:, ]+) = )?(func\.)?(call|return)\b", line):
            if token is not None:
                sys.exit(f"FAIL: @{fname}: '{line.strip()}' while GPU work "
                         f"on {token} is not synchronized")
    return events


def main(argv):
    cpu, gpu = functions(argv[0]), functions(argv[1])
    if not cpu or set(cpu) != set(gpu):
        sys.exit(f"FAIL: functions differ: CPU {sorted(cpu)}, "
                 f"GPU {sorted(gpu)}")
    for name in sorted(cpu):
        a, b = cpu_events(cpu[name]), gpu_events(gpu[name], name)
        if a != b:
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    sys.exit(f"FAIL: @{name}: event {i}: CPU {x}, GPU {y}")
            sys.exit(f"FAIL: @{name}: {len(a)} CPU events, {len(b)} GPU")
        print(f"@{name}: same {len(a)} events: "
              f"{sum(e[0] == 'alloc' for e in a)} allocs, "
              f"{sum(e[0] == 'compute' for e in a)} kernels, "
              f"{sum(e[0] == 'free' for e in a)} frees; one token chain")


if __name__ == "__main__":
    main(sys.argv[1:])
