"""Compile instances for sm_90a on the CPU and show how ptxas scheduled each kernel's main loop
(no GPU). For each instance it prints registers, spill stack, the longest loop's length in SASS
instructions, and where that loop issues its global loads (LDG) relative to its first FMA.

The twenty-first session used it on the bf16 depthwise backward-weight windows with 7 taps per
step (docs/conv.md, "Backward-weight's second stage"). Their pixel loop has 22 loads. The session
start's kernels issue 16 of them before the first FFMA. With the per-pass second stage they issue
12, and those kernels ran 19-26% slower on an H100 at the same register count. So loads hoisted
ahead of the arithmetic are a cheap proxy when checking a template change on the CPU. It is a
proxy, not a timing.
usage: python benchmarks/sass_loop_loads.py OP SET INSTANCE [INSTANCE ...] [--cache DIR]
       (PYTHONPATH=.old/plugins/... for another tree's templates; a fresh --cache per tree)
"""

import argparse
import glob
import os
import re
import subprocess
import tempfile
from pathlib import Path

from ckcore import Registry, Settings


def tool(name):
    """Path of one of Triton's bundled CUDA tools (ptxas, cuobjdump, nvdisasm)."""
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name)


def disassemble(cubin_path):
    """(cuobjdump's resource usage, nvdisasm's SASS) of a cubin file, as text."""
    res = subprocess.run([tool("cuobjdump"), "--dump-resource-usage", cubin_path], capture_output=True, text=True).stdout
    sass = subprocess.run([tool("nvdisasm"), "-c", cubin_path], capture_output=True, text=True).stdout
    return res, sass


def _cubin(cache, name):
    for p in glob.glob(os.path.join(cache, "**", "kernel.cubin"), recursive=True):
        src = os.path.join(os.path.dirname(p), "source.py")
        if os.path.exists(src) and f"def {name}(" in open(src).read():
            return p
    return None


def longest_loop(sass):
    """The instructions of the longest backward branch's body."""
    ins, labels = [], {}
    for line in sass.splitlines():
        m = re.match(r"\s*\.?(L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if m:
            ins.append(m.group(1))
    best = []
    for i, text in enumerate(ins):
        m = re.search(r"BRA\s+(?:`\(\.)?(L_x_\d+)", text)
        if m and labels.get(m.group(1), i) < i and i - labels[m.group(1)] > len(best):
            best = ins[labels[m.group(1)]:i + 1]
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("kernel_set")
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--cache", default=None)
    args = ap.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="ck-sass-")
    declared = {i.name: i for i in Registry("sm_90", settings=Settings(cache_dir=cache)).declare(args.op, args.kernel_set)}
    reg = Registry("sm_90", settings=Settings(cache_dir=cache))
    for name in args.instances:
        reg.add(declared[name].family, declared[name].key)
    reg.build(max_workers=1, progress=False)
    for name in args.instances:
        cub = _cubin(cache, name)
        if cub is None:
            print(name, "not built")
            continue
        res, sass = disassemble(cub)
        loop = longest_loop(sass)
        loads = [i for i, x in enumerate(loop) if "LDG" in x]
        fma = next((i for i, x in enumerate(loop) if re.match(r"(@!?U?P\w+\s+)?(FFMA|HMMA|HGMMA|IMMA)\b", x)), len(loop))
        regs = re.search(r"REG:(\d+)", res)
        stack = re.search(r"STACK:(\d+)", res)
        print(f"{name}: regs {regs.group(1) if regs else '?'}, stack {stack.group(1) if stack else '?'}, "
              f"loop {len(loop)} instructions, {len(loads)} LDG, {sum(i < fma for i in loads)} before the first FMA")


if __name__ == "__main__":
    main()
