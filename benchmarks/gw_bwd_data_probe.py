"""First measurement of the grouped backward-data windows on tensor cores (``gw_win_bwd_data``,
full sets only) on ResNeXt-50's stride-1 bf16 grouped rows (GPU machine): each row's default-set
selection, each of the backward-data twins of the forward default tiles, and cuDNN through torch,
timed with ``triton.testing.do_bench`` (L2 flushed before every run, as ``ckcore bench``); the
window kernels' dx checked against torch's fp32 backward-data of the same inputs.
usage: python benchmarks/gw_bwd_data_probe.py [--rows NAME,...]
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

from ck_plugin_depthwise.sets import _GROUP_WINDOW

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_probe import named_rows, problem_tensors  # noqa: E402

OP = "grouped_conv_bwd_data"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="resnext50.l1.g32,resnext50.l2.g32,resnext50.l3.g32,resnext50.l4.g32")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare(OP, "default")
    fam = reg.catalog.families["gw_win_bwd_data"]
    spec = reg.catalog.op(OP)
    for row in named_rows(args.rows.split(",")):
        p, t = problem_tensors(spec, row)
        base = spec.torch_baseline(p, t)
        ref = torch.nn.grad.conv2d_input(t[spec.output].shape, t["w"].float(), t["dy"].float(), stride=row["stride"],
                                         padding=row["pad"], groups=row["G"])
        pick = reg.select(p).instance
        run_pick = lambda: launch(reg, OP, p, t, instance=pick.name, interpret=False)  # noqa: E731
        run_pick()
        rec = {"row": row["name"], "cudnn_us": triton.testing.do_bench(base, return_mode="median") * 1e3,
               "pick": pick.name, "pick_us": triton.testing.do_bench(run_pick, return_mode="median") * 1e3}
        for bh, bw, bc, warps in _GROUP_WINDOW:
            key = fam.key_cls(dtype=row["dtype"], channels_last=True, block_p=bh * bw, block_c=bc, num_warps=warps,
                              access="a16", unroll=3, block_h=bh, block_w=bw, stride_w=1, dilation_w=1)
            inst = reg.add(fam, key)
            if fam.supports(inst.key, p):
                continue
            run = lambda: launch(reg, OP, p, t, instance=inst.name, interpret=False)  # noqa: E731
            t[spec.output].zero_()
            run()
            torch.cuda.synchronize()
            err = ((t[spec.output].float() - ref).abs().max() / ref.abs().max()).item()
            rec[inst.name] = {"us": triton.testing.do_bench(run, return_mode="median") * 1e3, "rel_err": err}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
