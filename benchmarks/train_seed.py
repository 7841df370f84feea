"""Train an op's model as ``ckcore train`` does but with another LightGBM seed (CPU only): how far
a seed alone moves the picks (price them with ``benchmarks/offline_picks.py --new OUT``). The
folds stay those of fold seed 0; the written metadata's ``seed`` is that fold seed, and
``params.seed`` the LightGBM seed.
usage: python benchmarks/train_seed.py OP SEED OUT DATASET.jsonl.gz
"""

import sys

from ckcore import Registry
from ckcore import train as T


def main():
    op, seed, out, data = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    T.PARAMS["seed"] = T.RANK_PARAMS["seed"] = seed
    meta = T.train(Registry("sm_90"), op, [data], out)
    print(op, "seed", seed, {k: round(v, 4) for k, v in meta["metrics"]["lightgbm"].items()})


if __name__ == "__main__":
    main()
