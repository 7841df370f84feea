#!/usr/bin/env python3
"""Every default-set TMA convolution instance (``conv_tma_fwd``, ``conv_tma_bwd_data``,
``conv_tma_bwd_weight``) that supports a case, run on the GPU against the NumPy float64 reference:
a check of the TMA kernels alone, cheaper than the conv GPU tests (which build every default
instance of the three ops first). The cases are the GPU tests' (``plugins/grouped_conv/tests``)
that reach the TMA families: merged groups, 1x1 folded into one row, 1-D and 3-D, padding cut
off by TMA's zero fill, strides above 1 (forward, backward-weight); fp16, bf16 and fp32,
channels-last.

usage: python3 benchmarks/conv_tma_check.py [--cases resnext_cg16,pointwise,...]
Prints one line per (op, case, dtype) and a summary; exits 1 if any instance failed.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "grouped_conv" / "tests"))

from cases import GPU_CASES, layout  # noqa: E402

from ckcore import Registry  # noqa: E402
from ckcore.measure import validate  # noqa: E402

# The GPU tests' cases that reach the TMA families.
CASES = {name: GPU_CASES[name] for name in ("resnext_like", "resnext_cg16", "regnet_like", "dense_3x3", "conv3d",
                                            "pointwise", "conv1d_groups48", "wgrad_long", "tma_s2", "tma_pointwise_s2",
                                            "tma_groups_s2", "tma_3d_s2", "tma_1d_s2")}
OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--dtypes", default="fp16,bf16,fp32")
    args = ap.parse_args()
    reg = Registry()
    for op in OPS:
        reg.declare(op, "default")
    tma = [i for i in reg.instances.values() if i.family.startswith("conv_tma")]
    report = reg.build(max_workers=16, progress=False, instances=tma)
    print(f"built {len(tma)} TMA instances ({report.compiled} compiled), {report.failed} failed {sorted(report.failures)}", flush=True)
    runs = fails = 0
    for op in OPS:
        for name in args.cases.split(","):
            fields = CASES[name]
            for dtype in args.dtypes.split(","):
                p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
                cands, _ = reg.candidates(p)
                bad = []
                mine = [c.instance.name for c in cands if c.instance.family.startswith("conv_tma")]
                for inst in mine:
                    v = validate(reg, op, p, instance=inst, seed=len(inst), interpret=False)
                    runs += 1
                    if not v.passed:
                        bad.append((inst, v.max_rel_err))
                fails += len(bad)
                print(f"{op:24s} {name:16s} {dtype:5s} {len(mine):3d} TMA instances, {len(bad)} failed {bad}", flush=True)
    print(f"summary: {runs} runs, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
