"""Problems of a tune dataset that newly declared instances serve, split out to be measured again
whole on one GPU (CPU only).

A kernel change that adds instances to a default set leaves the dataset without their rows. Measuring
only the new pairs would put times from another machine next to the old ones within a problem, and
selection learns from the order within a problem; so every pair of those problems is measured
again (``ckcore tune OP --suite SUITE``), as ``benchmarks/remeasure_noisy.sh`` does for noisy ones.
Prints the problems; with ``--drop OUT.jsonl.gz --suite OUT.jsonl`` writes the dataset without
their rows and a suite of them. With ``--missing``, only the problems where a matching candidate has
no row (rows dropped as stale, or never measured) count as served.
usage: python benchmarks/new_instance_problems.py OP DATASET.jsonl.gz --match REGEX
       [--set default] [--missing] [--drop OUT.jsonl.gz --suite OUT.jsonl]
"""

import argparse
import json
import re

from ckcore import Registry
from ckcore.tune import Dataset

from noisy_problems import split_out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("dataset")
    ap.add_argument("--match", required=True, help="regular expression on instance names: the new instances")
    ap.add_argument("--set", default="default")
    ap.add_argument("--missing", action="store_true", help="only problems where a matching candidate has no row")
    ap.add_argument("--drop")
    ap.add_argument("--suite")
    args = ap.parse_args()
    if bool(args.drop) != bool(args.suite):
        ap.error("--drop and --suite go together")
    reg = Registry("sm_90", interpret=False)  # candidates as on the GPU
    reg.declare(args.op, args.set)
    new = re.compile(args.match)
    rows = list(Dataset(args.dataset).rows())
    problems = {r["problem_name"]: r["problem"] for r in rows}
    measured = {}
    for r in rows:
        measured.setdefault(r["problem_name"], set()).add(r["instance"])
    served = {}
    for name, fields in problems.items():
        cands, _ = reg.candidates(reg.problem(args.op, **fields))
        hits = sum(bool(new.search(c.instance.name)) and not (args.missing and c.instance.name in measured[name])
                   for c in cands)
        if hits:
            served[name] = (hits, len(cands))
    for name, (hits, total) in sorted(served.items()):
        print(f"{hits:4d} new of {total:4d} candidates  {name}")
    print(json.dumps({"dataset": args.dataset, "problems": len(problems), "served": len(served),
                      "pairs_to_measure": sum(t for _, t in served.values())}))
    if args.drop:
        split_out(rows, set(served), args.drop, args.suite)


if __name__ == "__main__":
    main()
