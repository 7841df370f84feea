"""The registry: declared kernel instances for one target architecture, their fingerprints,
building them into the cache, selecting one per problem, and loading it for launch."""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, Iterable

import attrs

from . import arch as arch_mod
from .build import BuildReport, build_many, compile_into_cache
from .cache import Cache
from .compiler import CompileJob, get_compiler
from .errors import CompileError, InvalidKernelKey, NoKernelFound, UnsupportedProblem
from .heuristics import Candidate, Ranked, get_heuristic
from .keys import KeyBase, ProblemBase, sha256_json
from .plugins import Catalog, get_plugin_manager
from .render import render
from .settings import Settings
from .spec import Instance, KernelFamily

__all__ = ["Registry", "Selection", "Rejections", "use_interpreter"]

KERNEL_SET_FORMAT = "ckcore-kernel-set/1"


def use_interpreter(settings: Settings | None = None) -> bool:
    """True when kernels run in Triton's interpreter: ``CKCORE_INTERPRET`` or no CUDA device."""
    settings = settings or Settings.from_env()
    if settings.interpret:
        return True
    import torch

    return not torch.cuda.is_available()


@attrs.frozen
class Selection:
    """The chosen instance for a problem, why, and the full ranking (best first).

    With ``staging`` set, ``instance`` runs the staged twin (``staging.problem``, on copies of
    the tensors: :mod:`ckcore.staging`), and ``ranked`` / ``rejected`` are the twin's;
    ``direct`` is then the selection for the problem itself (None where nothing runs it)."""

    instance: Instance
    reason: str
    ranked: tuple[Ranked, ...]
    rejected: Mapping[str, str] = attrs.field(eq=False, hash=False)
    staging: Any = attrs.field(default=None, eq=False, hash=False)
    direct: "Selection | None" = attrs.field(default=None, eq=False, hash=False)


def bucket_matches(family_bucket: Hashable, want: Hashable) -> bool:
    """Whether a family's :meth:`~ckcore.spec.KernelFamily.bucket` admits a problem whose op
    bucket is ``want``: None admits every problem; a tuple admits a tuple ``want`` whose leading
    components it equals, a None component admitting any value there (a family bucket shorter
    than the op's leaves the rest open); anything else must equal ``want``."""
    if family_bucket is None or family_bucket == want:
        return True
    if isinstance(family_bucket, tuple) and isinstance(want, tuple) and len(family_bucket) <= len(want):
        return all(f is None or f == w for f, w in zip(family_bucket, want))
    return False


class Rejections(Mapping):
    """``{instance name: reason}`` for the instances that do not support a problem. Those the
    registry skipped because their family's :meth:`~ckcore.spec.KernelFamily.bucket` differs
    from the problem's get their reason (the family's ``supports``) when the mapping is first
    read; its length is known without that."""

    def __init__(self, registry: "Registry", problem: ProblemBase, eager: dict[str, str],
                 deferred: list[list[Instance]]):
        self._registry, self._problem, self._eager, self._deferred = registry, problem, eager, deferred
        self._all: dict[str, str] | None = None

    def _full(self) -> dict[str, str]:
        if self._all is None:
            reg, p = self._registry, self._problem
            out = dict(self._eager)
            for inst in (i for group in self._deferred for i in group):
                fam = reg.family(inst)
                out[inst.name] = reg._rejection(inst, fam, p) or (
                    f"bucket {fam.bucket(inst.key)!r} != the problem's {reg.catalog.op(p.op).bucket(p)!r}")
            self._all = out
        return self._all

    def __getitem__(self, name: str) -> str:
        return self._full()[name]

    def __iter__(self):
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._eager) + sum(map(len, self._deferred))


@attrs.frozen
class LaunchPlan:
    """The tensor-independent part of a launch (see :meth:`Registry.plan`)."""

    family: KernelFamily
    grid: tuple[int, int, int] | None
    workspaces: dict
    reason: str | None


