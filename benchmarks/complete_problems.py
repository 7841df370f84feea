"""The problems a tune measured completely (CPU only): a tune stopped by ``--max-seconds`` leaves
its last problems with only some pairs, whose best would be wrong for training until a rerun
resumes them. Writes OUT with the rows of the problems that hold a row for every pair the tune
measures (``ckcore.tune.problem_pairs``: the default kernel sets of the installed plugins) and
prints the counts; the partial problems are listed and left out.
usage: python benchmarks/complete_problems.py DATASET.jsonl.gz --op OP --out OUT.jsonl.gz
"""

import argparse
import json

from ckcore import Registry
from ckcore.tune import Dataset, problem_pairs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--op", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", default="default")
    args = ap.parse_args()
    reg = Registry("sm_90", interpret=False)  # candidates as on the GPU
    reg.declare(args.op, args.set)
    spec = reg.catalog.op(args.op)
    rows = [r for r in Dataset(args.dataset).rows() if r["op"] == args.op]
    # Per provenance, as the tune resumes and training groups them: a problem measured partly
    # on two machines is two partial problems.
    by: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        by.setdefault((r["provenance_id"], r["problem_name"]), []).append(r)
    kept, partial = [], []
    for (prov, name), items in by.items():
        want = {inst.name for _, inst, _ in problem_pairs(reg, args.op, spec.problem(**items[0]["problem"]))}
        if want <= {r["instance"] for r in items}:
            kept += items
        else:
            partial.append(f"{prov}/{name}: {len(items)} of {len(want)} pairs")
    Dataset.create(args.out, kept)
    print(json.dumps({"problems": len(by), "complete": len(by) - len(partial), "rows_kept": len(kept),
                      "partial": partial, "out": args.out}))


if __name__ == "__main__":
    main()
