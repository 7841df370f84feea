"""Probe (GPU machine): a direct, CUDA-core sliding-window kernel for channels-last grouped 2-D
forward convolution with few channels per group (C/G = K/G = CG, e.g. ResNeXt's 4 and 8), timed
against cuDNN (torch, channels_last, cudnn.benchmark) from CUDA graphs, its output checked against
torch's fp32 convolution of the same inputs.

A program owns BLOCK_H output rows (of N·Ho) × BW consecutive output columns × GB whole groups
(GB·CG channels). Its accumulators are BW tiles [BLOCK_H, GB, CG] (fp32). For each filter row and
each input channel ci of a group, every input column the row's taps touch is loaded once as a
[BLOCK_H, GB, 1] tile (channel g·CG + ci) and broadcast over the group's CG output channels:
acc[r, g, ko] += x[r, g, ci] · w[g·CG + ko, ci, fy, fx], for every (output column, tap) pair
that reads the column. The kernel source is generated per (CG, stride, filter, BW).

With --dot, the tensor-core variant (:func:`dot_kernel_source`) instead, for up to --max-cg
channels per group.

usage: python benchmarks/grouped_direct_probe.py [--rows NAME,...] [--out FILE] [--dot --max-cg 32]
       [--bh 8,16,32] [--gb 4,8,16] [--bw 2,4,8] [--warps 4]
"""

import argparse
import importlib.util
import itertools
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conv_probe import graph_ms  # noqa: E402


def _header(add, bw: int, runtime_rows: bool = False) -> None:
    """The module's imports, the kernel's signature and its program -> (rows, first column) lines."""
    add("import triton\nimport triton.language as tl\n\n")
    add("@triton.jit")
    add("def kern(x_ptr, w_ptr, y_ptr, NHo, H, W, C, Ho, Wo, pad_h, pad_w,")
    add("         sxn, sxh, sxw, swk, swc, swy, swx, syn, syh, syw,")
    add("         KY, BLOCK_H: tl.constexpr, GB: tl.constexpr):" if runtime_rows else
        "         BLOCK_H: tl.constexpr, GB: tl.constexpr):")
    add("    pid = tl.program_id(0)")
    add("    pid_c = tl.program_id(1)")
    add(f"    w_blocks = tl.cdiv(Wo, {bw})")
    add("    rows = (pid // w_blocks) * BLOCK_H + tl.arange(0, BLOCK_H)")
    add(f"    ow0 = (pid % w_blocks) * {bw}")


def _origins(add, stride: int) -> None:
    """The rows' image and output row, their first source row and column, the image's x pointer."""
    add("    row_ok = rows < NHo")
    add("    oh = rows % Ho")
    add("    n = rows // Ho")
    add(f"    ih0 = oh * {stride} - pad_h")
    add(f"    iw0 = ow0 * {stride} - pad_w")
    add("    xn = x_ptr + n * sxn")


def _columns(stride: int, kx: int, bw: int):
    """(source column i, [(output column j, tap fx) reading it]) for every column a filter row touches."""
    for i in range((bw - 1) * stride + kx):
        uses = [(j, fx) for j in range(bw) for fx in range(kx) if j * stride + fx == i]
        if uses:
            yield i, uses


def _stores(add, bw: int, yrow: str, mask: str) -> str:
    """Each output column's accumulator stored through ``yrow`` (rows by channels) under ``mask``
    (``OW_OK``: the rows' and the column's bounds)."""
    add(f"    yrow = {yrow}")
    for j in range(bw):
        add(f"    ow = ow0 + {j}")
        add(f"    tl.store(yrow + ow * syw, acc{j}.to(y_ptr.dtype.element_ty), mask={mask.replace('OW_OK', '(row_ok & (ow < Wo))')})")


