"""How the L2 flush before each timed run changes memory-bound times (GPU machine).

``ckcore.measure.gpu_times`` (like ``triton.testing.do_bench``) writes 256 MB before every timed
run. The flush leaves L2 (50 MB on an H100 or H200) full of dirty lines, which the timed kernel
then writes back to HBM while it streams its own bytes. This probe times, per depthwise row of
the conv suite (forward), under three flushes:

- ``dirty``: 256 MB written (the bench's flush);
- ``clean``: 256 MB written, then 256 MB of another buffer read (a sum), so L2 holds clean lines
  and no run finds its inputs there;
- ``none``: no flush (inputs may sit in L2);

three things: the minimum-traffic kernel of the row (a Triton kernel that reads every input
element once and writes every output element once: y[i] = sum of x[r·i .. r·i + r - 1], r =
input / output elements), ckcore's default-set pick, and cuDNN (torch, channels-last). Times: CUDA
events around each run, median of 50 runs after 5 warm-up runs, µs. Also the 1 GiB
device-to-device copy bandwidth (``benchmarks/dw_roofline.py``'s measure) under each flush.
usage: python benchmarks/flush_probe.py [--rows NAME,...] [--op grouped_conv_fwd] > OUT.jsonl
"""

import argparse
import json
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_probe import default_registry, named_rows, problem_tensors  # noqa: E402


@triton.jit
def _stream(x_ptr, y_ptr, n_out, R: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n_out
    acc = tl.load(x_ptr + i * R, mask=ok, other=0.0).to(tl.float32)
    for j in tl.static_range(1, R):
        acc += tl.load(x_ptr + i * R + j, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + i, acc.to(y_ptr.dtype.element_ty), mask=ok)


def stream(x, y):
    r = x.numel() // y.numel()
    assert r * y.numel() == x.numel()
    _stream[(triton.cdiv(y.numel(), 1024),)](x, y, y.numel(), R=r, BLOCK=1024, num_warps=4)


class Flush:
    def __init__(self):
        self.w = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
        self.r = torch.ones(64 << 20, dtype=torch.float32, device="cuda")  # 256 MB
        self.s = torch.empty((), dtype=torch.float32, device="cuda")

    def __call__(self, mode):
        if mode in ("dirty", "clean"):
            self.w.zero_()
        if mode == "clean":
            torch.sum(self.r, dim=0, out=self.s)


def times_us(fn, flush, mode, reps=50):
    for _ in range(5):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    torch.cuda._sleep(int(2e9 * 0.02))  # queue the batch behind a sleep: host time stays outside the events
    for a, b in ev:
        flush(mode)
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="")
    ap.add_argument("--op", default="grouped_conv_fwd")
    args = ap.parse_args()
    from ckcore.dispatch import launch
    reg, spec = default_registry(args.op)
    name = torch.cuda.get_device_name()
    flush = Flush()
    modes = ("dirty", "clean", "none")
    src = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    rec = {"row": "copy_1GiB", "gpu": name}
    for m in modes:
        rec[m] = {"copy_gbps": 2 * src.numel() / times_us(lambda: dst.copy_(src), flush, m, reps=20) / 1e3}
    print(json.dumps(rec), flush=True)
    del src, dst
    if args.rows:
        rows = named_rows(args.rows.split(","))
    else:
        rows = [r for r in (json.loads(line) for line in open("benchmarks/suites/conv.jsonl"))
                if r["C"] == r["G"]]
    for row in rows:
        p, t = problem_tensors(spec, row)
        pick = reg.select(spec.problem(**row)).instance
        src_t, dst_t = [t[k] for k in spec.inputs if k != "w"][0], t[spec.output]
        nbytes = (src_t.numel() + dst_t.numel()) * src_t.element_size()
        big, small = (src_t, dst_t) if src_t.numel() >= dst_t.numel() else (dst_t, src_t)
        floor_out = torch.empty(small.numel(), dtype=small.dtype, device="cuda")
        flat = torch.as_strided(big, (big.numel(),), (1,))  # dense in memory: its elements in storage order
        fns = {"floor": lambda: stream(flat, floor_out) if big.numel() % small.numel() == 0 else None,
               "ckcore": lambda: launch(reg, args.op, p, t, instance=pick.name, interpret=False),
               "cudnn": spec.torch_baseline(p, t)}
        rec = {"row": row["name"], "op": args.op, "MB": nbytes / 1e6, "pick": pick.name}
        for m in modes:
            rec[m] = {k: round(times_us(f, flush, m), 2) for k, f in fns.items()}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
