"""Probe of a row-rolling direct depthwise forward (GPU machine): before any family is built.

The kernel here is written for the probe only (rendered from the jinja string below into a
temporary module). A program owns BW consecutive output columns × BC channels of one image and
walks R output rows down the image. Each input row is loaded once per column tap (X loads of a
[BW, BC] tile shifted by one column; the overlap hits L1) and feeds the Y accumulators of the
output rows it touches; after each input row the oldest accumulator is complete, is stored, and
the accumulators rotate. So HBM reads each input element about (BW + X - 1) / BW · (R + Y - 1) / R
times, against the sliding-window family's Y times from L2.

Variants: ``hoist`` keeps the Y·X filter taps in registers for the whole program (else they are
loaded from L1 every row); ``pf`` issues the next row's loads before this row's FMAs.
Every output is checked against torch's fp32 convolution of the same inputs; times are
``triton.testing.do_bench`` medians (L2 flushed before every run), µs, next to cuDNN (torch,
channels-last) and the current default-set pick of ckcore in the same run.
usage: python benchmarks/dw_roll_probe.py [--rows NAME,...] > OUT.jsonl
"""

import argparse
import importlib.util
import itertools
import json
import os
import sys
import tempfile

import jinja2
import torch
import torch.nn.functional as F
import triton
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_probe import named_rows, problem_tensors  # noqa: E402

KERNEL = r'''
import triton
import triton.language as tl


@triton.jit
def roll(x_ptr, w_ptr, y_ptr, H, W, C, Ho, Wo, pad_h, pad_w, R, sxn, sxh, sxw, syn, syh, syw,
         BW: tl.constexpr, BC: tl.constexpr):
    pid_w = tl.program_id(0)
    pid_h = tl.program_id(1)
    pid_nc = tl.program_id(2)
    cblocks = tl.cdiv(C, BC)
    n = pid_nc // cblocks
    c = (pid_nc % cblocks) * BC + tl.arange(0, BC)
    mc = c < C
    ow = pid_w * BW + tl.arange(0, BW)
    oh0 = pid_h * R
    xb = x_ptr + n.to(tl.int64) * sxn
    yb = y_ptr + n.to(tl.int64) * syn
{% if hoist %}
{% for fy in range(Y) %}{% for fx in range(X) %}
    w_{{ fy }}_{{ fx }} = tl.load(w_ptr + c * {{ Y * X }} + {{ fy * X + fx }}, mask=mc, other=0.0).to(tl.float32)[None, :]
{% endfor %}{% endfor %}
{% endif %}
{% for fx in range(X) %}
    iw{{ fx }} = ow - pad_w + {{ fx }}
    cm{{ fx }} = ((iw{{ fx }} >= 0) & (iw{{ fx }} < W))[:, None] & mc[None, :]
    co{{ fx }} = (iw{{ fx }} * sxw)[:, None] + c[None, :]
{% endfor %}
{% for j in range(Y) %}
    acc{{ j }} = tl.zeros((BW, BC), tl.float32)
{% endfor %}
{% macro loads(pre, row) %}
    ih = {{ row }}
    hok = (ih >= 0) & (ih < H)
{% for fx in range(X) %}
    {{ pre }}{{ fx }} = tl.load(xb + ih * sxh + co{{ fx }}, mask=cm{{ fx }} & hok, other=0.0)
{% endfor %}
{% endmacro %}
{% if pf %}
{{ loads("nx", "oh0 - pad_h") }}
{% endif %}
    om = (ow < Wo)[:, None] & mc[None, :]
    for i in range(0, R + {{ Y - 1 }}):
{% if pf %}
{% for fx in range(X) %}
        xv{{ fx }} = nx{{ fx }}
{% endfor %}
{{ loads("nx", "oh0 - pad_h + i + 1") | indent(4, true) }}
{% else %}
{{ loads("xv", "oh0 - pad_h + i") | indent(4, true) }}
{% endif %}
{% for fx in range(X) %}
        xf{{ fx }} = xv{{ fx }}.to(tl.float32)
{% endfor %}
{% for j in range(Y) %}
{% for fx in range(X) %}
{% if hoist %}
        acc{{ j }} += xf{{ fx }} * w_{{ Y - 1 - j }}_{{ fx }}
{% else %}
        acc{{ j }} += xf{{ fx }} * tl.load(w_ptr + c * {{ Y * X }} + {{ (Y - 1 - j) * X + fx }}, mask=mc, other=0.0).to(tl.float32)[None, :]
{% endif %}
{% endfor %}
{% endfor %}
        oh = oh0 + i - {{ Y - 1 }}
        tl.store(yb + oh * syh + (ow * syw)[:, None] + c[None, :], acc0.to(y_ptr.dtype.element_ty),
                 mask=om & (i >= {{ Y - 1 }}) & (oh < Ho) & (oh < oh0 + R))
{% for j in range(Y - 1) %}
        acc{{ j }} = acc{{ j + 1 }}
{% endfor %}
        acc{{ Y - 1 }} = tl.zeros((BW, BC), tl.float32)
'''

