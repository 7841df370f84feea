"""Where the time of a conv dispatch goes (GPU machine): CPU cost per launch, GPU time from a
CUDA graph of 20 launches, do_bench's figure, and the compiled kernel's registers, spills and
vector loads, for a few suite rows and instances.
usage: python benchmarks/conv_probe.py OP [ROW_INDEX ...] [--all-instances]"""

import argparse
import json
import re
import time

import torch
import triton.testing

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.dispatch import launch


def graph_ms(fn, reps=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / reps)
    return sorted(times)[len(times) // 2]


def problem_tensors(spec, row: dict, device: str = "cuda"):
    """(problem, tensors) of a suite row for op ``spec``: seed-0 random inputs and an empty output."""
    p = spec.problem(**row)
    t = spec.random_tensors(p, 0, device)
    t[spec.output] = spec.empty_output(p, t[spec.inputs[0]])
    return p, t


def default_registry(op: str):
    """(registry of the GPU here with ``op``'s default set declared, the op's spec), with
    ``torch.backends.cudnn.benchmark`` on for the cuDNN baselines."""
    torch.backends.cudnn.benchmark = True
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare(op, "default")
    return reg, reg.catalog.op(op)


def named_rows(names, suite: str = "benchmarks/suites/conv.jsonl"):
    """The suite's rows whose name is in ``names``, in suite order."""
    want = set(names)
    return [r for r in (json.loads(l) for l in open(suite) if l.strip()) if r["name"] in want]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("rows", nargs="*", type=int)
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    ap.add_argument("--set", default="default")
    ap.add_argument("--kernel-set-file", default=None, help="a JSON kernel set instead of --set")
    ap.add_argument("--fast", action="store_true", help="CUDA-graph time only")
    ap.add_argument("--top", type=int, default=1, help="instances per row, best estimate first (0: all)")
    args = ap.parse_args()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    if args.kernel_set_file:
        reg.load_json(args.kernel_set_file)
    else:
        reg.declare(args.op, args.set)
    reg.build(progress=False)
    spec = reg.catalog.op(args.op)
    lines = [json.loads(l) for l in open(args.suite) if l.strip()]
    for i in args.rows or range(len(lines)):
        row = lines[i]
        p, t = problem_tensors(spec, row)
        base = spec.torch_baseline(p, t)
        torch_g = graph_ms(base)
        ranked = reg.select(p).ranked
        for r in ranked[: args.top or None]:
            inst = r.instance
            fn = lambda: launch(reg, args.op, p, t, instance=inst.name, interpret=False)  # noqa: E731
            fn()
            torch.cuda.synchronize()
            cpu_us = bench = float("nan")
            if not args.fast:
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                cpu_us = (time.perf_counter() - t0) / 200 * 1e6
                torch.cuda.synchronize()
                bench = triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
            g = graph_ms(fn)
            kern = reg.load(inst, interpret=False)
            kern = getattr(kern, "kernel", kern)
            entry = reg.cache._entry_dir(reg.fingerprint(inst))
            ptx = (entry / "kernel.ptx").read_text() if (entry / "kernel.ptx").exists() else ""
            rec = {"row": row.get("name"), "instance": inst.name, "estimate_ms": r.score, "cpu_us_per_launch": cpu_us,
                   "do_bench_ms": bench, "graph_ms": g, "torch_graph_ms": torch_g,
                   "tflops_graph": spec.flops(p) / g / 1e9,
                   "n_regs": getattr(kern, "n_regs", None), "n_spills": getattr(kern, "n_spills", None),
                   "ld_v4": len(re.findall(r"ld\.global[.\w]*\.v4", ptx)), "ld_scalar_b16": len(re.findall(r"ld\.global[.\w]*\.b16", ptx)),
                   "wgmma": len(re.findall(r"wgmma", ptx)), "mma_sync": len(re.findall(r"mma\.sync", ptx))}
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
