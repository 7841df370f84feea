"""Converts the gemm profile measurements of 2026-11-21 (benchmarks/results/gemm_profile_*.jsonl:
every supporting gemm_tiled / gemm_tma instance timed with do_bench on every 2nd / 3rd suite
shape, H200) into a tune dataset (schema ckcore-tune/1) for `ckcore train`.

The profile runs recorded the median only (no percentiles) and did not validate outputs: the
rows say so in their provenance (``validated: false``). Features are recomputed by today's
plugins from the recorded problem and key.
usage: python benchmarks/profile_to_dataset.py benchmarks/datasets/gemm_profile_h200.jsonl.gz"""

import json
import sys
from pathlib import Path

import attrs

from ckcore import Registry, Settings
from ckcore.tune.dataset import SCHEMA, Dataset, provenance_id

SOURCES = {"gemm_tiled": "benchmarks/results/gemm_profile_tiled_h200.jsonl",
           "gemm_tma": "benchmarks/results/gemm_profile_tma_h200.jsonl"}
PROVENANCE = {"interpreter": False, "gpu": "NVIDIA H200", "sm_count": 132, "cuda": "13.0", "driver": None,
              "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0", "ckcore": "0.1.0", "ck-plugin-gemm": "0.1.0"},
              "date": "2026-11-21", "validated": False,
              "source": "benchmarks/results/gemm_profile_{tiled,tma}_h200.jsonl (benchmarks/profile_gemm.py)"}


def main():
    out = Path(sys.argv[1])
    if out.exists():
        out.unlink()
    reg = Registry("sm_90", settings=Settings.from_env(), device_name="NVIDIA H200")
    spec = reg.catalog.op("gemm")
    ds = Dataset(out)
    prov_id = provenance_id(PROVENANCE)
    n = 0
    for family, path in SOURCES.items():
        fam = reg.catalog.families[family]
        for line in open(path):
            r = json.loads(line)
            fields = {f.name for f in attrs.fields(fam.key_cls)}
            key = fam.key_cls.from_dict({k: v for k, v in r["key"].items() if k in fields})
            problem = spec.problem(**r["problem"])
            ms = r["time_ms"]
            ds.append({"schema": SCHEMA, "op": "gemm", "problem": problem.to_dict(), "problem_name": problem.name,
                       "problem_features": {k: float(v) for k, v in spec.features(problem).items()},
                       "instance": key.name, "family": family,
                       "kernel_features": {k: float(v) for k, v in fam.features(key).items()}, "key": key.to_dict(),
                       "status": "ok", "error": None, "time_ms": ms, "time_ms_p20": None, "time_ms_p80": None,
                       "tflops": spec.flops(problem) / ms / 1e9, "gbps": spec.min_bytes(problem) / ms / 1e6,
                       "max_abs_err": None, "provenance": PROVENANCE, "provenance_id": prov_id})
            n += 1
    ds.compact()
    print(f"{n} rows -> {out}")


if __name__ == "__main__":
    main()
