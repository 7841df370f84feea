"""Depthwise rows of `ckcore bench` results against the roofline (GPU machine).

Measures the device-to-device copy bandwidth (torch copy of 1 GiB, median of 20, read + write
bytes), then for every depthwise row (C/G = 1) of the given bench result files: achieved GB/s
(minimum traffic: each input read once, the output written once), roofline time =
max(minimum bytes / copy bandwidth, FLOPs / the arch's fp32 CUDA-core peak from the arch specs),
and roofline fraction = roofline time / measured time.
usage: python benchmarks/dw_roofline.py OUT.json BENCH.jsonl [BENCH.jsonl ...]
       python benchmarks/dw_roofline.py --copy-gbps 4201 --gpu "NVIDIA H200" OUT.json BENCH.jsonl ...
       (recomputes from results with a copy bandwidth measured earlier, without a GPU)"""

import argparse
import json

from ckcore import arch as arch_mod


def copy_gbps() -> float:
    import torch

    src = torch.empty(2**30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    ms = sorted(times)[len(times) // 2]
    return 2 * src.numel() / ms / 1e6


def roofline(r: dict, copy_gbps: float, peak_tflops: float) -> tuple[float, float]:
    """(roofline ms, minimum bytes) of a ``ckcore bench`` result row: max(minimum bytes / copy
    bandwidth, FLOPs / peak), with the bench's own minimum bytes and FLOPs (``ckcore_gbps`` and
    ``ckcore_tflops`` times ``ckcore_ms``)."""
    flops = r["ckcore_tflops"] * r["ckcore_ms"] * 1e9
    nbytes = r["ckcore_gbps"] * r["ckcore_ms"] * 1e6
    return max(nbytes / copy_gbps / 1e6, flops / peak_tflops / 1e9), nbytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--copy-gbps", type=float, default=None, help="measured earlier (default: measure now)")
    ap.add_argument("--gpu", default=None, help="GPU name for the arch-spec peaks (default: the GPU here)")
    ap.add_argument("--arch", default="sm_90", help="with --gpu: its architecture")
    args = ap.parse_args()
    out_path, files = args.out, args.bench
    if args.gpu:
        name = args.gpu
        arch = arch_mod.load(args.arch)
    else:
        arch, name = arch_mod.detect()
    device = arch.device(name)
    bw = args.copy_gbps or copy_gbps()
    rows = []
    for path in files:
        for line in open(path):
            r = json.loads(line)
            if r.get("kind") != "result" or r["problem"]["C"] != r["problem"]["G"]:
                continue
            roof_ms, nbytes = roofline(r, bw, device.peak_tflops["fp32"])
            rows.append({"op": r["op"], "name": r["name"], "instance": r["instance"], "mbytes": nbytes / 1e6,
                         "ckcore_ms": r["ckcore_ms"], "torch_ms": r["torch_ms"], "speedup": r["speedup"],
                         "ckcore_gbps": r["ckcore_gbps"], "torch_gbps": r["torch_gbps"], "roofline_ms": roof_ms,
                         "roofline_fraction": roof_ms / r["ckcore_ms"]})
    summary = {"gpu": name, "copy_gbps": bw, "fp32_peak_tflops": device.peak_tflops["fp32"], "rows": rows}
    json.dump(summary, open(out_path, "w"), indent=1)
    print(f"copy bandwidth {bw:.0f} GB/s")
    for r in rows:
        print(f"{r['op']:24s} {r['name']:24s} {r['mbytes']:8.1f} MB  {r['ckcore_gbps']:7.0f} GB/s  "
              f"roofline {r['roofline_fraction']:.2f}  x{r['speedup']:.2f}")


if __name__ == "__main__":
    main()
