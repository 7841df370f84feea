"""Pointwise convolutions as GEMMs: kernel families that run the gemm op's kernels on them.

A channels-last convolution with a 1×1(×1) filter, unit stride, no padding and one group is a
GEMM over the ``M = N · pixels`` rows of its tensors, with no data movement (the tensors are the
GEMM's row-major matrices):

============================  ==============================================  ======
direction                     GEMM                                            layout
============================  ==============================================  ======
``grouped_conv_fwd``          y[M, K] = x[M, C] · w[K, C]^T                   ``rcr``
``grouped_conv_bwd_data``     dx[M, C] = dy[M, K] · w[K, C]                   ``rrr``
``grouped_conv_bwd_weight``   dw[K, C] = dy[M, K]^T · x[M, C]                 ``crr``
============================  ==============================================  ======

ResNet's bottleneck 1×1 layers are such problems. The implicit-GEMM families serve them as well,
but the gemm plugin's tiled, TMA and persistent kernels (and, for backward-weight's long
reduction over M, the stream-K plugin's split-K kernels) are tuned for exactly these matrices:
on an H200, the best default-set gemm instance ran resnet50.l3.1x1 forward in 15.0 µs against
the conv pick's 22.2 µs, and backward-weight in 20.2 against 41.9
(``benchmarks/conv1x1_gemm_probe.py``, ``docs/performance.md``).

Each family here wraps one gemm family (the plugins that define it must be installed; without
them no pointwise family is registered): it renders the same template from a key with the same
fields, whose name is prefixed ``pw_<direction>_`` (instances of the two ops never share a
name), and answers every question (validity, support, grid, workspaces, features, cost) with the
wrapped family's answer for the GEMM of the problem.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Mapping

import attrs

from ckcore import DType, KernelFamily
from ckcore.arch import ArchSpec, DeviceSpec

from .family import MAX_UNSPLIT_REDUCTION, accumulator_reason
from .problem import ConvProblem

__all__ = ["DIRECTIONS", "LAYOUT", "PointwiseGemm", "pointwise_reason", "gemm_fields", "gemm_views", "gemm_tensors", "pointwise_families"]

#: The GEMM layout of each direction (A, B, C: ``r`` row-major, ``c`` column-major).
LAYOUT = {"fwd": "rcr", "bwd_data": "rrr", "bwd_weight": "crr"}
CONV_DTYPES = frozenset(DType)

#: Directions served (each op's shipped selection model has measurements of its families).
DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")

#: (module, class, directions) of the wrapped gemm families. Split-K only for backward-weight,
#: whose reduction runs over M = N · pixels (forward and backward-data reduce over C or K).
WRAPPED = (
    ("ck_plugin_gemm.family", "TiledGemm", DIRECTIONS),
    ("ck_plugin_gemm.tma", "TmaGemm", DIRECTIONS),
    ("ck_plugin_gemm.persistent", "PersistentGemm", DIRECTIONS),
    ("ck_plugin_stream_k.splitk", "SplitKGemm", ("bwd_weight",)),
)


def pointwise_reason(p: ConvProblem) -> str | None:
    """Why ``p`` is not a GEMM of its tensors as they lie (None if it is)."""
    if p.G != 1:
        return f"G={p.G}: the GEMM path takes one group"
    if any(f != 1 for f in p.filter):
        return f"filter={list(p.filter)}: the GEMM path takes 1x1 filters"
    if any(s != 1 for s in p.stride):
        return f"stride={list(p.stride)}: the GEMM path takes unit stride"
    if any(p.pad):
        return f"pad={list(p.pad)}: the GEMM path takes no padding"
    if not p.layout.channels_last:
        return f"layout={p.layout.value}: the GEMM path takes channels-last tensors"
    return None


def gemm_fields(direction: str, p: ConvProblem) -> dict[str, Any]:
    """The fields of the GEMM that computes pointwise problem ``p`` in ``direction``. For any
    other problem, the fields of its per-group implicit GEMM (so that features and estimates
    stay defined; :meth:`PointwiseGemm.supports` refuses such problems)."""
    m, red = p.N * p.out_pixels, p.taps
    dims = {"fwd": (m, p.Kg, p.Cg * red), "bwd_data": (m, p.Cg, p.Kg * red),
            "bwd_weight": (p.Kg, p.Cg * red, m)}[direction]
    return {"M": dims[0], "N": dims[1], "K": dims[2], "dtype": p.dtype.value, "layout": LAYOUT[direction],
            "ptr_align": p.ptr_align}


@functools.lru_cache(maxsize=4096)
def gemm_problem(direction: str, p: ConvProblem):
    """The gemm op's problem object for ``p`` (memoised)."""
    from ck_plugin_gemm.problem import GemmProblem

    return GemmProblem(**gemm_fields(direction, p))


