"""Probe: TMA implicit-GEMM convolution (stride 1) against cuDNN, before it becomes a family.

The kernel reads x (or dy) through a 5-D tensor descriptor [N·D, H, W, G, C/G] whose box is a
BH × BW patch of pixels by BK channels of one group. Each filter tap shifts the box; TMA zero-fills
coordinates outside the tensor, which is the padding (a depth tap outside [0, D) gets row -1).

    python benchmarks/conv_tma_probe.py [--out FILE] [--rows a,b] [--quick]

Prints, per row, cuDNN's time and each config's time and max error against cuDNN's output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def conv_tma(x_ptr, w_ptr, y_ptr, NDx, D, H, W, G, Cg, NDy, Do, Ho, Wo, Kg, Z, Y, X,
             pad_d, pad_h, pad_w, dil_d, dil_h, dil_w, sxr, sxh, sxw, syr, syh, syw,
             BH: tl.constexpr, BW: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BWD: tl.constexpr):
    # fwd: x [NDx, H, W, G, Cg], w [G, Kg, T, Cg], y [NDy, Ho, Wo, G, Kg]: reduction over (tap, Cg).
    # bwd_data: x is dy [.., G, Kg=red], w [G, red, T, Cg=cols]... named generically below:
    #   RED = reduction channels per group, COLS = output channels per group.
    BM: tl.constexpr = BH * BW
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    g = tl.program_id(2)
    tiles_w = (Wo + BW - 1) // BW
    tiles_h = (Ho + BH - 1) // BH
    tw = pid_m % tiles_w
    t = pid_m // tiles_w
    th = t % tiles_h
    r = t // tiles_h
    od = r % Do
    n = r // Do
    oh0 = th * BH
    ow0 = tw * BW
    T = Z * Y * X
    if BWD:
        RED = Kg
        COLS = Cg
    else:
        RED = Cg
        COLS = Kg
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[NDx, H, W, G, RED], strides=[sxr, sxh, sxw, RED, 1],
                                       block_shape=[1, BH, BW, 1, BK])
    if BWD:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[G, RED, T, COLS], strides=[RED * T * COLS, T * COLS, COLS, 1],
                                           block_shape=[1, BK, 1, BN])
    else:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[G, COLS, T, RED], strides=[COLS * T * RED, T * RED, RED, 1],
                                           block_shape=[1, BN, 1, BK])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[NDy, Ho, Wo, G, COLS], strides=[syr, syh, syw, COLS, 1],
                                       block_shape=[1, BH, BW, 1, BN])
    acc = tl.full((BM, BN), 0.0, tl.float32)
    cb = (RED + BK - 1) // BK
    for it in range(0, T * cb):
        tap = it // cb
        c0 = (it % cb) * BK
        fx = tap % X
        fy = (tap // X) % Y
        fz = tap // (X * Y)
        if BWD:
            idd = od + pad_d - fz * dil_d
            ih = oh0 + pad_h - fy * dil_h
            iw = ow0 + pad_w - fx * dil_w
        else:
            idd = od + fz * dil_d - pad_d
            ih = oh0 + fy * dil_h - pad_h
            iw = ow0 + fx * dil_w - pad_w
        row = tl.where((idd >= 0) & (idd < D), n * D + idd, -1)
        a = x_desc.load([row, ih, iw, g, c0]).reshape(BM, BK)
        if BWD:
            b = w_desc.load([g, c0, tap, pid_n * BN]).reshape(BK, BN)
        else:
            b = w_desc.load([g, pid_n * BN, tap, c0]).reshape(BN, BK).T
        acc = tl.dot(a, b, acc)
    y_desc.store([n * Do + od, oh0, ow0, g, pid_n * BN], acc.to(y_ptr.dtype.element_ty).reshape(1, BH, BW, 1, BN))


def _alloc(size, align, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def launch(direction, x, w, y, prob, cfg):
    """x, w, y as torch tensors in channels-last memory; prob a suite row; cfg (BH, BW, BN, BK, warps, stages)."""
    bh, bw, bn, bk, warps, stages = cfg
    nd = prob["ndim"]
    sp = [1] * (3 - nd) + list(prob["spatial"])
    fl = [1] * (3 - nd) + list(prob["filter"])
    pad = [0] * (3 - nd) + list(prob["pad"])
    dil = [1] * (3 - nd) + list(prob["dilation"])
    out = [s + 2 * p - d * (f - 1) for s, p, d, f in zip(sp, pad, dil, fl)]
    N, G = prob["N"], prob["G"]
    Cg, Kg = prob["C"] // G, prob["K"] // G
    if direction == "fwd":
        src, dst, ssp, dsp = x, y, sp, out
    else:
        src, dst, ssp, dsp = x, y, out, sp  # x is dy, y is dx
    def rows(t):
        """(stride of one (n, d) row, of h, of w) of a channels-last tensor."""
        st = t.stride()
        return (st[2] if nd == 3 else st[0]), (st[-2] if nd >= 2 else st[0]), st[-1]

    sxr, sxh, sxw = rows(src)
    syr, syh, syw = rows(dst)
    D, H, W = ssp
    Do, Ho, Wo = dsp
    NDx, NDy = N * D, N * Do
    if all(f == 1 for f in fl) and all(p == 0 for p in pad):
        # 1x1 filter, no padding: fold N·D·H·W into W, so tiles never straddle rows.
        W = Wo = N * D * H * W
        NDx = NDy = D = Do = H = Ho = 1
        sxr = sxh = sxw * W
        syr = syh = syw * Wo
    grid = (NDy * triton.cdiv(Ho, bh) * triton.cdiv(Wo, bw), triton.cdiv(Cg if direction != "fwd" else Kg, bn), G)
    conv_tma[grid](src, w, dst, NDx, D, H, W, G, Cg, NDy, Do, Ho, Wo, Kg, *fl, *pad, *dil,
                   sxr, sxh, sxw, syr, syh, syw, BH=bh, BW=bw, BN=bn, BK=bk, BWD=direction != "fwd",
                   num_warps=warps, num_stages=stages)


def make(prob, dtype, device):
    nd = prob["ndim"]
    fmt = torch.channels_last_3d if nd == 3 else (torch.channels_last if nd == 2 else None)
    N, C, K, G = prob["N"], prob["C"], prob["K"], prob["G"]
    x = torch.randn(N, C, *prob["spatial"], device=device, dtype=dtype)
    w = torch.randn(K, C // G, *prob["filter"], device=device, dtype=dtype) / math.sqrt(C // G * math.prod(prob["filter"]))
    if nd == 1:  # nwgc: channels-last 1-D = (N, W, C) storage viewed as (N, C, W)
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
        w = w.transpose(1, 2).contiguous().transpose(1, 2)
    else:
        x = x.contiguous(memory_format=fmt)
        w = w.contiguous(memory_format=fmt)
    return x, w


def torch_conv(prob, x, w):
    f = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[prob["ndim"]]
    return f(x, w, None, prob["stride"], prob["pad"], prob["dilation"], prob["G"])


def like_cl(t, nd):
    if nd == 1:
        return torch.empty_like(t.transpose(1, 2).contiguous()).transpose(1, 2)
    fmt = torch.channels_last_3d if nd == 3 else torch.channels_last
    return torch.empty_like(t, memory_format=fmt)


CONFIGS = [(1, 128, 128, 64, 8, 3), (1, 128, 128, 64, 4, 3), (1, 128, 64, 64, 4, 4), (1, 64, 128, 64, 4, 4),
           (2, 64, 128, 64, 8, 3), (4, 32, 128, 64, 8, 3), (8, 16, 128, 64, 8, 3), (16, 8, 128, 64, 8, 3),
           (8, 8, 128, 64, 4, 4), (8, 16, 64, 64, 4, 4), (1, 128, 256, 64, 8, 3), (2, 64, 256, 64, 8, 3),
           (1, 128, 128, 32, 4, 4), (4, 16, 128, 64, 4, 4), (16, 8, 64, 64, 4, 4), (1, 64, 64, 64, 4, 4)]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "bench", "conv.jsonl"))
    ap.add_argument("--out")
    ap.add_argument("--rows")
    ap.add_argument("--directions", default="fwd,bwd_data")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    from triton.testing import do_bench

    torch.backends.cudnn.benchmark = True
    triton.set_allocator(_alloc)
    probs = [json.loads(l) for l in open(args.suite) if l.strip()]
    probs = [p for p in probs if all(s == 1 for s in p["stride"]) and p["C"] // p["G"] >= 16 and p["K"] // p["G"] >= 16]
    if args.rows:
        probs = [p for p in probs if p["name"] in args.rows.split(",")]
    out = open(args.out, "w") if args.out else None
    configs = CONFIGS[:3] if args.quick else CONFIGS
    for direction in args.directions.split(","):
        for prob in probs:
            dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[prob["dtype"]]
            x, w = make(prob, dtype, "cuda")
            nd = prob["ndim"]
            if direction == "fwd":
                ref = torch_conv(prob, x, w)
                src = x
                base = lambda: torch_conv(prob, x, w)
            else:
                y = torch_conv(prob, x, w)
                dy = torch.randn_like(y)
                src = dy
                ref = torch.ops.aten.convolution_backward(dy, x, w, None, prob["stride"], prob["pad"], prob["dilation"],
                                                          False, [0] * nd, prob["G"], [True, False, False])[0]
                base = lambda: torch.ops.aten.convolution_backward(dy, x, w, None, prob["stride"], prob["pad"],
                                                                   prob["dilation"], False, [0] * nd, prob["G"],
                                                                   [True, False, False])
            t_base = do_bench(base, warmup=50, rep=200, return_mode="median")
            flops = 2 * prob["N"] * math.prod(ref.shape[2:] if direction == "fwd" else y.shape[2:]) * prob["K"] * (prob["C"] // prob["G"]) * math.prod(prob["filter"])
            res = {"name": prob["name"], "direction": direction, "cudnn_ms": t_base, "cudnn_tflops": flops / t_base / 1e9, "configs": {}}
            scale = ref.float().abs().max().item()
            for cfg in configs:
                dst = like_cl(ref, nd)
                dst.fill_(float("nan"))
                try:
                    fn = lambda: launch(direction, src, w, dst, prob, cfg)
                    fn()
                    torch.cuda.synchronize()
                    err = (dst.float() - ref.float()).abs().max().item() / scale
                    ms = do_bench(fn, warmup=50, rep=200, return_mode="median")
                    res["configs"][str(cfg)] = {"ms": ms, "rel_err": err}
                except Exception as exc:  # a config that does not compile: record why
                    res["configs"][str(cfg)] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            good = {k: v for k, v in res["configs"].items() if "ms" in v and v["rel_err"] < 2e-2}
            best = min(good.items(), key=lambda kv: kv[1]["ms"]) if good else (None, {"ms": float("nan")})
            res["best"] = best[0]
            res["speedup"] = t_base / best[1]["ms"]
            bad = [k for k, v in res["configs"].items() if "ms" in v and not v["rel_err"] < 2e-2]
            print(f"{direction:8s} {prob['name']:24s} cudnn {t_base*1e3:8.1f} us ({res['cudnn_tflops']:5.0f} TF)  "
                  f"best {best[1]['ms']*1e3:8.1f} us {res['speedup']:5.2f}x {best[0]}  bad={len(bad)}", flush=True)
            for k, v in res["configs"].items():
                if "error" in v:
                    print("   ", k, v["error"][:160])
            if out:
                out.write(json.dumps(res) + "\n")
                out.flush()


if __name__ == "__main__":
    sys.exit(main())
