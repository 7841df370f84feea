"""The halo families (``conv_halo_fwd`` / ``conv_halo_bwd_data`` / ``conv_halo_bwd_weight``) on the
conv suite's rows they serve, against the ``conv_tma`` instances, the default sets' pick and cuDNN,
on the GPU.

For each row of ``benchmarks/suites/conv.jsonl`` that a full-set halo instance supports (3-row
filters at stride 1, 16-bit, channels-last; forward and backward-data: at most 64 reduction
channels per group), per direction: every supporting halo instance, every supporting default
``conv_tma`` instance and the default sets' pick (``selected``) is checked once against the float64
recompute (``ckcore.bench.float64_recompute``) and timed (``ckcore.measure.time_ms``, median), and
so is the torch path (cuDNN, ``cudnn.benchmark``). One JSON line per (row, direction) with every
time in µs and each check's result (groups ``halo``, ``tma``, ``pick``: the default sets' pick, which
may itself be a halo instance), then a summary per direction: geomean over the rows of the best
default TMA instance's time, the pick's and cuDNN's, each over the best halo time (times that
failed their check left out).

With ``--instances RE`` only the halo instances whose names match RE run, and ``--no-tma`` leaves
out the TMA group. ``--evolve num_stages=2,4,8`` (repeatable: the product of every option's values)
replaces each of them by its twins with those key fields (twins their family's check refuses, such as
those whose shared memory does not fit, are left out), outside any kernel set.
usage (GPU): python benchmarks/halo_probe.py OUT.jsonl [--ops fwd,bwd_data,bwd_weight] [--names RE]
             [--instances RE] [--no-tma] [--evolve FIELD=V,V ...]
"""

import argparse
import itertools
import json
import math
import re

import attrs
import torch

from ckcore import Registry
from ckcore.bench import float64_recompute, recompute_allowance
from ckcore.dispatch import launch
from ckcore.measure import compare_tensors, time_ms

OPS = {"fwd": "grouped_conv_fwd", "bwd_data": "grouped_conv_bwd_data", "bwd_weight": "grouped_conv_bwd_weight"}


def _row_fields(row):
    return {k: v for k, v in row.items() if k not in ("op", "name")}


def _twins(reg, halo, options):
    """Each instance of ``halo`` with every combination of the ``FIELD=V1,V2`` options' integer
    values that passes its family's check."""
    fields = [(o.split("=")[0], [int(v) for v in o.split("=")[1].split(",")]) for o in options]
    twins = {}
    for inst in halo:
        fam = reg.family(inst)
        for values in itertools.product(*(vs for _, vs in fields)):
            key = attrs.evolve(inst.key, **{f: v for (f, _), v in zip(fields, values)})
            if not fam.check(key, reg.arch):
                twins.setdefault(key.name, (fam.name, key))
    return [reg.add(f, k) for f, k in twins.values()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ops", default="fwd,bwd_data")
    ap.add_argument("--names", default=".")
    ap.add_argument("--instances", default=".")
    ap.add_argument("--no-tma", action="store_true")
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    ap.add_argument("--evolve", action="append", default=[], help="FIELD=V1,V2: twins of the halo instances")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    reg = Registry("sm_90")
    picker = Registry("sm_90")  # the default sets, as users select
    rows = [json.loads(line) for line in open(args.suite) if line.strip()]
    results = []
    with open(args.out, "w") as out:
        for short in args.ops.split(","):
            op = OPS[short]
            reg.declare(op, "full")
            picker.declare(op, "default")
            spec = reg.catalog.op(op)
            halo = [i for i in reg.of_op(op) if i.family.startswith("conv_halo") and re.search(args.instances, i.name)]
            if args.evolve:
                halo = _twins(reg, halo, args.evolve)
            default = {k.name for f in reg.catalog.families.values() if f.op == op and f.name.startswith("conv_tma")
                       for k in f.kernel_sets()["default"](reg.arch)}
            tma = [] if args.no_tma else [i for i in reg.of_op(op) if i.name in default]
            reg.build(instances=[i for i in halo + tma if i.key.dtype.value in ("bf16", "fp16")], progress=False)
            for row in rows:
                if not re.search(args.names, row["name"]):
                    continue
                p = reg.problem(op, **_row_fields(row))
                mine = [i for i in halo if reg.family(i).supports(i.key, p) is None]
                if not mine:
                    continue
                theirs = [i for i in tma if reg.family(i).supports(i.key, p) is None]
                sel = picker.select(picker.problem(op, **_row_fields(row))).instance
                picked = sel.name
                known = {i.name: i for i in reg.of_op(op)}
                pick = [known[picked] if picked in known else reg.add(sel.family, sel.key)]
                tensors = spec.random_tensors(p, 0, "cuda")
                tol = spec.tolerance(p)
                ref = float64_recompute(spec, p, tensors)
                extra = recompute_allowance(spec, p, tol, tensors)
                rec = {"name": row["name"], "op": op, "problem": p.name, "halo": {}, "tma": {}, "pick": {},
                       "selected": picked}
                for group, insts in (("halo", mine), ("tma", theirs), ("pick", pick)):
                    for inst in insts:
                        t = dict(tensors)
                        t[spec.output] = spec.empty_output(p, tensors[spec.inputs[0]]).fill_(float("nan"))
                        try:
                            launch(reg, op, p, t, instance=inst.name)
                            check = compare_tensors(t[spec.output], ref, tol.atol, tol.rtol, extra)
                            us = time_ms(lambda: launch(reg, op, p, t, instance=inst.name), interpret=False) * 1e3
                            rec[group][inst.name] = {"us": us, "ok": bool(check.passed), "max_abs_err": check.max_abs_err}
                        except Exception as exc:  # a failing instance is a result too
                            rec[group][inst.name] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                t = dict(tensors)
                t[spec.output] = spec.empty_output(p, tensors[spec.inputs[0]])
                base = spec.torch_baseline(p, t)
                rec["torch_us"] = time_ms(base, interpret=False) * 1e3
                ok = lambda d: [v["us"] for v in d.values() if v.get("ok")]  # noqa: E731
                rec["halo_best_us"] = min(ok(rec["halo"]), default=None)
                rec["tma_best_us"] = min(ok(rec["tma"]), default=None)
                rec["selected_us"] = min(ok(rec["pick"]), default=None)
                print(json.dumps({k: rec[k] for k in ("name", "op", "halo_best_us", "tma_best_us", "selected_us", "torch_us")}),
                      flush=True)
                bad = {n: v for n, v in rec["halo"].items() if not v.get("ok")}
                if bad:
                    print("  FAILED:", json.dumps(bad)[:600], flush=True)
                out.write(json.dumps(rec) + "\n")
                results.append(rec)
    for op in OPS.values():
        rs = [r for r in results if r["op"] == op and r["halo_best_us"]]
        if not rs:
            continue

        def g(key):  # geomean of key's time over the best halo time, over the rows that have both
            both = [r[key] / r["halo_best_us"] for r in rs if r[key]]
            return math.exp(sum(map(math.log, both)) / len(both)) if both else float("nan")

        print(f"{op}: {len(rs)} rows; best default TMA instance / best halo {g('tma_best_us'):.3f}; the default sets' "
              f"pick / best halo {g('selected_us'):.3f}; cuDNN / best halo {g('torch_us'):.3f}")


if __name__ == "__main__":
    main()
