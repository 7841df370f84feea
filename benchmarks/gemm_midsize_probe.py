#!/usr/bin/env python3
"""Where do mid-sized bf16 GEMMs lose to cuBLAS? A diagnostic probe (GPU; research code, not a
kernel family).

The bf16 suite rows ckcore loses most on are short kernels (10-170 µs): odd.3000x2000x1000 at
0.67 of cuBLAS, square.1024 0.82, square.2048 0.90, the M = 1024 projections 0.91-0.94
(``docs/performance.md``, fifteenth session). Every full-set instance was no faster
(``benchmarks/results/profile_full_gemm_h100.jsonl``). This probe times, per shape:

- torch.matmul (cuBLAS), and the cuBLAS kernel's name (torch.profiler) for its tile and cluster;
- ckcore's pick (``lightgbm``) through the registry, with and without an L2 flush before runs;
- a stand-alone persistent TMA kernel written like ``gemm_persistent.py.j2`` (grouped tiles,
  flattened loop, 64-column subtiled epilogue) in variants that each remove one suspected cost:
  ``dev``: descriptors made in the kernel (as ckcore's families do), ``host``: made on the host
  and passed by value (Triton's ``TensorDescriptor``), ``nostore``: ``dev`` without the C store
  (a runtime flag keeps the code; output not checked: it isolates the main loop), and ``noflat``:
  ``dev`` with the tile loop not flattened.

Every variant that stores is checked against torch.matmul (fp32 accumulation, max relative error
<= 1e-2). Times are medians of ``ckcore.measure.gpu_times`` (L2 flushed before each run, host
time kept out of the events), interleaved over ``--rounds`` rounds.

Run:  python3 benchmarks/gemm_midsize_probe.py --out $OUT/gemm_midsize_probe.jsonl
CPU check of the kernel:  TRITON_INTERPRET=1 python3 benchmarks/gemm_midsize_probe.py --interpret-check
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

SHAPES = [  # name, M, N, K (all "rcr": A row-major, B stored N x K, C row-major)
    ("odd.3000x2000x1000", 3000, 2000, 1000),
    ("square.1024", 1024, 1024, 1024),
    ("square.2048", 2048, 2048, 2048),
    ("llama3-8b.qkv.fwd.m1024", 1024, 6144, 4096),
    ("llama3-8b.o.fwd.m1024", 1024, 4096, 4096),
    ("square.4096", 4096, 4096, 4096),
    ("square.8192", 8192, 8192, 8192),
]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 128, 8, 3), (64, 256, 64, 4, 4), (256, 128, 64, 8, 3)]
VARIANTS = ("dev", "host", "nostore", "noflat")


@triton.jit(do_not_specialize=["M", "N", "K", "PROGRAMS"])
def _persistent(a, b, c, M, N, K, PROGRAMS, STORE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, HOST: tl.constexpr, FLATTEN: tl.constexpr):
    pid = tl.program_id(0)
    if HOST:
        a_desc, b_desc, c_desc = a, b, c
    else:
        a_desc = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, 64])
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    width = GROUP_M * num_pid_n
    tile_c = pid - PROGRAMS
    for tile in tl.range(pid, num_pid_m * num_pid_n, PROGRAMS, flatten=FLATTEN):
        first_m = (tile // width) * GROUP_M
        size = tl.minimum(num_pid_m - first_m, GROUP_M)
        off_m = (first_m + (tile % width) % size) * BLOCK_M
        off_n = ((tile % width) // size) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for k in range(k_steps):
            acc = tl.dot(a_desc.load([off_m, k * BLOCK_K]), b_desc.load([off_n, k * BLOCK_K]).T, acc)
        tile_c += PROGRAMS
        first_m = (tile_c // width) * GROUP_M
        size = tl.minimum(num_pid_m - first_m, GROUP_M)
        off_m = (first_m + (tile_c % width) % size) * BLOCK_M
        off_n = ((tile_c % width) // size) * BLOCK_N
        if not STORE:  # keep the main loop alive: one element, stored never (M >= 0), unknown when compiling
            tl.store(c + tile_c + tl.arange(0, 1), tl.sum(tl.sum(acc, 1), 0)[None].to(tl.bfloat16), mask=tl.arange(0, 1) < 0 - M)
        else:
            out = acc.to(c_desc.dtype)
            if BLOCK_N == 64:
                c_desc.store([off_m, off_n], out)
            else:
                h0, h1 = tl.split(tl.permute(tl.reshape(out, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
                if BLOCK_N == 128:
                    c_desc.store([off_m, off_n], h0)
                    c_desc.store([off_m, off_n + 64], h1)
                else:
                    q0, q1 = tl.split(tl.permute(tl.reshape(h0, (BLOCK_M, 2, 64)), (0, 2, 1)))
                    q2, q3 = tl.split(tl.permute(tl.reshape(h1, (BLOCK_M, 2, 64)), (0, 2, 1)))
                    c_desc.store([off_m, off_n], q0)
                    c_desc.store([off_m, off_n + 64], q1)
                    c_desc.store([off_m, off_n + 128], q2)
                    c_desc.store([off_m, off_n + 192], q3)


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda" if torch.cuda.is_available() else "cpu")


def make_run(variant: str, cfg, a, b, c, sms: int):
    """A closure launching the stand-alone kernel in ``variant`` with ``cfg`` on (a, b, c)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    bm, bn, bk, w, s = cfg
    M, K = a.shape
    N = b.shape[0]
    programs = min(sms, triton.cdiv(M, bm) * triton.cdiv(N, bn))
    store = variant != "nostore"
    if variant == "host":
        args = (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
                TensorDescriptor.from_tensor(c, [bm, 64]))
    else:
        args = (a, b, c)
    flatten = variant != "noflat"

    def run():
        _persistent[(programs,)](*args, M, N, K, programs, store, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                                 HOST=variant == "host", FLATTEN=flatten, num_warps=w, num_stages=s)
    return run


