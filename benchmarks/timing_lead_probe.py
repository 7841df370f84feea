"""Does host time leak into the tune timings of small kernels? (GPU machine.)

For a few backward-weight (problem, instance) pairs of 10-100 µs, times each as ``ckcore tune``
does (``ckcore.measure.gpu_times``: at most 20 warm-up and 200 timed runs) without and with a
GPU sleep queued ahead of each batch (``lead``), several rounds each, and prints medians, p20-p80 spreads and the host time the
worker measured to enqueue one run (flush, two events, the launch). One JSON line per pair.
usage: python benchmarks/timing_lead_probe.py [ROUNDS]
"""

import json
import statistics
import sys

import torch

from ckcore.dispatch import default_registry, launch
from ckcore import measure
from ckcore.measure import inputs_for

OP = "grouped_conv_bwd_weight"
PAIRS = [  # (problem fields, instance): measured 17 / 43 µs on two H100 machines, 2026-11-25
    ({"ndim": 2, "N": 32, "G": 1, "C": 32, "K": 32, "spatial": [23, 23], "filter": [3, 3], "stride": [1, 1],
      "pad": [1, 1], "dilation": [1, 1], "dtype": "bf16", "layout": "nhwgc"}, "conv_bwd_weight_bf16_cl_32x32x64_gpb1_w4_s3_k32_a16"),
    ({"ndim": 2, "N": 32, "G": 1, "C": 32, "K": 32, "spatial": [23, 23], "filter": [3, 3], "stride": [1, 1],
      "pad": [1, 1], "dilation": [1, 1], "dtype": "bf16", "layout": "nhwgc"}, "conv_tma_bwd_weight_bf16_8x16_64x64_k16_w4_s3"),
    ({"ndim": 2, "N": 32, "G": 32, "C": 1024, "K": 1024, "spatial": [7, 7], "filter": [3, 3], "stride": [1, 1],
      "pad": [1, 1], "dilation": [1, 1], "dtype": "bf16", "layout": "nhwgc"}, "conv_bwd_weight_bf16_cl_32x32x64_gpb1_w4_s3_k8_a16"),
    ({"ndim": 2, "N": 32, "G": 32, "C": 128, "K": 128, "spatial": [56, 56], "filter": [3, 3], "stride": [1, 1],
      "pad": [1, 1], "dilation": [1, 1], "dtype": "bf16", "layout": "nhwgc"}, "conv_bwd_weight_bf16_cl_32x32x64_gpb8_w4_s3_k32_a16"),
]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    reg = default_registry()
    spec = reg.catalog.op(OP)
    for fields, name in PAIRS:
        p = reg.coerce_problem(OP, fields)
        _, tensors = inputs_for(reg, OP, p)
        tensors[spec.output] = spec.empty_output(p, tensors[spec.inputs[0]])
        run = lambda: launch(reg, OP, p, tensors, instance=name)  # noqa: E731
        run()
        torch.cuda.synchronize()
        out = {"problem": p.name, "instance": name}
        for lead in (False, True):
            meds, spreads, hosts = [], [], []
            for _ in range(rounds):
                t = sorted(measure.gpu_times(run, 10, 50, max_warmup=20, max_runs=200, lead=lead))
                meds.append(t[len(t) // 2] * 1e3)
                spreads.append(t[int(0.8 * len(t))] / t[int(0.2 * len(t))])
                hosts.append(measure._HOST_S_PER_RUN[0] * 1e6)
            out["lead" if lead else "no_lead"] = {"median_us": [round(m, 1) for m in meds],
                                                  "p80_over_p20": [round(s, 2) for s in spreads],
                                                  "host_us_per_run": round(statistics.median(hosts), 1)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
