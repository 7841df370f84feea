"""Dispatch the problems of a gemm suite through ckcore and validate them against the NumPy
float64 reference.

On a GPU every problem runs at its real size; the reference is computed for a random sample of
``--rows`` rows of C (all of C when M is small), so that large problems stay quick. Without a GPU
the kernels run in Triton's interpreter, and each problem is scaled down (M, N, K divided by
``--scale`` and kept >= 1, layout and dtype unchanged), which is reported per line.

usage: python benchmarks/demo.py SUITE [--limit N] [--rows R] [--scale S]
"""

import argparse
import json
import sys

import numpy as np
import torch

import ckcore
from ckcore.dispatch import use_interpreter


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--scale", type=int, default=64)
    args = ap.parse_args()
    interpret = use_interpreter()
    device = "cpu" if interpret else "cuda"
    reg = ckcore.default_registry()
    op = reg.catalog.op("gemm")
    rows = [json.loads(l) for l in open(args.suite) if l.strip()]
    rows = rows[: args.limit] if args.limit else rows
    rng = np.random.default_rng(0)
    failures = 0
    print(f"ckcore demo on {'the Triton interpreter (CPU)' if interpret else torch.cuda.get_device_name()}, arch {reg.arch.arch}")
    for row in rows:
        f = {k: v for k, v in row.items() if k not in ("op", "name")}
        if interpret:
            for d in ("M", "N", "K"):
                f[d] = max(1, f[d] // args.scale)
        p = ckcore.problem("gemm", **f)
        t = op.random_tensors(p, int(rng.integers(1 << 30)), device)
        c = ckcore.dispatch("gemm", p, **t)
        sample = np.sort(rng.choice(p.M, size=min(p.M, args.rows), replace=False))
        a = t["a"][torch.as_tensor(sample, device=device)].double().cpu().numpy()
        ref = op.reference(p, {"a": a, "b": t["b"].double().cpu().numpy()})
        got = c[torch.as_tensor(sample, device=device)].double().cpu().numpy()
        tol = op.tolerance(p)
        err = np.abs(got - ref)
        ok = bool(np.isfinite(got).all() and (err <= tol.atol + tol.rtol * np.abs(ref)).all())
        failures += not ok
        sel = ckcore.select("gemm", p)
        print(f"{'ok  ' if ok else 'FAIL'} {row.get('name', ''):32s} {p.name:38s} {sel.instance.name:44s} "
              f"max_abs_err {err.max():.3g} ({len(sample)} rows checked)")
    print(f"{len(rows) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
