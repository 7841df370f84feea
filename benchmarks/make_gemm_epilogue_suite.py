"""Write the gemm epilogue training suite: problems with fused epilogues for `ckcore tune`, so the
selection model sees what an epilogue costs each kernel (the tune dataset had none before
2026-11-25). Shapes come from the gemm op's own generator (`Operator.generate`, seeded), 16-bit
types, M >= 64; three quarters of them with M >= 512 and N >= 1024, where an epilogue's cost
decides the pick; an epilogue is drawn per problem. No row equals a public bench
suite row (`benchmarks/suites/gemm*.jsonl`), so the benches stay out of the training data.
``--plain F`` draws a fraction F of the problems without an epilogue, ``--min-m`` raises the
large problems' M floor (the H100 training suite: ``--n 240 --seed 11 --plain 0.5 --min-m 1024
--prefix h100_train --out benchmarks/suites/gemm_h100_train.jsonl``).
usage: python benchmarks/make_gemm_epilogue_suite.py [--n 64] [--seed 7] [--plain 0] [--min-m 512] [--prefix epi_train]
       [--out benchmarks/suites/gemm_epilogue_train.jsonl]
"""

import argparse
import glob
import json

import numpy as np

from ckcore import Registry

# (weight, fields): column bias + gelu (the bench's case) most often; the other activations,
# row bias, C_in (beta) and D tensors beside it.
EPILOGUES = [(0.30, {"bias": "col", "activation": "gelu"}), (0.10, {"activation": "gelu"}),
             (0.10, {"bias": "col", "activation": "gelu_tanh"}), (0.10, {"bias": "col", "activation": "silu"}),
             (0.10, {"bias": "col", "activation": "relu"}), (0.05, {"bias": "row"}), (0.05, {"bias": "col"}),
             (0.05, {"beta": 1.0}), (0.05, {"num_d": 1, "activation": "sigmoid"}), (0.05, {"num_d": 2}),
             (0.05, {"beta": 0.5, "bias": "col", "activation": "tanh"})]


def bench_rows() -> set:
    keys = set()
    for path in glob.glob("benchmarks/suites/gemm*.jsonl"):
        for line in open(path):
            row = json.loads(line)
            keys.add(tuple(row.get(f) for f in ("M", "N", "K", "layout")))
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--plain", type=float, default=0.0)
    ap.add_argument("--min-m", type=int, default=512)
    ap.add_argument("--prefix", default="epi_train")
    ap.add_argument("--out", default="benchmarks/suites/gemm_epilogue_train.jsonl")
    args = ap.parse_args()
    spec = Registry("sm_90").catalog.op("gemm")
    rng = np.random.default_rng(args.seed)
    weights = np.array([w for w, _ in EPILOGUES])
    taken, rows = bench_rows(), []
    while len(rows) < args.n:
        shape = spec.generate(rng)
        large = len(rows) % 4 != 0
        if (shape["M"] < (args.min_m if large else 64) or (large and shape["N"] < 1024) or shape["dtype"] == "fp32"
                or tuple(shape[f] for f in ("M", "N", "K", "layout")) in taken):
            continue
        taken.add(tuple(shape[f] for f in ("M", "N", "K", "layout")))
        fields = EPILOGUES[rng.choice(len(EPILOGUES), p=weights / weights.sum())][1]
        if args.plain and rng.random() < args.plain:
            fields = {}
        problem = spec.problem(**shape, **fields)  # validates the fields
        rows.append({"op": "gemm", "name": f"{args.prefix}.{len(rows)}", **problem.to_dict()})
    with open(args.out, "w") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    print(f"{len(rows)} problems -> {args.out}")


if __name__ == "__main__":
    main()