_mods = {}


def kernel(Y, X, hoist, pf):
    key = (Y, X, hoist, pf)
    if key not in _mods:
        src = jinja2.Template(KERNEL, trim_blocks=True, lstrip_blocks=True).render(Y=Y, X=X, hoist=hoist, pf=pf)
        d = tempfile.mkdtemp()
        path = os.path.join(d, f"roll_{Y}_{X}_{int(hoist)}_{int(pf)}.py")
        with open(path, "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _mods[key] = mod.roll
    return _mods[key]


def run_roll(x, w, y, row, bw, bc, r, warps, hoist, pf):
    n, c, h, wd = x.shape
    _, _, ho, wo = y.shape
    fy, fx = row["filter"]
    k = kernel(fy, fx, hoist, pf)
    grid = (triton.cdiv(wo, bw), triton.cdiv(ho, r), n * triton.cdiv(c, bc))
    k[grid](x, w, y, h, wd, c, ho, wo, row["pad"][0], row["pad"][1], r,
            x.stride(0), x.stride(2), x.stride(3), y.stride(0), y.stride(2), y.stride(3),
            BW=bw, BC=bc, num_warps=warps)


ROWS = ("mbv2.dw32,mbv2.dw144,mbv2.dw192,mbv2.dw576,mbv2.dw960,effb0.dw5x5_240,convnext_t.dw7_96,"
        "convnext_t.dw7_192,convnext_t.dw7_384,convnext_t.dw7_768,mbv2.dw144.fp16")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=ROWS)
    ap.add_argument("--bw", default="8,16,32")
    ap.add_argument("--bc", default="32,64")
    ap.add_argument("--r", default="8,32")
    ap.add_argument("--warps", default="2,4")
    ap.add_argument("--variants", default="hoist,pf,hoist+pf")
    ap.add_argument("--pick", action="store_true", help="also time ckcore's default-set pick")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}
    reg = spec = None
    if args.pick:
        from ckcore import Registry, Settings
        from ckcore.arch import detect
        from ckcore.dispatch import launch
        arch, name = detect()
        reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
        reg.declare("grouped_conv_fwd", "default")
        spec = reg.catalog.op("grouped_conv_fwd")
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    for row in named_rows(args.rows.split(",")):
        assert row["ndim"] == 2 and row["stride"] == [1, 1] and row["dilation"] == [1, 1] and row["C"] == row["G"] == row["K"]
        nb, c, (h, wd), (fy, fx) = row["N"], row["C"], row["spatial"], row["filter"]
        x = torch.randn(nb, c, h, wd, device="cuda").to(dt[row["dtype"]]).to(memory_format=torch.channels_last)
        w = torch.randn(c, 1, fy, fx, device="cuda").to(dt[row["dtype"]])
        ref = F.conv2d(x.float(), w.float(), padding=row["pad"], groups=c)
        y = torch.empty(ref.shape, device="cuda", dtype=x.dtype).to(memory_format=torch.channels_last)
        base = lambda: F.conv2d(x, w, padding=row["pad"], groups=c)  # noqa: E731
        nbytes = (x.numel() + y.numel()) * x.element_size()
        rec = {"row": row["name"], "MB": nbytes / 1e6, "cudnn_us": triton.testing.do_bench(base, return_mode="median") * 1e3}
        if args.pick:
            p, t = problem_tensors(spec, row)
            pick = reg.select(spec.problem(**row)).instance
            run_pick = lambda: launch(reg, "grouped_conv_fwd", p, t, instance=pick.name, interpret=False)  # noqa: E731
            run_pick()
            rec["pick"], rec["pick_us"] = pick.name, triton.testing.do_bench(run_pick, return_mode="median") * 1e3
        best = None
        for bw, bc, r, warps, var in itertools.product(ints(args.bw), ints(args.bc), ints(args.r), ints(args.warps),
                                                       args.variants.split(",")):
            if bc > 2 * c and bc > 32 or bw * bc < 32 * warps:
                continue
            hoist, pf = "hoist" in var, "pf" in var
            if hoist and fy * fx > 25 and bc > 32:
                continue
            name = f"{bw}x{bc}_r{r}_w{warps}_{var}"
            y.fill_(float("nan"))
            try:
                run_roll(x, w, y, row, bw, bc, r, warps, hoist, pf)
                torch.cuda.synchronize()
            except Exception as e:  # a probe: record and go on
                rec[name] = {"error": str(e)[:200]}
                continue
            err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            us = triton.testing.do_bench(lambda: run_roll(x, w, y, row, bw, bc, r, warps, hoist, pf),
                                         warmup=10, rep=40, return_mode="median") * 1e3
            rec[name] = {"us": round(us, 2), "rel_err": err}
            if err < 2e-2 and (best is None or us < best[1]):
                best = (name, us)
        if best:
            rec["best"], rec["best_us"], rec["best_gbps"] = best[0], best[1], nbytes / best[1] / 1e3
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
