"""The floor under small-M GEMM on the GPU, as this project times it: for the suite's rows with
M <= 16, do_bench (median; it flushes L2 before each run, leaving it full of dirty lines) of
torch.matmul (cuBLAS), of a Triton kernel that only streams B once (a sum of its elements, one
fp32 partial per program), and of a copy of B (read + write), with the GB/s of each over B's
bytes (the copy over twice B's bytes). If cuBLAS runs near the read floor, no kernel can beat it
by much on that row.
usage (GPU): python benchmarks/gemv_floor.py [OUT.jsonl]"""

import json
import sys

import torch
import triton
import triton.language as tl
import triton.testing

BLOCK = 4096
STEPS = 4


@triton.jit
def _stream(src, partial, n, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(STEPS):
        offs = (pid * STEPS + s) * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(src + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(partial + pid, tl.sum(acc, axis=0))


def read_once(b, partial):
    n = b.numel()
    _stream[(triton.cdiv(n, BLOCK * STEPS),)](b, partial, n, BLOCK=BLOCK, STEPS=STEPS, num_warps=8)


def main(out_path):
    rows = [json.loads(line) for line in open("benchmarks/suites/gemm.jsonl") if line.strip()]
    rows = [r for r in rows if r["M"] <= 16 and r["layout"] == "rcr"]
    out = []
    for r in rows:
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[r["dtype"]]
        a = torch.randn(r["M"], r["K"], device="cuda", dtype=dt)
        b = torch.randn(r["N"], r["K"], device="cuda", dtype=dt)
        partial = torch.empty(triton.cdiv(b.numel(), BLOCK * STEPS), device="cuda", dtype=torch.float32)
        dst = torch.empty_like(b)
        read_once(b, partial)
        torch.cuda.synchronize()
        assert torch.allclose(partial.sum(), b.float().sum(), rtol=1e-2, atol=1.0)
        nbytes = b.numel() * b.element_size()
        t = {"torch_ms": triton.testing.do_bench(lambda: torch.matmul(a, b.t()), return_mode="median"),
             "read_ms": triton.testing.do_bench(lambda: read_once(b, partial), return_mode="median"),
             "copy_ms": triton.testing.do_bench(lambda: dst.copy_(b), return_mode="median")}
        row = {"name": r["name"], "M": r["M"], "N": r["N"], "K": r["K"], "dtype": r["dtype"], "b_bytes": nbytes, **t,
               "torch_gbps": nbytes / t["torch_ms"] / 1e6, "read_gbps": nbytes / t["read_ms"] / 1e6,
               "copy_gbps": 2 * nbytes / t["copy_ms"] / 1e6, "torch_over_read": t["torch_ms"] / t["read_ms"]}
        out.append(row)
        print(f"{r['name']:28s} B {nbytes / 2**20:7.1f} MiB  torch {row['torch_gbps']:6.0f}  read {row['read_gbps']:6.0f}"
              f"  copy {row['copy_gbps']:6.0f} GB/s  torch/read {row['torch_over_read']:.2f}")
    env = {"kind": "env", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    if out_path:
        with open(out_path, "w") as f:
            for row in [env] + out:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
