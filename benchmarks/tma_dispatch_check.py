"""Host cost of one ckcore dispatch of the selected instance, per suite row (µs, no GPU sync),
next to the kernel's do_bench time: shows whether launch overhead can outlast do_bench's L2 flush.

    python benchmarks/tma_dispatch_check.py OP SUITE
"""
import sys
import time

import torch
from triton.testing import do_bench

from ckcore import Registry
from ckcore.bench import problem_fields, read_suite
from ckcore.dispatch import launch

op, suite = sys.argv[1], sys.argv[2]
reg = Registry()
reg.declare(op, "default")
spec = reg.catalog.op(op)
for row in read_suite(suite, op, spec.suite_ops):
    p = spec.problem(**problem_fields(row))
    t = spec.random_tensors(p, 0, "cuda")
    launch(reg, op, p, t)
    name = reg.select(p).instance.name
    fn = lambda: launch(reg, op, p, t, instance=name)  # noqa: E731
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(200):
        fn()
    host = (time.perf_counter() - t0) / 200 * 1e6
    torch.cuda.synchronize()
    ms = [do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3 for _ in range(3)]
    print(f"{row['name']:22s} {name:44s} host {host:6.1f} us  do_bench {' '.join(f'{m:6.1f}' for m in ms)} us", flush=True)
