"""Writes a kernel-set file of the gemm default set's one-program, non-warp-specialised 16-bit
persistent tiles (bf16, every layout) and their split-tail twins (``tail_split``, ``_ts``), to
measure the split tail against the same tile without it (benchmarks/run_gemm_tail_split_gpu.sh).
usage: python benchmarks/make_tail_split_set.py OUT.json"""

import json
import sys

import attrs

from ckcore import Registry


def main(out):
    reg = Registry("sm_90")
    reg.declare("gemm", "default")
    keys = [i.key for i in reg.of_op("gemm") if i.family == "gemm_persistent" and i.key.dtype.value == "bf16"
            and not i.key.warp_specialize and i.key.programs_per_sm == 1 and not i.key.stream_k and not i.key.tail_split]
    insts = [{"family": "gemm_persistent", "key": k.to_dict()} for k in keys]
    insts += [{"family": "gemm_persistent", "key": attrs.evolve(k, tail_split=True).to_dict()} for k in keys]
    with open(out, "w") as f:
        json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": insts}, f, indent=0)
        f.write("\n")
    print(out, len(insts))


if __name__ == "__main__":
    main(sys.argv[1])
