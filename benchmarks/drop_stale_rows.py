"""Rows of a tune dataset measured before a kernel changed, left out (CPU only).

A commit that changes the code of measured instances leaves their dataset rows describing kernels
that no longer exist. Measuring them again takes every pair of their problems on one machine
(`benchmarks/new_instance_problems.py`); until then, wrong labels train the model worse than no
labels. This writes the dataset without the rows whose instance matches REGEX and whose
measurement date (provenance) is before BEFORE (ISO 8601, UTC), and prints what it left out.
usage: python benchmarks/drop_stale_rows.py DATASET.jsonl.gz --match REGEX --before 2026-11-26T06:50:51 --out NEW.jsonl.gz
"""

import argparse
import json
import re

from ckcore.tune import Dataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--match", required=True, help="regular expression on instance names")
    ap.add_argument("--before", required=True, help="provenance dates before this are stale")
    ap.add_argument("--out", required=True, help="a new file (a dataset appends to an existing one)")
    args = ap.parse_args()
    pattern, kept, dropped = re.compile(args.match), [], []
    for r in Dataset(args.dataset).rows():
        stale = pattern.search(r["instance"]) and r["provenance"]["date"] < args.before
        (dropped if stale else kept).append(r)
    Dataset.create(args.out, kept)
    for r in dropped:
        print(f"{r['provenance']['date'][:19]}  {r['time_ms'] * 1e3 if r['time_ms'] else float('nan'):9.1f} us  "
              f"{r['instance']}  {r['problem_name']}")
    print(json.dumps({"dataset": args.dataset, "out": args.out, "dropped": len(dropped),
                      "problems": len({r["problem_name"] for r in dropped})}))


if __name__ == "__main__":
    main()