def cublas_kernel(a, b) -> str:
    """Name of the longest CUDA kernel torch.matmul(a, b.T) runs."""
    from torch.profiler import ProfilerActivity, profile

    torch.matmul(a, b.T)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b.T)
        torch.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.device_time_total > 0]
    return max(events, key=lambda e: e.device_time_total).key if events else ""


def interpret_check():
    """The dev kernel in the interpreter in fp16 (Triton 3.6's interpreter reads bf16 through
    descriptors wrongly here: errors of 1e9 where fp16 and fp32 match)."""
    torch.manual_seed(0)
    for M, N, K in ((70, 136, 96), (128, 64, 200)):
        a = torch.randn(M, K).to(torch.float16)
        b = torch.randn(N, K).to(torch.float16)
        c = torch.full((M, N), float("nan"), dtype=torch.float16)
        make_run("dev", (64, 128, 32, 4, 2), a, b, c, 3)()
        ref = a.float() @ b.float().T
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        print(f"interpreter {M}x{N}x{K}: max relative error {err:.2e}")
        assert err < 1e-2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="gemm_midsize_probe.jsonl")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rep-ms", type=float, default=40)
    ap.add_argument("--shapes", default="", help="comma-separated names (default: all)")
    ap.add_argument("--interpret-check", action="store_true")
    args = ap.parse_args()
    triton.set_allocator(_alloc)
    if args.interpret_check:
        return interpret_check()
    from ckcore import Registry, Settings
    from ckcore.dispatch import launch
    from ckcore.measure import gpu_times
    from ckcore.arch import detect

    arch, gpu = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=gpu)
    reg.declare("gemm", "default")
    spec = reg.catalog.op("gemm")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = open(args.out, "w")
    out.write(json.dumps({"kind": "env", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                          "triton": triton.__version__, "sms": sms, "time": time.time()}) + "\n")
    shapes = [s for s in SHAPES if not args.shapes or s[0] in args.shapes.split(",")]
    for name, M, N, K in shapes:
        p = reg.problem("gemm", M=M, N=N, K=K, dtype="bf16", layout="rcr")
        tensors = spec.random_tensors(p, 0, "cuda")
        a, b = tensors["a"], tensors["b"].T  # b: the K x N operand stored N x K
        assert b.is_contiguous(), "rcr B is stored N x K"
        ref = torch.matmul(a, b.T)
        pick = reg.select(p).instance
        runs = {"torch": lambda: torch.matmul(a, b.T),
                "ckcore": lambda: launch(reg, "gemm", p, dict(tensors), instance=pick.name)}
        row = {"kind": "shape", "name": name, "M": M, "N": N, "K": K, "pick": pick.name, "cublas": cublas_kernel(a, b),
               "errors": {}}
        for cfg in CONFIGS:
            for v in VARIANTS:
                label = f"{v}_{cfg[0]}x{cfg[1]}x{cfg[2]}_w{cfg[3]}_s{cfg[4]}"
                c = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
                try:
                    run = make_run(v, cfg, a, b, c, sms)
                    run()
                    torch.cuda.synchronize()
                except Exception as e:  # a variant that does not compile or launch is reported, not fatal
                    row["errors"][label] = f"{type(e).__name__}: {str(e)[:200]}"
                    continue
                if v != "nostore":
                    err = ((c.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
                    if not err <= 1e-2:
                        row["errors"][label] = f"max relative error {err}"
                        continue
                runs[label] = run
        cc = runs["ckcore"]()
        err = ((cc.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
        row["ckcore_rel_err"] = err
        times = {k: [] for k in runs}
        for _ in range(args.rounds):
            for k, fn in runs.items():
                times[k].append(statistics.median(gpu_times(fn, 10, args.rep_ms)))
        row["us"] = {k: 1e3 * statistics.median(v) for k, v in times.items()}
        # L2 warm (no flush, back-to-back): the cost of a cold start, for torch and the pick.
        for k in ("torch", "ckcore"):
            fn = runs[k]
            fn()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(50):
                fn()
            end.record()
            torch.cuda.synchronize()
            row["us"][k + "_warm"] = 1e3 * start.elapsed_time(end) / 50
        out.write(json.dumps(row) + "\n")
        out.flush()
        us = row["us"]
        best = min((k for k in us if k not in ("torch", "torch_warm", "ckcore_warm")), key=us.get)
        print(f"{name}: torch {us['torch']:.1f} ckcore {us['ckcore']:.1f} ({pick.name}) best {best} {us[best]:.1f} | "
              f"{row['cublas'][:90]}", flush=True)
        for k in sorted(us, key=us.get)[:12]:
            print(f"    {k:34s} {us[k]:8.1f}")
        if row["errors"]:
            print("    errors:", row["errors"])


if __name__ == "__main__":
    sys.exit(main())