def kernel_source(cg: int, stride: int, ky: int, kx: int, bw: int) -> str:
    """The kernel for CG channels per group, a (ky, kx) filter at ``stride`` (dilation 1), BW
    output columns per program."""
    lines = []
    add = lines.append
    _header(add, bw)
    add(f"    CG: tl.constexpr = {cg}")
    add("    g = pid_c * GB + tl.arange(0, GB)")
    add("    ko = tl.arange(0, CG)")
    add("    k3 = (g[:, None] * CG + ko[None, :])[None, :, :]  # [1, GB, CG] output channels")
    add("    mask_g = (g * CG < C)[None, :, None]")
    _origins(add, stride)
    add("    cin = (g * CG)[None, :, None]  # [1, GB, 1] first input channel of each group")
    for j in range(bw):
        add(f"    acc{j} = tl.zeros((BLOCK_H, GB, CG), dtype=tl.float32)")
    add(f"    for fy in range(0, {ky}):")
    add("        ih = ih0 + fy")
    add("        h_ok = row_ok & (ih.to(tl.uint32) < H.to(tl.uint32))")
    add("        xrow = (xn + ih * sxh)[:, None, None]")
    add("        wrow = w_ptr + k3 * swk + fy * swy")
    for ci in range(cg):
        for fx in range(kx):
            add(f"        w_{ci}_{fx} = tl.load(wrow + {ci} * swc + {fx} * swx, mask=mask_g, other=0.0).to(tl.float32)")
    for i, uses in _columns(stride, kx, bw):
        add(f"        iw = iw0 + {i}")
        add("        ok = (h_ok & (iw.to(tl.uint32) < W.to(tl.uint32)))[:, None, None] & mask_g")
        for ci in range(cg):
            add(f"        xv = tl.load(xrow + iw * sxw + cin + {ci}, mask=ok, other=0.0).to(tl.float32)")
            for j, fx in uses:
                add(f"        acc{j} += xv * w_{ci}_{fx}")
    _stores(add, bw, "(y_ptr + n * syn + oh * syh)[:, None, None] + k3", "OW_OK[:, None, None] & mask_g")
    return "\n".join(lines) + "\n"


def dot_kernel_source(cg: int, stride: int, ky: int, kx: int, bw: int, runtime_rows: bool = False) -> str:
    """The tensor-core variant: each input column of a filter row loaded once as a [BLOCK_H, BC]
    tile (BC = GB·CG channels, contiguous) and multiplied, per tap that reads it, by the tap's
    block-diagonal [BC, BC] filter tile (a group's outputs see only its own inputs) with
    ``tl.dot`` into that output column's accumulator. ``runtime_rows``: the filter-row loop's
    trip count is a kernel argument (as in ckcore's template), not a constant."""
    lines = []
    add = lines.append
    _header(add, bw, runtime_rows)
    add(f"    CG: tl.constexpr = {cg}")
    add("    BC: tl.constexpr = GB * CG")
    add("    ch = pid_c * BC + tl.arange(0, BC)")
    add("    mask_c = ch < C")
    add("    cl = tl.arange(0, BC)")
    add("    # Block-diagonal filter tile: row = input channel (local), column = output channel.")
    add("    w_off = (pid_c * BC + cl[None, :]) * swk + (cl[:, None] % CG) * swc")
    add("    w_mask = ((cl[:, None] // CG) == (cl[None, :] // CG)) & mask_c[None, :]")
    _origins(add, stride)
    for j in range(bw):
        add(f"    acc{j} = tl.zeros((BLOCK_H, BC), dtype=tl.float32)")
    add("    for fy in range(0, KY):" if runtime_rows else f"    for fy in range(0, {ky}):")
    add("        ih = ih0 + fy")
    add("        h_ok = row_ok & (ih.to(tl.uint32) < H.to(tl.uint32))")
    add("        xrow = (xn + ih * sxh)[:, None] + ch[None, :]")
    for fx in range(kx):
        add(f"        w_{fx} = tl.load(w_ptr + w_off + fy * swy + {fx} * swx, mask=w_mask, other=0.0)")
    for i, uses in _columns(stride, kx, bw):
        add(f"        iw = iw0 + {i}")
        add("        ok = (h_ok & (iw.to(tl.uint32) < W.to(tl.uint32)))[:, None] & mask_c[None, :]")
        add("        xv = tl.load(xrow + iw * sxw, mask=ok, other=0.0)")
        for j, fx in uses:
            add(f"        acc{j} = tl.dot(xv, w_{fx}, acc{j})")
    _stores(add, bw, "(y_ptr + n * syn + oh * syh)[:, None] + ch[None, :]", "OW_OK[:, None] & mask_c[None, :]")
    return "\n".join(lines) + "\n"


_MODULES = {}


def compiled(cg, stride, ky, kx, bw, dot=False, runtime_rows=False):
    key = (cg, stride, ky, kx, bw, dot, runtime_rows)
    if key not in _MODULES:
        path = os.path.join(tempfile.mkdtemp(prefix="gdp-"), f"gdp_{cg}_{stride}_{ky}{kx}_{bw}_{int(dot)}{int(runtime_rows)}.py")
        with open(path, "w") as f:
            f.write(dot_kernel_source(*key[:5], runtime_rows) if dot else kernel_source(*key[:5]))
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _MODULES[key] = mod.kern
    return _MODULES[key]


