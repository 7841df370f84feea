"""Two selection models' picks on a suite, priced with a tune dataset's measured times (CPU only).

For every suite row of ``OP``: the default-set candidates (all installed plugins), each model's pick
(lowest predicted time, as the ``lightgbm`` heuristic ranks), and both picks' measured median times
in the dataset (rows of the same problem, which ``collect_datasets.sh`` measures for the public
suite). Prints the rows whose pick changed and the geomean of new-pick / old-pick time over the
rows where both picks were measured: what a model change does to a bench before a GPU runs it
(the bench re-times everything; this reuses the dataset's times, taken on another day).
usage: python benchmarks/offline_picks.py OP --old DIR --new DIR --data DATASET.jsonl.gz
       [--suite benchmarks/suites/conv.jsonl] [--device "NVIDIA H200"]
"""

import argparse
import gzip
import json
import math
from pathlib import Path

import numpy as np

from ckcore import Registry
from ckcore.bench import problem_fields, read_suite
from ckcore.heuristics.learned import load_model_from


def pick(model, reg, operator, p, cands):
    pred = model.predict_matrix(model.candidate_matrix(operator, p, cands, reg.arch, reg.device))
    order = sorted(zip(pred.tolist(), (c.instance.name for c in cands)))
    return order[0][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--suite", default="benchmarks/suites/conv.jsonl")
    ap.add_argument("--device", default="NVIDIA H200")
    args = ap.parse_args()
    reg = Registry("sm_90", device_name=args.device, interpret=False)  # picks as on the GPU
    reg.declare(args.op, "default")
    operator = reg.catalog.op(args.op)
    models = {k: load_model_from(Path(getattr(args, k)), args.op, "sm_90") for k in ("old", "new")}
    times = {}
    with gzip.open(args.data, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r.get("status") == "ok" and r.get("time_ms"):
                times[(r["problem_name"], r["instance"])] = r["time_ms"]
    ratios = []
    for row in read_suite(args.suite, args.op, operator.suite_ops):
        p = reg.problem(args.op, **problem_fields(row))
        cands, _ = reg.candidates(p)
        old, new = (pick(models[k], reg, operator, p, cands) for k in ("old", "new"))
        t_old, t_new = times.get((p.name, old)), times.get((p.name, new))
        if t_old and t_new:
            ratios.append(t_new / t_old)
        if old != new:
            fmt = lambda t: f"{t * 1e3:7.1f}" if t else "    n/a"  # noqa: E731
            print(f"{row['name']:24s} {fmt(t_old)} -> {fmt(t_new)} us  {old} -> {new}")
    geo = math.exp(float(np.mean(np.log(ratios)))) if ratios else float("nan")
    print(json.dumps({"op": args.op, "rows": len(ratios), "geomean_new_over_old_time": geo,
                      "worse_rows": sum(r > 1.0 for r in ratios), "better_rows": sum(r < 1.0 for r in ratios)}))


if __name__ == "__main__":
    main()
