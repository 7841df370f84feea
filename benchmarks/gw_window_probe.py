"""First measurements of tensor-core grouped windows (``gw_win_bwd_data``, ``gw_win_bwd_weight``)
on ResNeXt's grouped rows of the conv suite (GPU machine): each row's default-set selection,
every instance of the family's full set in the row's dtype that supports it (``--tiles``:
only these (block_h, block_w, block_c, num_warps) tiles), and cuDNN through torch, timed with
``triton.testing.do_bench`` (L2 flushed before every run, as ``ckcore bench``); each window
kernel's output checked against torch's fp32 backward of the same inputs (relative error: max
abs error over max abs value; the output is filled with NaN first, so an unwritten element makes
it NaN). One JSON line per row; times in µs.
usage: python benchmarks/gw_window_probe.py [--op grouped_conv_bwd_weight] [--rows NAME,...] [--tiles 64x2x32x4,...]
"""

import argparse
import json
import os
import sys

import torch
import triton.testing

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.dispatch import launch
from ckcore.errors import CompileError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_probe import named_rows, problem_tensors  # noqa: E402

ROWS = "resnext50.l1.g32,resnext50.l2.g32,resnext50.l2.g32s2,resnext50.l3.g32,resnext50.l4.g32,resnext50.l2.g32.b1,resnext3d.g32"


def reference(op, row, t):
    """torch's fp32 backward of the op's inputs (aten.convolution_backward, any ndim)."""
    nd = row["ndim"]
    if op == "grouped_conv_bwd_data":
        x = torch.empty(t["dx"].shape, device="cuda")
        dy, w, mask = t["dy"].float(), t["w"].float(), [True, False, False]
    else:
        x, dy, w, mask = t["x"].float(), t["dy"].float(), torch.empty(t["dw"].shape, device="cuda"), [False, True, False]
    out = torch.ops.aten.convolution_backward(dy, x, w, None, row["stride"], row["pad"], row["dilation"], False,
                                              [0] * nd, row["G"], mask)
    return out[0] if mask[0] else out[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default="grouped_conv_bwd_weight", choices=["grouped_conv_bwd_data", "grouped_conv_bwd_weight"])
    ap.add_argument("--rows", default=ROWS)
    ap.add_argument("--tiles", default="", help="comma-separated BHxBWxBCxWARPS; default every tile of the full set")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    arch, name = detect()
    op = args.op
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare(op, "default")
    picks = {}
    spec = reg.catalog.op(op)
    rows = named_rows(args.rows.split(","))
    for row in rows:  # default selections first, before the probed instances join the registry
        p = spec.problem(**row)
        picks[row["name"]] = reg.select(p).instance
    # The probed instances in a registry of their own, built in parallel (the default set's
    # picks compile on first launch).
    win = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    fam = win.catalog.families["gw_win_" + op[len("grouped_conv_"):]]
    tiles = {tuple(int(v) for v in t.split("x")) for t in args.tiles.split(",") if t}
    dtypes = {r["dtype"] for r in rows}
    insts = [win.add(fam, k) for k in fam.kernel_sets()["full"](win.arch) if k.dtype.value in dtypes
             and (not tiles or (k.block_h, k.block_w, k.block_c, k.num_warps) in tiles)]
    win.build(max_workers=os.cpu_count(), progress=False)
    for row in rows:
        p, t = problem_tensors(spec, row)
        base = spec.torch_baseline(p, t)
        ref = reference(op, row, t)
        pick = picks[row["name"]]
        run_pick = lambda: launch(reg, op, p, t, instance=pick.name, interpret=False)  # noqa: E731
        run_pick()
        rec = {"row": row["name"], "cudnn_us": triton.testing.do_bench(base, return_mode="median") * 1e3,
               "pick": pick.name, "pick_us": triton.testing.do_bench(run_pick, return_mode="median") * 1e3}
        for inst in insts:
            if inst.key.dtype.value != row["dtype"] or fam.supports(inst.key, p):
                continue
            run = lambda: launch(win, op, p, t, instance=inst.name, interpret=False)  # noqa: E731
            t[spec.output].fill_(float("nan"))  # an element the kernel does not write shows as NaN
            try:
                run()
            except CompileError as e:
                rec[inst.name] = {"error": str(e).splitlines()[-2][:200]}
                continue
            torch.cuda.synchronize()
            err = ((t[spec.output].float() - ref).abs().max() / ref.abs().max()).item()
            rec[inst.name] = {"us": triton.testing.do_bench(run, return_mode="median") * 1e3, "rel_err": err}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
