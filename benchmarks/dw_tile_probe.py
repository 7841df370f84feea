"""Probe (GPU): a spatially tiled depthwise forward kernel against cuDNN and ckcore's pick.

The shipped ``dw_fwd`` kernel flattens N·output pixels into one axis, so each tap splits the tap
index and checks six bounds per pixel; its SASS issues about 8 instructions per fp32 FMA
(H200 runs it at ~2.7 T output·taps/s on the suite's depthwise rows, 8% of the FMA peak). This
probe's kernel owns a BLOCK_H × BLOCK_W patch of one output plane × BLOCK_C channels: the
program index is split once, the taps run as nested loops (filter rows, then columns), the row
offsets and row bounds are computed once per filter row and each column tap adds one offset and
checks one unsigned bound per pixel. Channels-last, multiplier one, 16-byte aligned channels.

usage: python benchmarks/dw_tile_probe.py OUT.jsonl [--suite benchmarks/suites/conv.jsonl]
Prints, per depthwise forward row of the suite, cuDNN's time, ckcore's pick and every probe
configuration's (median ms, do_bench), each checked against cuDNN's output.
"""

import argparse
import json
import math

import torch
import triton
import triton.language as tl


@triton.jit
def dw_fwd_tile(x_ptr, w_ptr, y_ptr, K, D, H, W, Do, Ho, Wo, Z, Y, X,
                str_d, str_h, str_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w,
                sxn, sxd, sxh, sxw, swk, swz, swy, syn, syd, syh, syw,
                BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr, BLOCK_C: tl.constexpr, UNROLL: tl.constexpr):
    pid = tl.program_id(0)
    pid_c = tl.program_id(1)
    wb = tl.cdiv(Wo, BLOCK_W)
    hb = tl.cdiv(Ho, BLOCK_H)
    bw = pid % wb
    t = pid // wb
    bh = t % hb
    t = t // hb
    od = t % Do
    n = t // Do
    offs = tl.arange(0, BLOCK_H * BLOCK_W)
    oh = bh * BLOCK_H + offs // BLOCK_W
    ow = bw * BLOCK_W + offs % BLOCK_W
    mask_p = (oh < Ho) & (ow < Wo)
    offs_k = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask_k = offs_k < K
    # Pixels outside the output get an input column no tap can bring into range.
    iw0 = tl.where(mask_p, ow * str_w - pad_w, -(1 << 30))
    ih0 = oh * str_h - pad_h
    id0 = od * str_d - pad_d
    x_n = x_ptr + n.to(tl.int64) * sxn
    w_k = w_ptr + offs_k * swk
    acc = tl.zeros((BLOCK_H * BLOCK_W, BLOCK_C), tl.float32)
    for fz in range(0, Z):
        idd = id0 + fz * dil_d
        d_ok = (idd >= 0) & (idd < D)
        for fy in range(0, Y):
            ih = ih0 + fy * dil_h
            row_ok = d_ok & (ih.to(tl.uint32) < H.to(tl.uint32))
            row = idd * sxd + ih * sxh + iw0 * sxw
            w_row = w_k + fz * swz + fy * swy
            for fx0 in range(0, X, UNROLL):
                for u in tl.static_range(UNROLL):
                    fx = fx0 + u
                    iw = iw0 + fx * dil_w
                    ok = row_ok & (iw.to(tl.uint32) < W.to(tl.uint32)) & (fx < X)
                    xv = tl.load(x_n + (row + fx * dil_w * sxw)[:, None] + offs_k[None, :],
                                 mask=ok[:, None] & mask_k[None, :], other=0.0)
                    wv = tl.load(w_row + fx, mask=mask_k & (fx < X), other=0.0)
                    acc += xv.to(tl.float32) * wv.to(tl.float32)[None, :]
    y_off = n.to(tl.int64) * syn + od * syd + oh * syh + ow * syw
    tl.store(y_ptr + y_off[:, None] + offs_k[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=mask_p[:, None] & mask_k[None, :])


def out_size(n, f, s, p, d):
    return (n + 2 * p - d * (f - 1) - 1) // s + 1


def run_tile(x, w, y, prob, cfg):
    bh, bw, bc, warps, unroll = cfg
    nd = prob["ndim"]
    pad = lambda v, fill: [fill] * (3 - nd) + list(v)
    D, H, W = pad(prob["spatial"], 1)
    Z, Yf, Xf = pad(prob["filter"], 1)
    sd, sh, sw = pad(prob["stride"], 1)
    pd, ph, pw = pad(prob["pad"], 0)
    dd, dh, dw = pad(prob["dilation"], 1)
    Do, Ho, Wo = out_size(D, Z, sd, pd, dd), out_size(H, Yf, sh, ph, dh), out_size(W, Xf, sw, pw, dw)
    N, K = prob["N"], prob["K"]
    xs = pad(x.stride()[2:], 0)
    ys = pad(y.stride()[2:], 0)
    ws = pad(w.stride()[2:], 0)
    grid = (N * Do * math.ceil(Ho / bh) * math.ceil(Wo / bw), math.ceil(K / bc))
    dw_fwd_tile[grid](x, w, y, K, D, H, W, Do, Ho, Wo, Z, Yf, Xf, sd, sh, sw, pd, ph, pw, dd, dh, dw,
                      x.stride(0), xs[0], xs[1], xs[2], w.stride(0), ws[0], ws[1],
                      y.stride(0), ys[0], ys[1], ys[2],
                      BLOCK_H=bh, BLOCK_W=bw, BLOCK_C=bc, UNROLL=unroll, num_warps=warps, num_stages=1)
    return y


CONFIGS = [(1, 64, 64, 4, 1), (1, 64, 64, 4, 3), (2, 32, 64, 4, 3), (4, 16, 64, 4, 3), (8, 8, 64, 4, 3),
           (2, 64, 64, 8, 3), (1, 128, 32, 4, 3), (4, 32, 32, 4, 3), (2, 16, 128, 4, 3), (4, 8, 128, 4, 3),
           (1, 32, 128, 4, 3), (2, 32, 64, 4, 1), (4, 16, 64, 4, 1), (8, 8, 32, 4, 3), (2, 8, 128, 4, 3)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    ap.add_argument("--no-ckcore", action="store_true")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    convs = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}
    fmt = {1: None, 2: torch.channels_last, 3: torch.channels_last_3d}
    if not args.no_ckcore:
        import ckcore
    rows = [json.loads(l) for l in open(args.suite)]
    rows = [r for r in rows if r["C"] == r["G"] and r["K"] == r["G"]]
    bench = lambda fn: triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
    out = open(args.out, "w")
    for r in rows:
        nd = r["ndim"]
        x = torch.randn(r["N"], r["C"], *r["spatial"], device="cuda", dtype=dt[r["dtype"]])
        w = torch.randn(r["K"], 1, *r["filter"], device="cuda", dtype=dt[r["dtype"]])
        if nd == 1:  # channels-last 1-D: (N, L, C) memory viewed as (N, C, L)
            x = x.transpose(1, 2).contiguous().transpose(1, 2)
            w = w.transpose(1, 2).contiguous().transpose(1, 2)
        else:
            x = x.contiguous(memory_format=fmt[nd])
            w = w.contiguous(memory_format=fmt[nd])
        kw = dict(stride=r["stride"], padding=r["pad"], dilation=r["dilation"], groups=r["G"])
        conv = convs[nd]
        ref = conv(x, w, **kw)
        t_cudnn = bench(lambda: conv(x, w, **kw))
        res = {"name": r["name"], "dtype": r["dtype"], "cudnn_ms": t_cudnn, "configs": {}}
        if not args.no_ckcore:
            prob = {k: v for k, v in r.items() if k not in ("op", "name")}
            yk = torch.empty_like(ref)
            sel = ckcore.select("grouped_conv_fwd", prob)
            ckcore.dispatch("grouped_conv_fwd", prob, x=x, w=w, y=yk)
            res["ckcore_instance"] = sel.instance.name
            res["ckcore_ms"] = bench(lambda: ckcore.dispatch("grouped_conv_fwd", prob, x=x, w=w, y=yk))
            res["ckcore_err"] = float((yk.float() - ref.float()).abs().max())
        scale = float(ref.float().abs().max())
        for cfg in CONFIGS:
            y = torch.full_like(ref, float("nan"))
            try:
                run_tile(x, w, y, r, cfg)
                err = float((y.float() - ref.float()).abs().max())
                ok = math.isfinite(err) and err <= 2e-2 * scale + 1e-2
                t = bench(lambda: run_tile(x, w, y, r, cfg))
            except Exception as e:  # a configuration that fails is reported, not fatal
                err, ok, t = float("nan"), False, float("nan")
                print("fail", cfg, type(e).__name__, str(e)[:200])
            res["configs"]["x".join(map(str, cfg))] = {"ms": t, "err": err, "ok": ok}
        best = min((v["ms"], k) for k, v in res["configs"].items() if v["ok"])
        res["best"] = best[1]
        out.write(json.dumps(res) + "\n")
        out.flush()
        ck = res.get("ckcore_ms", float("nan"))
        print(f"{r['name']:24s} cudnn {t_cudnn*1e3:7.1f} us  ckcore {ck*1e3:7.1f} us  probe best {best[0]*1e3:7.1f} us "
              f"({best[1]})  vs cudnn {t_cudnn/best[0]:.2f}x  vs ckcore {ck/best[0]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
