"""A tune dataset whose problems measured again elsewhere take those rows instead (CPU only).

Every problem that NEW measures loses all its rows in DATASET and gets NEW's, so that each problem
carries one machine's times (selection learns from the order within a problem). Writes OUT (a new
file: a dataset appends to an existing one) and prints the counts.
usage: python benchmarks/replace_problems.py DATASET.jsonl.gz NEW.jsonl.gz --out OUT.jsonl.gz
"""

import argparse
import json

from ckcore.tune import Dataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("new")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    new = list(Dataset(args.new).rows())
    names = {r["problem_name"] for r in new}
    old = list(Dataset(args.dataset).rows())
    kept = [r for r in old if r["problem_name"] not in names]
    dropped = len(old) - len(kept)
    Dataset.create(args.out, kept + new)
    print(json.dumps({"problems": len(names), "rows_dropped": dropped, "rows_added": len(new), "out": args.out}))


if __name__ == "__main__":
    main()
