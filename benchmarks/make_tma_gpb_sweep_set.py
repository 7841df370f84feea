"""Writes benchmarks/sweep_tma_gpb_<direction>.json: TMA forward / backward-data instances with
merged groups (``groups_per_block`` 2-16), swept on the GPU to choose the default ones (bf16;
patches 8x8, 8x16, 16x8, 16x16, 4x32 x channel tiles 32 and 64 x 4 warps 3 or 4 stages, 8 warps 3
stages), plus the pointer family's merged-group tiles of the default set for reference.
usage: python benchmarks/make_tma_gpb_sweep_set.py; then on the GPU (OUT=... bash
benchmarks/run_tma_gpb_sweep.sh) ``ckcore tune`` on the grouped rows of the public conv suite."""

import itertools
import json

from ckcore import Registry, Settings

PATCHES = [(8, 8), (8, 16), (16, 8), (16, 16), (4, 32)]
LAUNCH = [(4, 3), (4, 4), (8, 3)]
MIN_CG = 4  # the suite's fewest channels per group (ResNeXt-50 layer 1)


def main():
    reg = Registry("sm_90", settings=Settings(cache_dir="/tmp/ckc_sweep_gpb"))
    for direction, op in (("fwd", "grouped_conv_fwd"), ("bwd_data", "grouped_conv_bwd_data")):
        fam = reg.catalog.families[f"conv_tma_{direction}"]
        inst = []
        for (bh, bw), bk, gpb, (w, s) in itertools.product(PATCHES, (32, 64), (2, 4, 8, 16), LAUNCH):
            if gpb * MIN_CG > bk:
                continue
            key = fam.key_cls(dtype="bf16", block_h=bh, block_w=bw, block_n=bk, block_k=bk, groups_per_block=gpb,
                              num_warps=w, num_stages=s)
            if not fam.check(key, reg.arch):
                inst.append({"family": fam.name, "key": key.to_dict()})
        pointer = reg.catalog.families[f"conv_{direction}"]
        refs = [k for k in pointer.kernel_sets()["default"](reg.arch)
                if k.groups_per_block > 1 and k.dtype.value == "bf16" and k.access.value == "a16" and k.channels_last]
        inst += [{"family": pointer.name, "key": k.to_dict()} for k in refs]
        with open(f"benchmarks/sweep_tma_gpb_{direction}.json", "w") as f:
            json.dump({"format": "ckcore-kernel-set/1", "arch": "sm_90", "instances": inst}, f, indent=0)
            f.write("\n")
        print(direction, len(inst), "instances", len(refs), "of them pointer references")


if __name__ == "__main__":
    main()