def launcher(row, x, w, y, bh, gb, bw, warps, stages, dot=False, runtime_rows=False):
    N, C = row["N"], row["C"]
    H, W = row["spatial"]
    ky, kx = row["filter"]
    s = row["stride"][0]
    ph, pw = row["pad"]
    cg = C // row["G"]
    Ho, Wo = y.shape[2], y.shape[3]
    kern = compiled(cg, s, ky, kx, bw, dot, runtime_rows)
    grid = (triton.cdiv(N * Ho, bh) * triton.cdiv(Wo, bw), triton.cdiv(row["G"], gb))
    sx, sw_, sy = x.stride(), w.stride(), y.stride()

    def fn():
        kern[grid](x, w, y, N * Ho, H, W, C, Ho, Wo, ph, pw,
                   sx[0], sx[2], sx[3], sw_[0], sw_[1], sw_[2], sw_[3], sy[0], sy[2], sy[3],
                   *((ky,) if runtime_rows else ()), BLOCK_H=bh, GB=gb, num_warps=warps, num_stages=stages)
    return fn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    ap.add_argument("--rows", default="")
    ap.add_argument("--max-cg", type=int, default=8)
    ap.add_argument("--out", default=None)
    ap.add_argument("--bh", default="8,16,32")
    ap.add_argument("--gb", default="4,8,16")
    ap.add_argument("--bw", default="2,4,8")
    ap.add_argument("--warps", default="4")
    ap.add_argument("--dot", action="store_true", help="the tensor-core variant (block-diagonal tl.dot per tap)")
    ap.add_argument("--bc", default="16,32,64,128", help="with --dot: channel blocks GB x CG to try")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    bcs = {int(v) for v in args.bc.split(",")}
    rows = [json.loads(l) for l in open(args.suite) if l.strip()]
    want = set(args.rows.split(",")) if args.rows else None
    out = open(args.out, "w") if args.out else None
    for row in rows:
        cg = row["C"] // row["G"]
        if row["ndim"] != 2 or row["G"] == 1 or not (1 < cg <= args.max_cg) or row["K"] != row["C"]:
            continue
        if row["dilation"] != [1, 1] or row["stride"][0] != row["stride"][1] or not row["layout"].startswith("nhw"):
            continue
        if want and row["name"] not in want:
            continue
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[row["dtype"]]
        torch.manual_seed(0)
        x = torch.randn(row["N"], row["C"], *row["spatial"], device="cuda", dtype=dt).to(memory_format=torch.channels_last)
        w = torch.randn(row["K"], cg, *row["filter"], device="cuda", dtype=dt).to(memory_format=torch.channels_last)
        conv = lambda: F.conv2d(x, w, stride=row["stride"], padding=row["pad"], groups=row["G"])  # noqa: E731
        ref = F.conv2d(x.float(), w.float(), stride=row["stride"], padding=row["pad"], groups=row["G"])
        y = torch.empty_like(conv(), memory_format=torch.channels_last)
        cudnn_ms = graph_ms(conv)
        nbytes = (x.numel() + w.numel() + y.numel()) * x.element_size()
        best = None
        for bh, gb, bw, warps in itertools.product(*(map(int, v.split(",")) for v in (args.bh, args.gb, args.bw, args.warps))):
            if args.dot:  # tl.dot tiles of at least 16 x 16, accumulators of at most 128 registers a thread
                if gb * cg not in bcs or gb > 2 * row["G"] or bh * gb * cg * bw > 128 * 32 * warps:
                    continue
            elif gb > row["G"] or bh * gb * cg < 32 * warps or bh * gb * cg * bw > 16384:
                continue
            try:
                fn = launcher(row, x, w, y, bh, gb, bw, warps, 1, dot=args.dot)
                y.zero_()
                fn()
                torch.cuda.synchronize()
                err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
                ms = graph_ms(fn) if err < 2e-2 else float("nan")
            except Exception as exc:  # a config that does not compile is reported, not fatal
                rec = {"row": row["name"], "cfg": [bh, gb, bw, warps], "error": f"{exc.__class__.__name__}: {str(exc)[:200]}"}
                print(json.dumps(rec), flush=True)
                continue
            rec = {"row": row["name"], "cg": cg, "dot": args.dot, "cfg": [bh, gb, bw, warps], "ms": ms, "cudnn_ms": cudnn_ms,
                   "speedup": cudnn_ms / ms, "gbps": nbytes / ms / 1e6, "rel_err": err}
            if out:
                out.write(json.dumps(rec) + "\n")
            if best is None or not (ms >= best["ms"]):
                best = rec
        print(json.dumps({"best": best}), flush=True)


if __name__ == "__main__":
    main()
