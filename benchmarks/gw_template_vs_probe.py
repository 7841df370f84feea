"""The tensor-core grouped window kernel as ckcore renders it (``gw_win_fwd``) against the probe's
generated kernel (``benchmarks/grouped_direct_probe.py --dot``) of the same tile, and cuDNN, on
ResNeXt-50's bf16 grouped rows (GPU machine): each timed from a CUDA graph of 20 launches (L2
warm across launches) and with ``triton.testing.do_bench`` (L2 flushed before every run), so the
difference between the probe's and the bench's figures can be told apart from a difference
between the kernels.
usage: python benchmarks/gw_template_vs_probe.py [--rows NAME,...] [--access a16,i32]
"""

import argparse
import itertools
import json
import os
import sys

import torch
import torch.nn.functional as F
import triton.testing

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.dispatch import launch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_probe import graph_ms, named_rows, problem_tensors  # noqa: E402
from grouped_direct_probe import launcher  # noqa: E402

TILES = [(64, 2, 32, 4), (128, 2, 16, 4), (128, 4, 32, 4), (32, 2, 16, 4), (64, 4, 32, 4)]  # sets._GROUP_WINDOW


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="resnext50.l1.g32,resnext50.l2.g32,resnext50.l3.g32,resnext50.l4.g32")
    ap.add_argument("--access", default="a16", help="access modes of the template instances, comma-separated")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    fam = reg.catalog.families["gw_win_fwd"]
    spec = reg.catalog.op("grouped_conv_fwd")
    for row in named_rows(args.rows.split(",")):
        p, t = problem_tensors(spec, row)
        x, w, y = t["x"], t["w"], t["y"]
        conv = lambda: F.conv2d(x, w, stride=row["stride"], padding=row["pad"], groups=row["G"])  # noqa: E731
        rec = {"row": row["name"], "cudnn_graph_us": graph_ms(conv) * 1e3,
               "cudnn_bench_us": triton.testing.do_bench(conv, return_mode="median") * 1e3}
        cg = row["C"] // row["G"]
        for (bh, bw, bc, warps), access in itertools.product(TILES, args.access.split(",")):
            if bc % cg:
                continue
            key = fam.key_cls(dtype=row["dtype"], channels_last=True, block_p=bh * bw, block_c=bc, num_warps=warps,
                              access=access, unroll=3, block_h=bh, block_w=bw, stride_w=row["stride"][-1], dilation_w=1)
            inst = reg.add(fam, key)
            if fam.supports(inst.key, p):
                continue
            ours = lambda: launch(reg, "grouped_conv_fwd", p, t, instance=inst.name, interpret=False)  # noqa: E731
            ours()
            ref = F.conv2d(x.float(), w.float(), stride=row["stride"], padding=row["pad"], groups=row["G"])
            err_t = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            probe = launcher(row, x, w, y, bh, bc // cg, bw, warps, 1, dot=True)
            probe()
            torch.cuda.synchronize()
            err_p = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            probe_rt = launcher(row, x, w, y, bh, bc // cg, bw, warps, 1, dot=True, runtime_rows=True)
            rec[f"{bh}x{bw}x{bc}_{access}"] = {
                "template_graph_us": graph_ms(ours) * 1e3, "probe_graph_us": graph_ms(probe) * 1e3,
                "probe_runtime_rows_graph_us": graph_ms(probe_rt) * 1e3,
                "template_bench_us": triton.testing.do_bench(ours, return_mode="median") * 1e3,
                "probe_bench_us": triton.testing.do_bench(probe, return_mode="median") * 1e3,
                "rel_err": [round(err_t, 5), round(err_p, 5)]}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
