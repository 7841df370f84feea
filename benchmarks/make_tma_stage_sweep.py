"""Writes benchmarks/sweep_tma_stages_{fwd,bwd_data}.json: TMA forward / backward-data instances
(bf16, one group per program) over every patch of the default set x 64/128/256 output channels x
4/8 warps x 3-6 pipeline stages. The default set was chosen on an H200 among 3 and 4 stages; on an
H100 the gemm profile found a 5-stage persistent tile 5-10% faster on some rows
(benchmarks/results/profile_full_gemm_h100.jsonl).
usage: python benchmarks/make_tma_stage_sweep.py; then on the GPU benchmarks/run_tma_stage_sweep.sh"""

import itertools
import json

from ckcore import Registry

PATCHES = [(1, 64), (1, 128), (2, 64), (4, 32), (4, 16), (8, 16), (8, 8), (16, 8)]


def main():
    reg = Registry("sm_90")
    for d in ("fwd", "bwd_data"):
        fam = reg.catalog.families[f"conv_tma_{d}"]
        inst = [{"family": fam.name,
                 "key": {"dtype": "bf16", "block_h": bh, "block_w": bw, "block_n": bn, "block_k": 64,
                         "num_warps": w, "num_stages": st}}
                for (bh, bw), bn, w, st in itertools.product(PATCHES, (64, 128, 256), (4, 8), (3, 4, 5, 6))]
        inst = [i for i in inst if not fam.check(fam.key_cls.from_dict(i["key"]), reg.arch)]  # fits shared memory
        with open(f"benchmarks/sweep_tma_stages_{d}.json", "w") as f:
            json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
            f.write("\n")
        print(d, len(inst))


if __name__ == "__main__":
    main()