def _rows(t, channels: int):
    """A channels-last (N, channels, *spatial) tensor as the row-major [N·pixels, channels]
    matrix it is. ``view`` raises rather than copy."""
    return t.movedim(1, -1).view(-1, channels)


def gemm_views(direction: str, p: ConvProblem, tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The GEMM's ``a``, ``b``, ``c`` as torch views of the conv tensors (packed channels-last):
    what :func:`gemm_tensors` hands the kernels, spelled out (for tests and benchmarks)."""
    if direction == "fwd":
        return {"a": _rows(tensors["x"], p.C), "b": tensors["w"].view(p.K, p.C).t(), "c": _rows(tensors["y"], p.K)}
    if direction == "bwd_data":
        return {"a": _rows(tensors["dy"], p.K), "b": tensors["w"].view(p.K, p.C), "c": _rows(tensors["dx"], p.C)}
    return {"a": _rows(tensors["dy"], p.K).t(), "b": _rows(tensors["x"], p.C), "c": tensors["dw"].view(p.K, p.C)}


#: Which conv tensor is each GEMM operand, per direction.
OPERANDS = {"fwd": ("x", "w", "y"), "bwd_data": ("dy", "w", "dx"), "bwd_weight": ("dy", "x", "dw")}


def gemm_tensors(direction: str, p: ConvProblem, tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The gemm kernels' ``a``, ``b``, ``c`` (plus any workspaces): the conv tensors themselves.
    The kernels read their operands through base pointers (or TMA descriptors made on the host
    from them: each tensor's data pointer must be its matrix's first element) and the problem's
    leading dimensions only, and the conv op's ``check_tensors`` (run on every launch) has verified the packed
    channels-last strides under which each tensor's storage is the matrix of
    :func:`gemm_views`, which starts at the same address. Building the views on every launch
    cost 8 µs of host time (development CPU), more than some of these kernels run."""
    a, b, c = OPERANDS[direction]
    mats = {"a": tensors[a], "b": tensors[b], "c": tensors[c]}
    mats.update({k: v for k, v in tensors.items() if k.startswith("workspace_")})
    return mats


@functools.cache
def _key_cls(inner_cls: type, direction: str) -> type:
    """``inner_cls`` with the same fields, named ``pw_<direction>_<gemm name>``."""
    prefix = f"pw_{direction}_"

    def name(self) -> str:
        return prefix + inner_cls.name.fget(self)

    body = {"name": property(name), "__doc__": f"A {inner_cls.__name__} serving pointwise {direction} convolutions "
                                                f"(instance names ``{prefix}<gemm name>``)."}
    cls = type(f"Pointwise{''.join(w.title() for w in direction.split('_'))}{inner_cls.__name__}", (inner_cls,), body)
    return attrs.frozen(kw_only=True)(cls)


class PointwiseGemm(KernelFamily):
    """A gemm family's kernels serving the pointwise problems of one conv direction.

    :param direction: ``fwd``, ``bwd_data`` or ``bwd_weight``.
    :param inner: the wrapped gemm :class:`~ckcore.KernelFamily` (an instance).
    """

    def __init__(self, direction: str, inner: KernelFamily):
        self.direction, self.inner = direction, inner
        self.name = f"pw_{direction}_{inner.name.removeprefix('gemm_')}"
        self.op = f"grouped_conv_{direction}"
        self.key_cls = _key_cls(inner.key_cls, direction)
        self.template_package, self.template = inner.template_package, inner.template

    def wrap(self, key):
        """``key`` of the wrapped family as this family's key."""
        return self.key_cls(**{f.name: getattr(key, f.name) for f in attrs.fields(type(key))})

    def _gemm(self, p: ConvProblem):
        return gemm_problem(self.direction, p)

    # static ----------------------------------------------------------------------------------
    def check(self, key, arch: ArchSpec) -> list[str]:
        reasons = list(self.inner.check(key, arch))
        if key.dtype not in CONV_DTYPES:
            reasons.append(f"dtype {key.dtype.value}: convolutions take {', '.join(d.value for d in DType)}")
        if key.layout.value != LAYOUT[self.direction]:
            reasons.append(f"layout {key.layout.value}: {self.direction} is a {LAYOUT[self.direction]} GEMM")
        if getattr(key, "epilogue", "none") != "none" or getattr(key, "batched", False):
            reasons.append("fused epilogues and batches are not part of a convolution")
        return reasons

    def bucket(self, key):
        """(dtype, channels-last, one group) of the conv op's ``bucket``: every instance is
        channels-last and takes one group."""
        return key.dtype, True, True

    def supports(self, key, p: ConvProblem) -> str | None:
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        reason = pointwise_reason(p)
        if reason:
            return reason
        if self.direction == "bwd_weight":
            # The reduction runs over N·output pixels, as in the conv families' backward-weight
            # kernels, in one fp32 accumulator per split: every unsplit pointwise kernel failed
            # the fp16 check at 778688 pixels (max abs error 4.38, the split conv kernels
            # 1.04-2.55; one H100, twenty-fourth session); 401408 passed in bf16. A split-K GEMM's
            # share is held to the same limit (not measured past it; the TMA family checks its
            # splits the same way, with its own limit).
            reason = accumulator_reason(p.N * p.out_pixels, getattr(key, "split_k", 1), MAX_UNSPLIT_REDUCTION)
            if reason:
                return reason
        reason = self.inner.supports(key, self._gemm(p))
        return f"as a {LAYOUT[self.direction]} GEMM: {reason}" if reason else None

    def signature(self, key) -> dict[str, str]:
        return self.inner.signature(key)

    def constexprs(self, key) -> dict[str, Any]:
        return self.inner.constexprs(key)

    def divisible_by_16(self, key) -> tuple[str, ...]:
        return self.inner.divisible_by_16(key)

    def compile_options(self, key) -> dict[str, Any]:
        return self.inner.compile_options(key)

    def deterministic(self, key) -> bool:
        return self.inner.deterministic(key)

    # per problem -----------------------------------------------------------------------------
    def workspaces(self, key, p: ConvProblem) -> dict[str, int]:
        return self.inner.workspaces(key, self._gemm(p))

    def grid(self, key, p: ConvProblem) -> tuple[int, int, int]:
        return self.inner.grid(key, self._gemm(p))

    def launch_args(self, key, p: ConvProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        return self.inner.launch_args(key, self._gemm(p), gemm_tensors(self.direction, p, tensors), interpret=interpret)

    def estimate_ms(self, key, p: ConvProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        return self.inner.estimate_ms(key, self._gemm(p), arch, device)

    def pair_features(self, key, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        return self.inner.pair_features(key, self._gemm(p), arch)

    def features(self, key) -> dict[str, float]:
        return self.inner.features(key)

    def kernel_sets(self):
        """The wrapped family's sets, restricted to this direction's layout, the conv dtypes,
        deterministic kernels and plain (no epilogue, no batch) keys with one program per SM (the
        two-program persistent tiles, added for gemm's fused epilogues, were never measured on
        conv problems)."""
        def restrict(make):
            def keys(arch: ArchSpec):
                return [self.wrap(k) for k in make(arch) if k.dtype in CONV_DTYPES
                        and k.layout.value == LAYOUT[self.direction] and self.inner.deterministic(k)
                        and getattr(k, "programs_per_sm", 1) == 1 and not self.check(k, arch)]
            return keys

        return {name: restrict(make) for name, make in self.inner.kernel_sets().items()}


def _wrapped(module: str, cls: str) -> KernelFamily | None:
    try:
        return getattr(importlib.import_module(module), cls)()
    except ImportError:  # the plugin that defines it is not installed
        return None


def pointwise_families() -> list[PointwiseGemm]:
    """One family per (direction, wrapped gemm family) whose plugin is installed."""
    out = []
    for module, cls, directions in WRAPPED:
        inner = _wrapped(module, cls)
        if inner is not None:
            out += [PointwiseGemm(d, inner) for d in directions]
    return out

