"""Per suite row of a merged-group sweep (benchmarks/run_tma_gpb_sweep.sh): the best TMA instance
with merged groups, the best pointer one, and cuDNN timed now (torch baseline of the op, same
tensors shape and memory format, ckcore's timer).
usage: python benchmarks/tma_gpb_summary.py DATASET..."""

import collections
import gzip
import json
import sys

from ckcore import Registry
from ckcore.measure import time_ms


def main():
    reg = Registry()
    for path in sys.argv[1:]:
        by = collections.defaultdict(list)
        for line in gzip.open(path):
            r = json.loads(line)
            if r["status"] == "ok":
                by[(r["op"], r["problem_name"])].append(r)
            elif r["status"] != "unsupported":
                print("NOT OK", r["instance"], r["problem_name"], r["status"], (r.get("error") or "")[:200])
        for (op, name), rs in sorted(by.items()):
            spec = reg.catalog.op(op)
            problem = spec.problem(**rs[0]["problem"])
            tensors = spec.random_tensors(problem, 0, "cuda")
            tensors[spec.output] = spec.empty_output(problem, tensors[spec.inputs[0]])
            cudnn = time_ms(spec.torch_baseline(problem, tensors), interpret=False)
            tma = [r for r in rs if r["family"].startswith("conv_tma")]
            ptr = [r for r in rs if not r["family"].startswith("conv_tma")]
            bt = min(tma, key=lambda r: r["time_ms"]) if tma else None
            bp = min(ptr, key=lambda r: r["time_ms"])
            line = f"{op[13:]:9s} {name[len(op) + 1:]:58s} cudnn {cudnn * 1e3:7.1f} us  ptr {bp['time_ms'] * 1e3:7.1f} us"
            if bt:
                line += (f"  tma {bt['time_ms'] * 1e3:7.1f} us {bt['instance'][len('conv_tma_'):]:38s}"
                         f" x{bp['time_ms'] / bt['time_ms']:.2f} ptr  x{cudnn / bt['time_ms']:.2f} cudnn")
            print(line, flush=True)


if __name__ == "__main__":
    main()
