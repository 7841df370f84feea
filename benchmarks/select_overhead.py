"""Host-side cost of selection (CPU only, no GPU needed): first (cold) selection of a problem
over the declared set, and the memoised lookup that every later dispatch of it pays.
usage: python benchmarks/select_overhead.py [--set default]
"""

import argparse
import json
import statistics
import time

from ckcore import Registry


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="default")
    args = ap.parse_args()
    reg = Registry("sm_90")
    reg.declare("gemm", args.set)
    rows = [json.loads(l) for l in open("benchmarks/suites/gemm.jsonl")]
    problems = [reg.problem("gemm", **{k: v for k, v in r.items() if k not in ("op", "name")}) for r in rows]
    cold, warm = [], []
    for p in problems:
        t0 = time.perf_counter()
        reg.select(p)
        cold.append((time.perf_counter() - t0) * 1e6)
        t0 = time.perf_counter()
        for _ in range(1000):
            reg.select(p)
        warm.append((time.perf_counter() - t0) * 1e3)  # us per call
    print(json.dumps({"instances": len(reg.instances), "problems": len(problems),
                      "cold_select_us_median": statistics.median(cold), "memoised_select_us_median": statistics.median(warm)}))


if __name__ == "__main__":
    main()
