"""Time every supporting instance of a kernel set on suite problems (GPU machine).

Writes JSON lines {problem, instance, key, estimate_ms, time_ms, torch_ms}: the data the
default set and the rules cost model are chosen from.
usage: python benchmarks/profile_gemm.py SUITE OUT.jsonl [--set full] [--every 3] [--rep 15]
"""

import argparse
import json

import triton.testing

from ckcore import Registry, Settings
from ckcore.arch import detect
from ckcore.dispatch import launch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("out")
    ap.add_argument("--set", default="full")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--rep", type=int, default=15)
    ap.add_argument("--family", default=None, help="only this kernel family")
    args = ap.parse_args()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare("gemm", args.set)
    reg.build(progress=False)
    spec = reg.catalog.op("gemm")
    rows = [json.loads(l) for l in open(args.suite) if l.strip()][:: args.every]
    with open(args.out, "w") as f:
        for row in rows:
            fields = {k: v for k, v in row.items() if k not in ("op", "name")}
            p = spec.problem(**fields)
            t = spec.random_tensors(p, 0, "cuda")
            t["c"] = spec.empty_output(p, t["a"])
            base = spec.torch_baseline(p, t)
            torch_ms = triton.testing.do_bench(base, warmup=5, rep=args.rep, return_mode="median")
            sel = reg.select(p)
            best = None
            for r in sel.ranked:
                if args.family and r.instance.family != args.family:
                    continue
                fn = lambda: launch(reg, "gemm", p, t, instance=r.instance.name, interpret=False)
                fn()
                ms = triton.testing.do_bench(fn, warmup=3, rep=args.rep, return_mode="median")
                best = min(best or ms, ms)
                f.write(json.dumps({"name": row.get("name"), "problem": p.to_dict(), "instance": r.instance.name,
                                    "key": r.instance.key.to_dict(), "estimate_ms": r.score, "time_ms": ms,
                                    "torch_ms": torch_ms, "selected": r.instance == sel.instance}) + "\n")
            f.flush()
            print(f"{row.get('name'):34s} torch {torch_ms:.4f} best {best:.4f} x{torch_ms / best:.2f}", flush=True)


if __name__ == "__main__":
    main()
