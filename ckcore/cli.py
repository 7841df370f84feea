"""The ``ckcore`` command: plugins, list, build, select, run, profile, bench, cache."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import CkError, UnsupportedProblem

__all__ = ["main"]


def _json_arg(text: str) -> dict:
    if text.startswith("@"):
        text = Path(text[1:]).read_text()
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CkError(f"--problem is not valid JSON ({exc}); expected an object such as "
                      '\'{"M": 128, "N": 256, "K": 64, "dtype": "bf16", "layout": "rcr"}\'') from None
    if not isinstance(value, dict):
        raise CkError(f"--problem must be a JSON object, got {type(value).__name__}")
    from .bench import problem_fields

    return problem_fields(value)


def _registry(args, op: str | None = None):
    from .registry import Registry, use_interpreter
    from .settings import Settings

    settings = Settings.from_env()
    arch, device = getattr(args, "arch", None) or settings.arch, None
    if arch is None and not use_interpreter(settings):
        from .arch import detect

        found = detect()
        if found:
            arch, device = arch or found[0].arch, found[1]
    reg = Registry(arch, settings=settings, device_name=device)
    if getattr(args, "kernel_set_file", None):
        reg.load_json(args.kernel_set_file)
    else:
        reg.declare(op, getattr(args, "set", None))
    return reg


def _table(rows: list[dict], cols: list[str]) -> None:
    fmt = [lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)] * len(cols)
    cells = [[f(r[c]) for f, c in zip(fmt, cols)] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def cmd_plugins(args) -> int:
    from .plugins import Catalog, get_plugin_manager, plugin_distributions

    pm = get_plugin_manager()
    cat = Catalog(pm)
    dists = {name: (dist, version) for name, dist, version in plugin_distributions(pm)}
    for name in sorted({p for p in cat.owner.values()} | set(dists)):
        dist, version = dists.get(name, ("(registered in-process)", ""))
        c = cat.contributions(name)
        print(f"plugin {name}: {dist} {version}".rstrip())
        print(f"  ops: {', '.join(c['ops']) or '-'}")
        print(f"  kernel families: {', '.join(c['families']) or '-'}")
    for op in sorted(cat.ops):
        fams = ", ".join(f"{f.name} ({cat.owner[('kernel family', f.name)]})" for f in cat.families_of(op))
        print(f"op {op}: families {fams}")
    return 0


def cmd_list(args) -> int:
    reg = _registry(args, args.op)
    for inst in sorted(reg.instances.values(), key=lambda i: i.name):
        print(f"{inst.op}\t{inst.family}\t{inst.name}")
    print(f"{len(reg.instances)} instances ({reg.arch.arch})", file=sys.stderr)
    return 0


def cmd_build(args) -> int:
    reg = _registry(args, args.op)
    report = reg.build(args.workers, progress=not args.json)
    out = {"op": args.op, "arch": reg.arch.arch, "instances": len(reg.instances), **report.to_dict()}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['instances']} instances for {out['arch']}: {report.compiled} compiled, {report.cached} cached, "
              f"{report.failed} failed in {report.seconds:.2f} s")
        for name, err in sorted(report.failures.items()):
            print(f"  failed {name}: {err.splitlines()[0] if err else ''}")
        for op, how in report.selection.items():
            print(f"  selection for {op}: {how}")
    return 0 if report.failed == 0 else 1


def cmd_select(args) -> int:
    reg = _registry(args, args.op)
    problem = reg.coerce_problem(args.op, _json_arg(args.problem))
    sel = reg.select(problem)
    print(sel.instance.name)
    if args.explain:
        print(f"problem: {problem.name}\nreason: {sel.reason}")
        if sel.staging is not None:
            print(f"staged as: {sel.staging.problem.name} (copies {', '.join(t.name for t in sel.staging.tensors)}; "
                  f"ranking and rejections below are the twin's)")
            if sel.direct is not None:
                print(f"  unstaged best: {sel.direct.ranked[0].score:10.4g}  {sel.direct.instance.name}")
        for r in sel.ranked[:10]:
            print(f"  {r.score:10.4g}  {r.instance.name}")
        for name, why in sorted(sel.rejected.items())[: args.max_rejected]:
            print(f"  rejected {name}: {why}")
    return 0


def cmd_run(args) -> int:
    from .dispatch import launch
    from .measure import device_of, environment, time_ms, validate

    out: dict = {"op": args.op, "status": "error"}
    try:
        reg = _registry(args, args.op)
        interpret = reg.interpret
        spec = reg.catalog.op(args.op)
        problem = reg.coerce_problem(args.op, _json_arg(args.problem))
        out["problem"] = problem.to_dict()
        inst = args.instance or reg.select(problem).instance.name
        out["instance"] = inst
        out["device"] = environment(interpret)["gpu"] or "triton-interpreter (cpu)"
        validation = validate(reg, args.op, problem, instance=inst) if args.validate else None
        tensors = spec.random_tensors(problem, 1, device_of(interpret))
        ms = time_ms(lambda: launch(reg, args.op, problem, tensors, instance=inst), interpret=interpret)
        out.update(time_ms=ms, tflops=spec.flops(problem) / ms / 1e9, gbps=spec.min_bytes(problem) / ms / 1e6,
                   validation=validation.to_dict() if validation else None)
        out["status"] = "ok" if validation is None or validation.passed else "failed"
    except CkError as exc:
        out["error"] = {"type": type(exc).__name__, "message": str(exc)}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0 if out["status"] == "ok" else 1


def cmd_profile(args) -> int:
    """Every supporting instance timed (name, estimate, time, TFLOP/s, GB/s, rank), then every
    rejected instance with its reason."""
    from .dispatch import launch
    from .measure import device_of, time_ms

    reg = _registry(args, args.op)
    interpret = reg.interpret
    spec = reg.catalog.op(args.op)
    problem = reg.coerce_problem(args.op, _json_arg(args.problem))
    sel = reg.select(problem)
    tensors = spec.random_tensors(problem, 0, device_of(interpret))
    flops, nbytes = spec.flops(problem), spec.min_bytes(problem)
    rows = []
    for r in sel.ranked:
        row = {"instance": r.instance.name, "estimate_ms": r.score}
        try:
            ms = time_ms(lambda: launch(reg, args.op, problem, tensors, instance=r.instance.name),
                         interpret=interpret, warmup=args.warmup, rep=args.rep)
        except CkError as exc:
            rows.append({**row, "time_ms": float("nan"), "tflops": 0.0, "gbps": 0.0, "error": str(exc)})
            continue
        rows.append({**row, "time_ms": ms, "tflops": flops / ms / 1e9, "gbps": nbytes / ms / 1e6})
    base = spec.torch_baseline(problem, dict(tensors))
    torch_ms = time_ms(base, interpret=interpret, warmup=args.warmup, rep=args.rep)
    rows.sort(key=lambda r: (r["time_ms"] != r["time_ms"], r["time_ms"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    if args.json:
        print(json.dumps({"op": args.op, "problem": problem.to_dict(), "selected": sel.instance.name,
                          "torch_ms": torch_ms, "instances": rows, "rejected": dict(sel.rejected)}))
    else:
        _table(rows, ["rank", "instance", "estimate_ms", "time_ms", "tflops", "gbps"])
        print(f"selected: {sel.instance.name}; torch: {torch_ms:.4g} ms")
        for name, reason in sorted(sel.rejected.items()):
            print(f"  rejected {name}: {reason}")
    return 0


def cmd_bench(args) -> int:
    from .bench import read_suite, run_suite, summarize

    reg = _registry(args, args.op)
    interpret = reg.interpret
    spec = reg.catalog.op(args.op)
    rows = read_suite(args.suite, args.op, spec.suite_ops)[: args.limit or None]
    results, out = [], open(args.out, "w") if args.out else None
    try:
        for rec in run_suite(reg, args.op, rows, interpret=interpret, warmup=args.warmup, rep=args.rep):
            if rec["kind"] == "result":
                results.append(rec)
                print(f"{rec['name'] or rec['problem_name']:40s} {rec['instance']:48s} ck {rec['ckcore_ms']:8.4f} ms "
                      f"torch {rec['torch_ms']:8.4f} ms  x{rec['speedup']:.3f} {'ok' if rec['check']['passed'] else 'MISMATCH'}",
                      flush=True)
            if out:
                out.write(json.dumps(rec) + "\n")
        summary = summarize(results, spec.bench_groups())
        if out:
            out.write(json.dumps(summary) + "\n")
        print(json.dumps(summary))
        if args.plot and results:
            from .plot import plot_speedups

            plot_speedups(results, args.plot, f"ckcore {args.op} vs PyTorch ({Path(args.suite).name})")
    finally:
        if out:
            out.close()
    return 0 if summary["all_checks_passed"] else 1


def cmd_tune(args) -> int:
    from .bench import problem_fields, read_suite
    from .tune import describe, generate_problems, tune

    if args.describe:
        info = describe(args.describe)
        print(json.dumps(info, indent=1, default=list))
        return 0
    if not args.op or not (args.suite or args.generate):
        raise UnsupportedProblem("tune", args.op, "an op and --suite FILE or --generate N (or --describe DATASET)")
    sys.path[:0] = [p for p in args.plugin_path if p not in sys.path]
    from .tune.worker import make_registry

    spec = make_registry({"op": args.op, "kernel_set": args.set, "arch": args.arch,
                          "plugin_modules": args.plugin_module}).catalog.op(args.op)
    problems = []
    if args.generate:
        problems += generate_problems(spec, args.generate, args.seed)
    if args.suite:
        problems += [spec.problem(**problem_fields(row)).to_dict() for row in read_suite(args.suite, args.op, spec.suite_ops)]
    devices = [int(d) for d in args.devices.split(",")] if args.devices else None
    summary = tune(args.op, problems, args.out or f"tune_{args.op}.jsonl.gz", kernel_set=args.set,
                   kernel_set_file=args.kernel_set_file, arch=args.arch,
                   devices=devices, timeout_s=args.timeout, warmup=args.warmup, rep=args.rep,
                   plugin_modules=args.plugin_module, max_seconds=args.max_seconds)
    print(json.dumps(summary))
    return 0


def cmd_train(args) -> int:
    from .registry import Registry
    from .settings import Settings
    from .train import train
    from .tune import Dataset

    first = next(Dataset(args.data[0]).rows(), None)
    gpu = (first or {}).get("provenance", {}).get("gpu")
    reg = Registry(args.arch, settings=Settings.from_env(), device_name=gpu)  # the measured GPU's peaks
    meta = train(reg, args.op, args.data, args.out, folds=args.folds, seed=args.seed)
    m = meta["metrics"]
    print(f"{args.op} on {reg.arch.arch}: {meta['rows']} rows, {meta['problems']} problems, {args.folds}-fold CV by problem")
    print("held-out   mean    median  P10     min     top1    top5")
    for name in ("lightgbm", "rules"):
        r = m[name]
        print(f"{name:9s}  {r['mean']:.4f}  {r['median']:.4f}  {r['p10']:.4f}  {r['min']:.4f}  {r['top1']:.3f}   {r['top5']:.3f}")
    if args.out:
        print(f"model written to {args.out}/{args.op}_{reg.arch.arch}.txt (+ .json)")
    return 0


def cmd_cache(args) -> int:
    from .cache import Cache
    from .settings import Settings

    cache = Cache(Settings.from_env().resolved_cache_dir())
    if args.action == "list":
        for e in cache.entries():
            print(f"{e.fingerprint[:16]}  {e.meta.get('status'):8s} {e.meta.get('arch', '?'):6s} {e.meta.get('name', '?')}")
    elif args.action == "size":
        entries = list(cache.entries())
        print(f"{cache.root}: {len(entries)} entries, {sum(e.size_bytes for e in entries) / 1e6:.2f} MB")
    elif args.action == "prune":
        n = cache.prune(older_than_s=args.older_than_days * 86400 if args.older_than_days else None, failed=args.failed)
        print(f"removed {n} entries")
    elif args.action == "clear":
        print(f"removed {cache.clear()} entries")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ckcore", description="ckcore kernel dispatcher")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, fn, help, op=True, problem=False):
        sp = sub.add_parser(name, help=help)
        sp.set_defaults(fn=fn)
        if op:
            sp.add_argument("op", nargs=None if name not in ("list", "tune") else "?")
            sp.add_argument("--set", default=None, help="kernel set name (default CKCORE_KERNEL_SET or 'default')")
            sp.add_argument("--kernel-set-file", default=None, help="JSON kernel-set file instead of --set")
            sp.add_argument("--arch", default=None, help="target arch, e.g. sm_90 (default: the GPU, else sm_90)")
        if problem:
            sp.add_argument("--problem", required=True, help="problem fields as a JSON object, or @file.json")
        return sp

    add("plugins", cmd_plugins, "installed plugins, ops and kernel families", op=False)
    add("list", cmd_list, "declared instances")
    b = add("build", cmd_build, "compile the kernel set into the cache")
    b.add_argument("--workers", type=int, default=None)
    b.add_argument("--json", action="store_true")
    s = add("select", cmd_select, "the instance chosen for a problem", problem=True)
    s.add_argument("--explain", action="store_true")
    s.add_argument("--max-rejected", type=int, default=10)
    r = add("run", cmd_run, "run one problem (JSON like CK's gpu_helper)", problem=True)
    r.add_argument("--instance", default=None)
    r.add_argument("--validate", action="store_true")
    r.add_argument("--json", action="store_true")
    pr = add("profile", cmd_profile, "time every supporting instance on a problem", problem=True)
    pr.add_argument("--json", action="store_true")
    pr.add_argument("--warmup", type=int, default=10)
    pr.add_argument("--rep", type=int, default=40)
    be = add("bench", cmd_bench, "ckcore vs the PyTorch path on a suite")
    be.add_argument("--suite", required=True)
    be.add_argument("--out", default=None, help="JSON-lines result file")
    be.add_argument("--limit", type=int, default=0)
    be.add_argument("--warmup", type=int, default=25)
    be.add_argument("--rep", type=int, default=100)
    be.add_argument("--plot", default=None, help="write a PNG of per-problem speedups (matplotlib)")
    t = add("tune", cmd_tune, "measure every supporting instance on many problems into a dataset")
    t.add_argument("--suite", default=None, help="JSON-lines problems (a suite)")
    t.add_argument("--generate", type=int, default=None, metavar="N", help="N generated problems (with --suite: both)")
    t.add_argument("--describe", default=None, metavar="DATASET", help="describe a dataset and exit")
    t.add_argument("--seed", type=int, default=0, help="generator seed")
    t.add_argument("--out", default=None, help="dataset (.jsonl.gz; default tune_<op>.jsonl.gz); appended to")
    t.add_argument("--devices", default=None, help="GPU indices, e.g. 0,1 (one worker each)")
    t.add_argument("--timeout", type=float, default=60.0, help="seconds per measurement before a hang is declared")
    t.add_argument("--warmup", type=int, default=2, help="do_bench warm-up budget, ms")
    t.add_argument("--rep", type=int, default=10, help="do_bench timing budget, ms (median and p20/p80 of the samples)")
    t.add_argument("--max-seconds", type=float, default=None, help="stop after this long; rerun to resume")
    t.add_argument("--plugin-module", action="append", default=[], help="extra hook module to register")
    t.add_argument("--plugin-path", action="append", default=[], help="folder to put on sys.path for --plugin-module")
    tr = sub.add_parser("train", help="fit and cross-validate the lightgbm selection model of an op")
    tr.set_defaults(fn=cmd_train, set=None, kernel_set_file=None)
    tr.add_argument("op")
    tr.add_argument("--data", action="append", required=True, help="tune dataset (repeatable)")
    tr.add_argument("--out", default=None, help="folder for <op>_<arch>.txt and .json (default: report only)")
    tr.add_argument("--arch", default="sm_90")
    tr.add_argument("--folds", type=int, default=5)
    tr.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("cache", help="list, size, prune or clear the cache")
    c.set_defaults(fn=cmd_cache)
    c.add_argument("action", choices=["list", "size", "prune", "clear"])
    c.add_argument("--failed", action="store_true", help="prune: also negative entries")
    c.add_argument("--older-than-days", type=float, default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except CkError as exc:
        print(f"ckcore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
