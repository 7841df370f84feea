"""Does `ckcore tune` time an instance as `ckcore bench` does? (GPU machine)

For one problem and a few instances: the tune worker's measurement (`measure_one`, in this
process), `time_ms` of the same dispatch as the bench times it, and the bench row of the selected
instance, all on one GPU in one process, in both orders. Written after X3D dw108's `v4` window
instance measured 185.9 µs in a tune on an H200 and 65-68 µs in benches on an H200 and an H100.
usage: python benchmarks/tune_bench_probe.py OP SUITE_NAME INSTANCE [INSTANCE ...]
"""

import json
import sys

from ckcore import Registry
from ckcore.bench import bench_problem, problem_fields
from ckcore.dispatch import launch
from ckcore.measure import time_ms
from ckcore.tune.worker import measure_one


def main():
    op, name, *instances = sys.argv[1:]
    row = next(json.loads(line) for line in open("benchmarks/suites/conv.jsonl") if json.loads(line)["name"] == name)
    fields = problem_fields(row)
    reg = Registry()
    reg.declare(op, "default")
    spec = reg.catalog.op(op)
    problem = spec.problem(**fields)
    tensors = spec.random_tensors(problem, 0, "cuda")
    for rnd in range(2):
        cache = {}
        for inst in instances if rnd == 0 else reversed(instances):
            tuned = measure_one(reg, {"op": op, "problem": problem.to_dict(), "instance": inst}, cache)
            ms = time_ms(lambda: launch(reg, op, problem, tensors, instance=inst), interpret=False)
            variant = reg.specialized(reg.named(inst), problem).name
            print(json.dumps({"round": rnd, "instance": inst, "variant": variant, "tune_ms": tuned["time_ms"],
                              "tune_status": tuned["status"], "samples": tuned.get("samples"), "bench_timing_ms": ms}))
    r = bench_problem(reg, op, fields, interpret=False)
    print(json.dumps({"bench": r["instance"], "ckcore_ms": r["ckcore_ms"], "torch_ms": r["torch_ms"]}))


if __name__ == "__main__":
    main()
