"""Pointwise (1x1, stride 1, no padding, G = 1) convolutions as GEMMs: how fast the gemm op's
kernels run them, against ckcore's conv pick and cuDNN (GPU).

A channels-last pointwise convolution is a GEMM over M = N·pixels rows, with no data movement:
forward y[M, K] = x[M, C] · w[K, C]^T (layout rcr), backward-data dx[M, C] = dy[M, K] · w[K, C]
(rrr), backward-weight dw[K, C] = dy[M, K]^T · x[M, C] (crr). For every such suite row and
direction: cuDNN (the conv op's torch baseline), torch.matmul on the same views (cuBLAS),
ckcore's conv selection, ckcore's gemm selection and every default-set gemm instance that
supports the GEMM (best reported), each validated against the float64 recomputation and timed
with do_bench (median, L2 flushed). One JSON line per row and direction.
usage: python benchmarks/conv1x1_gemm_probe.py OUT.jsonl [--suite benchmarks/suites/conv.jsonl]
"""

import argparse
import json
import math

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.bench import float64_recompute, problem_fields
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, environment, time_ms

from ck_plugin_grouped_conv.pointwise import gemm_fields, gemm_views


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    args = ap.parse_args()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    for op in ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight", "gemm"):
        reg.declare(op, "default")
    reg.build(progress=False)
    rows = [json.loads(line) for line in open(args.suite) if line.strip()]
    rows = [r for r in rows if r["G"] == 1 and set(r["filter"]) == {1} and set(r["stride"]) == {1}
            and set(r["pad"]) == {0} and r["layout"] in ("nwgc", "nhwgc", "ndhwgc")]
    with open(args.out, "w") as out:
        out.write(json.dumps({"kind": "env", **environment(False), "command": "python benchmarks/conv1x1_gemm_probe.py"}) + "\n")
        for row in rows:
            for direction in ("fwd", "bwd_data", "bwd_weight"):
                op = f"grouped_conv_{direction}"
                spec = reg.catalog.op(op)
                p = reg.problem(op, **problem_fields(row))
                t = spec.random_tensors(p, 0, "cuda")
                t[spec.output] = spec.empty_output(p, t[spec.inputs[0]])
                ref = float64_recompute(spec, p, t)
                tol = spec.tolerance(p)
                res = {"kind": "result", "name": row["name"], "op": op}
                base = spec.torch_baseline(p, dict(t))
                res["cudnn_ms"] = time_ms(base, interpret=False)
                conv = lambda: launch(reg, op, p, t)  # noqa: E731
                res["conv_pick"] = reg.select(p).instance.name
                res["conv_check"] = compare_tensors(conv(), ref, tol.atol, tol.rtol).passed
                res["conv_ms"] = time_ms(conv, interpret=False)
                fields = {k: v for k, v in gemm_fields(direction, p).items() if k != "ptr_align"}
                views = gemm_views(direction, p, t)
                a, b, c = views["a"], views["b"], views["c"]
                res["gemm"] = fields
                gp = reg.problem("gemm", **fields, ptr_align=16)
                res["cublas_ms"] = time_ms(lambda: a @ b, interpret=False)
                tensors = {"a": a, "b": b, "c": c}
                res["gemm_pick"] = reg.select(gp).instance.name
                times, checks = {}, {}
                for cand in reg.candidates(gp)[0]:
                    n = cand.instance.name
                    run = lambda n=n: launch(reg, "gemm", gp, tensors, instance=n)  # noqa: E731
                    c.fill_(float("nan"))
                    try:
                        run()
                    except Exception as e:  # noqa: BLE001 -- a failing instance is recorded, not fatal
                        checks[n] = f"error: {type(e).__name__}: {e}"[:200]
                        continue
                    # c is a view of the conv output: check the conv result it produced.
                    checks[n] = compare_tensors(t[spec.output], ref, tol.atol, tol.rtol).passed
                    times[n] = time_ms(run, interpret=False)
                ok = {n: v for n, v in times.items() if checks[n] is True}
                res["gemm_pick_ms"] = times.get(res["gemm_pick"])
                if ok:
                    best = min(ok, key=ok.get)
                    res["gemm_best"], res["gemm_best_ms"] = best, ok[best]
                res["gemm_times_ms"], res["gemm_checks"] = times, checks
                out.write(json.dumps(res) + "\n")
                out.flush()
                print(f"{row['name']:20s} {direction:10s} cudnn {res['cudnn_ms']*1e3:7.1f} cublas {res['cublas_ms']*1e3:7.1f} "
                      f"conv {res['conv_ms']*1e3:7.1f} gemm pick {(res['gemm_pick_ms'] or math.nan)*1e3:7.1f} "
                      f"best {res.get('gemm_best_ms', math.nan)*1e3:7.1f} us  {res.get('gemm_best')}", flush=True)


if __name__ == "__main__":
    main()