class Registry:
    """Declared instances of the loaded plugins' kernel families for one architecture.

    :param arch: target (``"sm_90"``); default ``CKCORE_ARCH``, else ``sm_90``. Never touches CUDA.
    :param settings: configuration (default :meth:`Settings.from_env`).
    :param catalog: ops and families (default: from the installed plugins).
    :param device_name: GPU product name used for peak figures in cost models (``"NVIDIA H200"``).
    :param interpret: whether kernels run in Triton's interpreter; None (default): decided at first
        use (``CKCORE_INTERPRET``, or no CUDA device). False selects as on the GPU even without one
        (selection studies on a CPU: families that cannot be interpreted stay candidates).
    """

    def __init__(self, arch: str | None = None, *, settings: Settings | None = None, catalog: Catalog | None = None,
                 device_name: str | None = None, interpret: bool | None = None):
        self.settings = settings or Settings.from_env()
        if interpret is not None:
            self.interpret = interpret  # fixes the cached property below
        self.arch = arch_mod.load(arch or self.settings.arch or "sm_90")
        self.device = self.arch.device(device_name)
        self.catalog = catalog or Catalog(get_plugin_manager(self.settings))
        self.cache = Cache(self.settings.resolved_cache_dir())
        self.instances: dict[str, Instance] = {}
        self._jobs: dict[str, CompileJob] = {}
        self._fingerprints: dict[str, str] = {}
        self._selections: dict[ProblemBase, Selection] = {}
        self._direct: dict[ProblemBase, Selection] = {}
        self._stagings: dict[ProblemBase, Any] = {}
        self._loaded: dict[tuple[str, bool], Any] = {}
        self._plans: dict[tuple[str, ProblemBase], LaunchPlan] = {}
        self._failed: dict[str, str] = {}
        self._buckets: dict[str, tuple] = {}
        self._derived: dict[str, Instance] = {}
        self._specialized: dict[tuple[str, ProblemBase], Instance] = {}
        from .workspace import Workspaces

        self.workspaces = Workspaces()

    @functools.cached_property
    def interpret(self) -> bool:
        """Whether this registry's kernels run in the interpreter (decided once, at first use)."""
        return use_interpreter(self.settings)

    # declaring --------------------------------------------------------------------------------
    def family(self, instance: Instance) -> KernelFamily:
        return self.catalog.families[instance.family]

    def add(self, family: KernelFamily | str, key: KeyBase | dict) -> Instance:
        """Declare one instance. :raises InvalidKernelKey: the key is invalid on this arch."""
        fam = self.catalog.families[family] if isinstance(family, str) else family
        if isinstance(key, dict):
            key = fam.key_cls.from_dict(key)
        if not isinstance(key, fam.key_cls):
            raise InvalidKernelKey(repr(key), [f"expected a {fam.key_cls.__name__} for family {fam.name}"])
        reasons = fam.check(key, self.arch)
        if reasons:
            raise InvalidKernelKey(key.name, reasons)
        inst = Instance.of(fam, key)
        other = self.instances.get(inst.name)
        if other is not None and other != inst:
            raise InvalidKernelKey(inst.name, [f"name already used by a different key {other.key!r}"])
        self.instances[inst.name] = inst
        self.forget_selections()
        return inst

    def declare(self, op: str | None = None, kernel_set: str | None = None) -> list[Instance]:
        """Declare the named kernel set (default ``CKCORE_KERNEL_SET``) of every family of
        ``op`` (or of all ops). :raises NoKernelFound: no family has a set of that name."""
        kernel_set = kernel_set or self.settings.kernel_set
        families = self.catalog.families_of(op) if op else list(self.catalog.families.values())
        added = []
        for fam in families:
            sets = fam.kernel_sets()
            if kernel_set in sets:
                added += [self.add(fam, key) for key in sets[kernel_set](self.arch)]
        if not added:
            known = self.kernel_set_names(op)
            raise NoKernelFound(op or "*", f"kernel set {kernel_set!r}", {"(sets)": f"known sets: {', '.join(known)}"})
        return added

    def kernel_set_names(self, op: str | None = None) -> list[str]:
        """The names of the kernel sets that the families of ``op`` (or of all ops) declare, sorted."""
        families = self.catalog.families_of(op) if op else list(self.catalog.families.values())
        return sorted({s for f in families for s in f.kernel_sets()})

    def load_json(self, path: str | Path, op: str | None = None) -> list[Instance]:
        """Declare the instances of a JSON kernel-set file (the :meth:`export_json` format),
        only those of ``op``'s families when given."""
        data = json.loads(Path(path).read_text())
        if data.get("format") != KERNEL_SET_FORMAT:
            raise InvalidKernelKey(str(path), [f"format={data.get('format')!r}: expected {KERNEL_SET_FORMAT!r}"])
        items = data["instances"]
        if op is not None:
            mine = {f.name for f in self.catalog.families_of(op)}
            items = [item for item in items if item["family"] in mine]
        return [self.add(item["family"], item["key"]) for item in items]

    def export_json(self, path: str | Path | None = None) -> dict:
        """The declared instances as a JSON kernel set; written to ``path`` when given."""
        data = {
            "format": KERNEL_SET_FORMAT,
            "arch": self.arch.arch,
            "instances": [
                {"name": i.name, "op": i.op, "family": i.family, "key": i.key.to_dict()}
                for i in sorted(self.instances.values(), key=lambda i: i.name)
            ],
        }
        if path is not None:
            Path(path).write_text(json.dumps(data, indent=1) + "\n")
        return data

    def of_op(self, op: str) -> list[Instance]:
        return [i for i in self.instances.values() if i.op == op]

    def _by_bucket(self, op: str) -> dict[Hashable, list[Instance]]:
        """The declared instances of ``op`` grouped by their family's ``bucket`` (rebuilt when
        the declared instances change)."""
        return self._bucket_index(op)[0]

    def _bucket_index(self, op: str) -> tuple[dict[Hashable, list[Instance]], list[tuple[Instance, Hashable]], dict]:
        """(the groups of :meth:`_by_bucket`, every instance with its bucket in declaration order,
        a memo of problem bucket -> :meth:`_bucket_groups`); rebuilt when the declared instances
        change."""
        state = (len(self.instances), id(next(reversed(self.instances.values()), None)))
        cached = self._buckets.get(op)
        if cached is None or cached[0] != state:
            ordered = [(inst, self.family(inst).bucket(inst.key)) for inst in self.of_op(op)]
            groups: dict[Hashable, list[Instance]] = {}
            for inst, bucket in ordered:
                groups.setdefault(bucket, []).append(inst)
            cached = self._buckets[op] = (state, groups, ordered, {})
        return cached[1:]

    def _bucket_groups(self, op: str, want: Hashable) -> tuple[list[Instance], list[list[Instance]]]:
        """(the instances whose family bucket matches the problem bucket ``want``
        (:func:`bucket_matches`): those of tuple or value buckets in declaration order, then
        those of None buckets; the groups of the others), memoised per ``want``."""
        groups, ordered, memo = self._bucket_index(op)
        found = memo.get(want)
        if found is None:
            match = {b for b in groups if b is not None and bucket_matches(b, want)}
            checked = [i for i, b in ordered if b in match] + groups.get(None, [])
            deferred = [g for b, g in groups.items() if b is not None and b not in match]
            found = memo[want] = (checked, deferred)
        return found

    def specialized(self, inst: Instance, problem: ProblemBase) -> Instance:
        """The instance that runs ``problem`` for declared ``inst``: ``inst`` itself, or the
        variant its family's :meth:`~ckcore.spec.KernelFamily.specialize` derives (kept by name,
        see :meth:`derived`; not added to :attr:`instances`).

        :raises InvalidKernelKey: the variant is invalid on this arch.
        """
        fam = self.family(inst)
        if type(fam).specialize is KernelFamily.specialize:  # no variants: nothing to derive
            return inst
        memo = self._specialized.get((inst.name, problem))
        if memo is not None:
            return memo
        key = fam.specialize(inst.key, problem)
        if key is inst.key or key == inst.key:
            self._specialized[(inst.name, problem)] = inst
            return inst
        name = key.name
        found = self._derived.get(name)
        if found is None:
            reasons = fam.check(key, self.arch)
            if reasons:
                raise InvalidKernelKey(name, reasons)
            found = self._derived[name] = Instance.of(fam, key)
        self._specialized[(inst.name, problem)] = found
        return found

    def derived(self, name: str) -> Instance | None:
        """A variant :meth:`specialized` derived, by name, or None."""
        return self._derived.get(name)

    def named(self, name: str) -> Instance | None:
        """A declared instance, or a variant :meth:`specialized` derived, by name; or None."""
        return self.instances.get(name) or self._derived.get(name)

    # identity ---------------------------------------------------------------------------------
    def job(self, inst: Instance) -> CompileJob:
        """The compile job of an instance (rendered once, then memoised)."""
        job = self._jobs.get(inst.name)
        if job is None:
            fam = self.family(inst)
            job = CompileJob(
                name=inst.name,
                source=render(fam, inst.key, self.arch),
                signature=fam.signature(inst.key),
                constexprs=fam.constexprs(inst.key),
                divisible_by_16=fam.divisible_by_16(inst.key),
                options=fam.compile_options(inst.key),
                arch=self.arch.arch,
                cc=self.arch.cc,
            )
            self._jobs[inst.name] = job
        return job

    def fingerprint(self, inst: Instance) -> str:
        """sha256 of the rendered source, compiler driver and version, target arch and options."""
        fp = self._fingerprints.get(inst.name)
        if fp is None:
            fp = self._fingerprints[inst.name] = self._job_fingerprint(self.job(inst))
        return fp

    def _job_fingerprint(self, job: CompileJob) -> str:
        """sha256 of ``job`` and the compiler driver's name and version: its cache key."""
        driver = get_compiler(self.settings.compiler)
        return sha256_json({"job": job.identity(), "compiler": driver.name, "version": driver.version()})

    def _meta(self, inst: Instance) -> dict:
        driver = get_compiler(self.settings.compiler)
        return {"name": inst.name, "op": inst.op, "family": inst.family, "key": inst.key.to_dict(),
                "arch": self.arch.arch, "compiler": driver.name, "compiler_version": driver.version()}

    # building ---------------------------------------------------------------------------------
    def build(self, max_workers: int | None = None, *, progress: bool = True, instances: Iterable[Instance] | None = None) -> BuildReport:
        """Compile every declared instance missing from the cache, in parallel spawn-based
        workers (``max_workers``; default ``CKCORE_BUILD_WORKERS`` or the CPU count).
        Cached compile failures count as failed and are not retried."""
        started = time.perf_counter()
        todo, report = [], BuildReport()
        for inst in instances if instances is not None else list(self.instances.values()):
            fp = self.fingerprint(inst)
            entry = self.cache.lookup(fp)
            if entry is None:
                todo.append((self.job(inst), fp, self._meta(inst)))
            elif entry.ok:
                report.cached += 1
            else:
                report.failed += 1
                report.failures[inst.name] = entry.meta.get("error", "compile failed")
        workers = max_workers or self.settings.workers or os.cpu_count() or 1
        built = build_many(todo, str(self.cache.root), self.settings.compiler, min(workers, max(len(todo), 1)), progress)
        report.compiled, report.failed = built.compiled, report.failed + built.failed
        report.failures.update(built.failures)
        self._failed.update(report.failures)
        self.forget_selections()
        report.selection = self.prepare_selection({i.op for i in (instances if instances is not None
                                                                  else self.instances.values())})
        report.seconds = time.perf_counter() - started
        return report

    def prepare_selection(self, ops: Iterable[str]) -> dict[str, str]:
        """Let the heuristic driver prepare each op's selection (``lightgbm``: compile its
        model's trees into the cache); ``{op: what selection will use}``."""
        heuristic = get_heuristic(self.settings.heuristic)
        prepare = getattr(heuristic, "prepare", None)
        return {op: prepare(self, op) for op in sorted(ops)} if prepare else {}

    # selecting --------------------------------------------------------------------------------
    def candidates(self, problem: ProblemBase) -> tuple[list[Candidate], Rejections]:
        """Instances that support ``problem``, and ``{name: reason}`` for those that do not.

        Only the instances whose family's ``bucket`` matches the problem's (the op's ``bucket``;
        :func:`bucket_matches`) are checked; the others are rejected, with their reason computed
        when read."""
        operator = self.catalog.op(problem.op)
        want = operator.bucket(problem)
        if want is None:
            checked, deferred = [i for g in self._by_bucket(problem.op).values() for i in g], []
        else:
            checked, deferred = self._bucket_groups(problem.op, want)
        ok, rejected = [], {}
        for inst in checked:
            fam = self.family(inst)
            try:
                inst = self.specialized(inst, problem)
            except InvalidKernelKey as exc:
                rejected[inst.name] = f"its variant for this problem is invalid: {exc}"
                continue
            reason = self._rejection(inst, fam, problem)
            if reason:
                rejected[inst.name] = reason
            else:
                ok.append(Candidate(inst, fam, operator))
        return ok, Rejections(self, problem, rejected, deferred)

    def _rejection(self, inst: Instance, fam: KernelFamily, problem: ProblemBase) -> str | None:
        """Why ``inst`` cannot run ``problem`` (compile failure, determinism, ``supports``)."""
        if self._failed.get(inst.name):
            return "failed to compile"
        if self.settings.deterministic and not fam.deterministic(inst.key):
            return "not deterministic (set CKCORE_DETERMINISTIC=0 to allow)"
        if not fam.interpretable and self.interpret:
            return f"{fam.name} kernels do not run in Triton's interpreter (no CUDA device, or CKCORE_INTERPRET=1)"
        return fam.supports(inst.key, problem)

    def select(self, problem: ProblemBase) -> Selection:
        """The instance to run ``problem`` with, and why (memoised per problem). Where the op
        offers a staged twin (:meth:`~ckcore.spec.Operator.staging`, ``CKCORE_STAGING``), the
        twin's best score (ms) plus the copies' estimate is weighed against the best direct one.

        :raises NoKernelFound: no declared instance supports it (nor its twin).
        """
        sel = self._selections.get(problem)
        if sel is not None:
            return sel
        staging = self.staging(problem)
        try:
            sel = self._select_direct(problem)
        except NoKernelFound:
            if staging is None:
                raise
            sel = None
        if staging is not None:
            twin = self._twin_selection(staging.problem)
            if twin is None and sel is None:  # neither runs: name the problem asked for
                self._select_direct(problem)
            if twin is not None:
                copy_ms = staging.cost_ms(self.device)
                staged_ms = twin.ranked[0].score + copy_ms
                if sel is None or staged_ms < sel.ranked[0].score:
                    against = "nothing runs it unstaged" if sel is None else \
                        f"direct best {sel.ranked[0].score:.4g} ({sel.instance.name})"
                    reason = (f"staged ({staging.reason}): {twin.ranked[0].score:.4g} + copies {copy_ms:.3g} = "
                              f"{staged_ms:.4g} against {against}; {twin.reason}")
                    sel = Selection(twin.instance, reason, twin.ranked, twin.rejected, staging, sel)
        self._selections[problem] = sel
        return sel

    def staging(self, problem: ProblemBase, *, explicit: bool = False):
        """The op's staged twin of ``problem`` (:meth:`~ckcore.spec.Operator.staging`), or None;
        None also when ``CKCORE_STAGING=0``, unless ``explicit`` (prepacked inputs need it).
        Memoised per problem."""
        if not (self.settings.staging or explicit):
            return None
        try:
            return self._stagings[problem]
        except KeyError:
            found = self._stagings[problem] = self.catalog.op(problem.op).staging(problem)
            return found

    def prepack(self, op: str, problem, **tensors) -> dict:
        """``{name: ckcore.packing.Prepacked, or the tensor unchanged}``: each input in the
        layout the problem's staged twin reads, copied once (:mod:`ckcore.packing`).

        :raises UnsupportedProblem: a tensor that is not an input of ``op`` or does not match
            ``problem``."""
        from .packing import pack

        return pack(self, op, problem, tensors)

    def forget_selections(self) -> None:
        """Drop the memoised selections (declared instances or compile failures changed)."""
        self._selections.clear()
        self._direct.clear()

    def _twin_selection(self, problem: ProblemBase) -> Selection | None:
        """The direct selection for a staged twin, or None when nothing supports it."""
        try:
            return self._select_direct(problem)
        except NoKernelFound:
            return None

    def _select_direct(self, problem: ProblemBase) -> Selection:
        """The best instance that runs ``problem`` on the caller's tensors (memoised)."""
        memo = self._direct.get(problem)
        if memo is not None:
            return memo
        cands, rejected = self.candidates(problem)
        if not cands:
            raise NoKernelFound(problem.op, problem.name, rejected)
        heuristic = get_heuristic(self.settings.heuristic)
        if getattr(heuristic, "uses_registry", False):  # e.g. autotune, which measures
            ranked = tuple(heuristic.rank(problem, cands, self.arch, self.device, registry=self))
        else:
            ranked = tuple(heuristic.rank(problem, cands, self.arch, self.device))
        best = ranked[0]
        reason = (f"{heuristic.name}: best score {best.score:.4g} ({best.note}) of {len(ranked)} supporting "
                  f"instances; {len(rejected)} rejected")
        sel = self._direct[problem] = Selection(best.instance, reason, ranked, rejected)
        return sel

    def staging_for(self, inst: Instance, problem: ProblemBase):
        """How the named instance ``inst`` runs ``problem`` when it does not support it as it
        is: the op's staged twin, where ``inst`` supports that (None otherwise). A selection
        that staged ``problem`` with ``inst`` gives its twin."""
        sel = self._selections.get(problem)
        if sel is not None and sel.staging is not None and sel.instance.name == inst.name:
            return sel.staging
        if self.plan(self.specialized(inst, problem), problem).reason is None:
            return None
        staging = self.staging(problem)
        if staging is None or self.plan(self.specialized(inst, staging.problem), staging.problem).reason:
            return None
        return staging

    def selected_kernel(self, problem: ProblemBase, *, interpret: bool = False) -> tuple[Selection, Any]:
        """The selection for ``problem`` and its instance's launchable kernel. An instance that
        fails to compile (e.g. a derived epilogue variant that needs more shared memory than
        its plain tile) is recorded as failed and the next ranked one is taken, so a compile
        failure never reaches the caller while another instance supports the problem.

        :raises NoKernelFound: no instance that compiles supports it.
        """
        while True:
            sel = self.select(problem)
            inst = sel.instance
            try:
                return sel, self.load(inst, interpret=interpret)
            except CompileError as exc:
                self._failed[inst.name] = str(exc)
                self.forget_selections()

    def compile_failure(self, name: str) -> str | None:
        """Why instance ``name`` failed to compile in :meth:`build`, or None."""
        return self._failed.get(name)

    def plan(self, inst: Instance, problem: ProblemBase) -> "LaunchPlan":
        """What launching ``inst`` on ``problem`` needs that does not depend on the tensors:
        the family, the grid, the workspaces and why the instance cannot run it (None if it can),
        memoised per (instance, problem) so repeated dispatches skip it."""
        key = (inst.name, problem)
        plan = self._plans.get(key)
        if plan is None:
            fam = self.family(inst)
            reason = fam.supports(inst.key, problem)
            plan = LaunchPlan(fam, None if reason else fam.grid(inst.key, problem),
                              {} if reason else fam.workspaces(inst.key, problem), reason)
            self._plans[key] = plan
        return plan

    # loading ----------------------------------------------------------------------------------
    def load(self, inst: Instance, *, interpret: bool = False):
        """A launchable kernel (``kernel[grid](*args)``) for ``inst``.

        On the GPU the compiled binary comes from the cache (compiled now if missing or
        damaged). With ``interpret`` the rendered source runs in Triton's interpreter.
        :raises CompileError: the instance does not compile (a cached negative entry included).
        """
        memo = self._loaded.get((inst.name, interpret))
        if memo is not None:
            return memo
        kernel = self._load_job(self.job(inst), self.fingerprint(inst), lambda: self._meta(inst), interpret)
        self._loaded[(inst.name, interpret)] = kernel
        return kernel

    def _load_job(self, job: CompileJob, fp: str, meta, interpret: bool):
        """``job`` launchable: interpreted, or compiled into the cache under ``fp`` (``meta()``
        its metadata) and loaded. :raises CompileError:"""
        if interpret:
            from .interpret import interpreted_kernel

            return interpreted_kernel(job)
        entry = self.cache.lookup(fp)
        if entry is None:
            entry = compile_into_cache(job, fp, str(self.cache.root), self.settings.compiler, meta())
        if not entry.ok:
            raise CompileError(job.name, self.arch.arch, entry.meta.get("error", "compile failed"))
        return get_compiler(self.settings.compiler).load(job, entry.files, fp)

    def copy(self, dst, src, *, interpret: bool | None = None) -> None:
        """``dst.copy_(src)`` for staging (torch tensors of one shape and dtype): through
        ckcore's copy kernels (:mod:`ckcore.copying`) where they take the layouts, else torch."""
        from . import copying

        interpret = self.interpret if interpret is None else interpret
        p = copying.plan(tuple(src.shape), src.stride(), dst.stride()) if src.dtype == dst.dtype else None
        if p is None or src.element_size() not in (1, 2, 4, 8) or src.device != dst.device \
                or (src.device.type == "cpu") != interpret \
                or src.untyped_storage().data_ptr() == dst.untyped_storage().data_ptr():  # overlap: torch's rules
            dst.copy_(src)
            return
        is_aligned = copying.aligned(p, dst, src)
        key = ("copy", p.variant, src.element_size(), is_aligned, interpret)
        kernel = self._loaded.get(key)
        if kernel is None:
            job = copying.copy_job(p.variant, src.element_size(), self.arch.arch, self.arch.cc, is_aligned=is_aligned)
            driver = get_compiler(self.settings.compiler)
            fp = self._job_fingerprint(job)
            meta = {"name": job.name, "op": "(staging)", "family": "ckcore_copy", "arch": self.arch.arch,
                    "compiler": driver.name, "compiler_version": driver.version()}
            kernel = self._loaded[key] = self._load_job(job, fp, lambda: meta, interpret)
        kernel[p.grid](*copying.launch_args(p, dst, src))

    def problem(self, op: str, /, **fields) -> ProblemBase:
        """Build and validate a problem of ``op``. :raises UnsupportedProblem, UnknownOperatorError:"""
        spec = self.catalog.op(op)
        return spec.problem(**fields)

    def coerce_problem(self, op: str, problem) -> ProblemBase:
        """``problem`` as the op's problem object (a dict is converted and validated)."""
        spec = self.catalog.op(op)
        if isinstance(problem, dict):
            return spec.problem(**problem)
        if not isinstance(problem, spec.problem_cls):
            raise UnsupportedProblem("problem", type(problem).__name__, f"a {spec.problem_cls.__name__} or a dict", op=op)
        return problem
