"""How far issue 3's grouped target (>= 2x cuDNN) is from what the hardware allows (CPU only).

For every grouped row (G > 1, C/G > 1) of ``ckcore bench`` result files: roofline time =
max(minimum bytes / copy bandwidth, FLOPs / the arch's dense tensor-core peak for the dtype, from
the arch specs), and cuDNN's time over it, the largest speedup over cuDNN that any kernel could
reach on that row (``dw_roofline.roofline``: the bench's own minimum bytes and FLOPs, each tensor
moved once, 2 FLOPs per multiply-add).

usage: python benchmarks/grouped_bound.py --copy-gbps 2986 BENCH.jsonl [BENCH.jsonl ...]
(2986 GB/s: the H100's copy bandwidth measured in the thirteenth session, ``docs/performance.md``)
"""

import argparse
import json
import math

from ckcore import arch as arch_mod
from dw_roofline import roofline


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--copy-gbps", type=float, required=True)
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    spec = arch_mod.load(args.arch)
    for path in args.bench:
        rows = [json.loads(line) for line in open(path)]
        env = next((r for r in rows if r.get("kind") == "env"), {})
        device = spec.device(env.get("gpu", ""))
        grouped = [r for r in rows if r.get("kind") == "result" and r["problem"]["G"] > 1
                   and r["problem"]["C"] // r["problem"]["G"] > 1]
        if not grouped:
            continue
        print(f"{path}: {env.get('gpu', '?')}, copy {args.copy_gbps:.0f} GB/s")
        logs, now = [], []
        for r in grouped:
            dtype = "tf32" if r["problem"]["dtype"] == "fp32" else r["problem"]["dtype"]
            roof_ms, _ = roofline(r, args.copy_gbps, device.peak_tflops[dtype])
            bound = r["torch_ms"] / roof_ms
            logs.append(math.log(bound))
            now.append(math.log(r["speedup"]))
            print(f"  {r.get('name', r['problem_name']):28s} cuDNN {r['torch_ms'] * 1e3:8.1f} us  roofline {roof_ms * 1e3:6.1f} us"
                  f"  bound x{bound:6.2f}  ckcore x{r['speedup']:.2f}")
        print(f"  geomean bound x{math.exp(sum(logs) / len(logs)):.2f}, ckcore x{math.exp(sum(now) / len(now)):.3f}"
              f" ({len(grouped)} rows)")


if __name__ == "__main__":
    main()
