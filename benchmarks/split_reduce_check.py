#!/usr/bin/env python3
"""Every default-set convolution instance with a split reduction (``split_k`` > 1: the pointer,
filter-row and TMA families of the three grouped-conv ops) run on the GPU on cases where it
applies: against the NumPy float64 reference, then twice more on the same inputs, whose outputs
must be bitwise equal to the first (the split partials are summed in a fixed order,
``conv_common.split_k_reduce``, whatever order the programs finish in). Cheaper than the conv
GPU tests, which build every default instance of the three ops first.

usage: python3 benchmarks/split_reduce_check.py [--dtypes bf16,fp32] [--min-split 2]
Prints one line per (op, case, dtype) and a summary; exits 1 if any run failed or differed.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "grouped_conv" / "tests"))

from cases import GPU_CASES, case, layout  # noqa: E402

import torch  # noqa: E402

from ckcore import Registry  # noqa: E402
from ckcore.dispatch import launch  # noqa: E402
from ckcore.measure import compare, inputs_for, poisoned_output  # noqa: E402

OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")
# The GPU tests' cases plus two whose long reductions (N·output pixels) admit splits up to 256.
CASES = {**{n: GPU_CASES[n] for n in ("dense_3x3", "wgrad_long", "pointwise", "resnext_like", "conv3d", "first_layer",
                                       "tma_s2", "conv1d_groups48")},
         "wgrad_1x1_long": case(2, 16, 1, 64, 64, (56, 56), 1),
         "wgrad_3x3_deep": case(2, 8, 1, 128, 128, (14, 14), 3, pad=1)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="bf16,fp32")
    ap.add_argument("--min-split", type=int, default=2)
    args = ap.parse_args()
    dtypes = args.dtypes.split(",")
    reg = Registry()
    for op in OPS:
        reg.declare(op, "default")
    split = [i for i in reg.instances.values() if getattr(i.key, "split_k", 1) >= args.min_split
             and i.family.startswith("conv_") and i.key.dtype.value in dtypes]
    report = reg.build(max_workers=16, progress=False, instances=split)
    print(f"built {len(split)} split instances ({report.compiled} compiled), {report.failed} failed "
          f"{sorted(report.failures)}", flush=True)
    names = {i.name for i in split}
    runs = fails = 0
    for op in OPS:
        spec = reg.catalog.op(op)
        for cname, fields in CASES.items():
            for dtype in dtypes:
                p = reg.problem(op, **fields, dtype=dtype, layout=layout(fields["ndim"], True))
                cands, _ = reg.candidates(p)
                mine = [c.instance.name for c in cands if c.instance.name in names]
                if not mine:
                    continue
                bad = []
                arrays, tensors = inputs_for(reg, op, p, seed=runs, interpret=False)
                ref, tol = spec.reference(p, arrays), spec.tolerance(p)
                for inst in mine:
                    outs = []
                    for _ in range(3):
                        tensors[spec.output] = poisoned_output(reg, op, p, tensors)
                        outs.append(launch(reg, op, p, tensors, instance=inst, interpret=False).clone())
                    v = compare(outs[0].double().cpu().numpy(), ref, tol.atol, tol.rtol)
                    same = all(torch.equal(o, outs[0]) for o in outs[1:])
                    runs += 1
                    if not (v.passed and same):
                        bad.append((inst, v.max_rel_err, "deterministic" if same else "outputs differ"))
                fails += len(bad)
                print(f"{op:24s} {cname:16s} {dtype:5s} {len(mine):3d} split instances, {len(bad)} failed {bad}",
                      flush=True)
    print(f"summary: {runs} runs (each checked and repeated twice bitwise), {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
