"""Compile and load times of the gemm kernel sets (GPU machine; writes one JSON object).

1. cold compile, one worker: N instances of the default set, fresh ckcore and Triton caches;
2. cold build of the whole ``full`` set with W workers (fresh caches);
3. warm build of the ``full`` set (everything cached: nothing compiles);
4. warm load: a fresh process loads every ``full`` instance from the cache onto the GPU
   (integrity check + module load), reported per instance; the first load of each kernel
   signature also builds Triton's C launcher, reported separately.

usage: python benchmarks/compile_and_load.py OUT.json [--one-worker N] [--workers W]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def fresh_env(root):
    os.environ["CKCORE_CACHE_DIR"] = os.path.join(root, "ck")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "triton")


def registry(kernel_set):
    from ckcore import Registry, Settings

    reg = Registry("sm_90", settings=Settings.from_env())
    reg.declare("gemm", kernel_set)
    return reg


def load_all():
    import torch
    from ckcore import Registry, Settings
    from ckcore.arch import detect

    torch.cuda.init()
    arch, name = detect()
    reg = Registry(arch.arch, settings=Settings.from_env(), device_name=name)
    reg.declare("gemm", "full")
    firsts, rest, seen = [], [], set()
    for inst in sorted(reg.instances.values(), key=lambda i: i.name):
        sig = tuple(reg.family(inst).signature(inst.key).items())
        t0 = time.perf_counter()
        reg.load(inst)
        dt = (time.perf_counter() - t0) * 1e3
        (rest if sig in seen else firsts).append(dt)
        seen.add(sig)
    print(json.dumps({"instances": len(firsts) + len(rest), "signatures": len(firsts),
                      "first_load_per_signature_ms_median": statistics.median(firsts),
                      "warm_load_ms_median": statistics.median(rest), "warm_load_ms_mean": statistics.mean(rest),
                      "warm_load_ms_max": max(rest), "total_ms": sum(firsts) + sum(rest)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--one-worker", type=int, default=12)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--load-only", action="store_true")
    ap.add_argument("--keep", default=None, help="build the full set into this cache root and keep it")
    args = ap.parse_args()
    if args.load_only:
        return load_all()
    result = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as root:
        fresh_env(root)
        reg = registry("default")
        insts = sorted(reg.instances.values(), key=lambda i: i.name)[:: max(1, len(reg.instances) // args.one_worker)][: args.one_worker]
        rep = reg.build(max_workers=1, instances=insts, progress=False)
        per = [reg.cache.lookup(reg.fingerprint(i)).meta["compile_seconds"] for i in insts]
        result["one_worker"] = {"instances": len(insts), "seconds": rep.seconds, "per_kernel_s_mean": rep.seconds / len(insts),
                                "compile_s_median": statistics.median(per), "compile_s_max": max(per),
                                "note": "the first compile in a process includes Triton's start-up"}
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or tmp
        fresh_env(root)
        reg = registry("full")
        rep = reg.build(max_workers=args.workers, progress=False)
        result["full_cold"] = {"workers": args.workers, **rep.to_dict(), "instances": len(reg.instances)}
        result["full_cold"]["failures"] = dict(list(rep.failures.items())[:5])
        reg2 = registry("full")
        rep2 = reg2.build(max_workers=args.workers, progress=False)
        result["full_warm_build"] = {k: v for k, v in rep2.to_dict().items() if k != "failures"}
        out = subprocess.run([sys.executable, __file__, "x", "--load-only"], capture_output=True, text=True, env=os.environ)
        result["full_warm_load"] = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {"error": out.stderr[-2000:]}
    import torch, triton

    result["env"] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                     "date": time.strftime("%Y-%m-%d"), "command": " ".join(sys.argv)}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
