"""What plugins contribute: :class:`Operator` (an op and its problem schema) and
:class:`KernelFamily` (kernels serving an op), plus :class:`Instance` (one declared kernel).

Plugins subclass these and pass instances to the ``register`` callbacks of the
``ck_register_*`` hooks. The same contract holds for in-tree and third-party plugins.
"""

from __future__ import annotations

import abc
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Callable, Mapping

import attrs
import numpy as np

from .arch import ArchSpec, DeviceSpec
from .keys import KeyBase, ProblemBase

if TYPE_CHECKING:
    from .staging import Staging

__all__ = ["Tolerance", "Operator", "KernelFamily", "Instance"]


@attrs.frozen
class Tolerance:
    """Allowed error against the float64 reference: ``|out - ref| <= atol + rtol * |ref| +
    magnitude_rtol * mag``, where ``mag`` is the square root of the reference computed on the
    inputs squared (only where ``magnitude_rtol`` > 0). For an op whose output is a sum of
    products of two inputs (a convolution, a plain GEMM) that is sqrt(Σ(a·b)²) per output: the
    scale of the summed rounding errors of the products when the inputs are rounded (tf32 rounds
    each to 10 mantissa bits), which after cancellation can far exceed |ref|. Ops with an
    epilogue or other nonlinear parts must leave it at 0."""

    atol: float
    rtol: float
    magnitude_rtol: float = 0.0


class Operator(abc.ABC):
    """An operation (``gemm``...) and everything the core needs to know about it.

    Class attributes: ``name`` (the op name), ``problem_cls`` (a :class:`ProblemBase` subclass),
    ``inputs`` (names of input tensors), ``output`` (name of the output tensor).
    """

    name: str
    problem_cls: type
    inputs: tuple[str, ...]
    output: str
    #: Input tensors some problems read and others do not (e.g. a GEMM's bias); which ones a
    #: problem reads is :meth:`required_inputs`.
    optional_inputs: tuple[str, ...] = ()
    #: Other ``op`` values of suite lines this op accepts (the conv suite says ``grouped_conv``
    #: for all three directions).
    suite_ops: tuple[str, ...] = ()
    #: The package whose ``models/`` folder holds trained selection models ``<op>_<arch>.txt``
    #: (LightGBM text format) with ``<op>_<arch>.json`` metadata; None: no models.
    models_package: str | None = None

    def problem(self, **fields) -> ProblemBase:
        """Build and validate a problem. :raises UnsupportedProblem: a bad field."""
        return self.problem_cls(**fields)

    def required_inputs(self, problem: ProblemBase) -> tuple[str, ...]:
        """The input tensors ``problem`` reads: :attr:`inputs` plus those of
        :attr:`optional_inputs` it names (default: :attr:`inputs`)."""
        return self.inputs

    def bucket(self, problem: ProblemBase) -> Hashable | None:
        """The bucket of ``problem`` (e.g. its dtype and layout, as a tuple): only instances
        whose family's :meth:`KernelFamily.bucket` matches it (:func:`ckcore.registry.bucket_matches`)
        are checked for it; None (the default): every instance is checked."""
        return None

    def staging(self, problem: ProblemBase) -> Staging | None:
        """A twin of ``problem`` that runs on copies of some of its tensors laid out for faster
        kernels (:mod:`ckcore.staging`), or None (the default: the op offers none). Selection
        takes it where the twin's best kernel plus the copies is predicted faster than the
        best kernel for ``problem`` itself."""
        return None

    @abc.abstractmethod
    def problem_from_tensors(self, **tensors) -> ProblemBase:
        """The problem that torch ``tensors`` describe. :raises UnsupportedProblem:"""

    @abc.abstractmethod
    def check_tensors(self, problem: ProblemBase, tensors: Mapping[str, Any]) -> None:
        """Check shapes, strides, dtypes and devices of ``tensors`` against ``problem``
        (the output may be absent). :raises UnsupportedProblem: naming the tensor field."""

    @abc.abstractmethod
    def empty_output(self, problem: ProblemBase, like) -> Any:
        """A new torch output tensor for ``problem`` on ``like``'s device."""

    @abc.abstractmethod
    def random_inputs(self, problem: ProblemBase, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Random float64 NumPy inputs (already representable in the problem's dtype),
        shaped and laid out (as logical arrays) for :meth:`reference` and :meth:`to_torch`."""

    @abc.abstractmethod
    def to_torch(self, problem: ProblemBase, arrays: Mapping[str, np.ndarray], device) -> dict[str, Any]:
        """Torch tensors with the problem's dtype and memory layout holding ``arrays``."""

    def random_tensors(self, problem: ProblemBase, seed: int, device) -> dict[str, Any]:
        """Random input tensors on ``device`` (for benchmarks; no reference needed).
        Default: :meth:`to_torch` of :meth:`random_inputs`; ops may generate on the device."""
        return self.to_torch(problem, self.random_inputs(problem, np.random.default_rng(seed)), device)

    @abc.abstractmethod
    def reference(self, problem: ProblemBase, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
        """The exact result in float64 on the CPU (NumPy)."""

    @abc.abstractmethod
    def flops(self, problem: ProblemBase) -> float:
        """Floating-point operations of the problem (a multiply-add counts 2)."""

    @abc.abstractmethod
    def min_bytes(self, problem: ProblemBase) -> float:
        """Fewest bytes moved: each input read once, each output written once."""

    @abc.abstractmethod
    def tolerance(self, problem: ProblemBase) -> Tolerance:
        """Allowed error of a correct kernel against :meth:`reference`."""

    @abc.abstractmethod
    def torch_baseline(self, problem: ProblemBase, tensors: Mapping[str, Any]) -> Callable[[], Any]:
        """A zero-argument callable computing the op through PyTorch (cuBLAS / cuDNN) and
        returning the output tensor (it may write into ``tensors[output]``; benchmarks compare
        ckcore's output with what it returns)."""

    def float64_problem(self, problem: ProblemBase) -> ProblemBase:
        """The problem that the float64 recomputation of benchmarks (:meth:`torch_baseline` on
        float64 copies of the tensors) describes: by default ``problem`` with ``dtype="fp32"``."""
        if attrs.has(type(problem)) and hasattr(problem, "dtype"):
            return attrs.evolve(problem, dtype="fp32")
        return problem

    def generate(self, rng: np.random.Generator) -> dict:
        """One random problem's fields for tune datasets, drawn from the sizes this op meets in
        practice (the caller retries invalid ones and drops duplicates).

        :raises NotImplementedError: the op has no generator.
        """
        raise NotImplementedError(f"op {self.name!r} has no problem generator")

    def bench_groups(self) -> dict[str, Callable[[dict], bool]]:
        """Named subsets of a suite that ``ckcore bench`` summarises separately (each a
        predicate on the problem's dict), e.g. ``{"m_le_128": lambda p: p["M"] <= 128}``."""
        return {}

    def features(self, problem: ProblemBase) -> dict[str, float]:
        """Numeric problem features for learned heuristics."""
        return {k: float(v) for k, v in problem.to_dict().items() if isinstance(v, (int, float))}


class KernelFamily(abc.ABC):
    """A family of kernels rendered from one template, serving one op.

    Class attributes: ``name`` (family name), ``op``, ``key_cls`` (a :class:`KeyBase` subclass),
    ``template_package`` (the Python package whose ``templates/`` folder holds the template) and
    ``template`` (file name inside it).
    """

    name: str
    op: str
    key_cls: type
    template_package: str
    template: str

    @abc.abstractmethod
    def check(self, key: KeyBase, arch: ArchSpec) -> list[str]:
        """Every reason ``key`` cannot be built or run on ``arch`` (empty when valid)."""

    @abc.abstractmethod
    def supports(self, key: KeyBase, problem: ProblemBase) -> str | None:
        """Why ``key`` cannot run ``problem``, or None if it can."""

    @abc.abstractmethod
    def signature(self, key: KeyBase) -> dict[str, str]:
        """Kernel arguments in order, mapped to Triton types (``*bf16``, ``i32``, ``constexpr``)."""

    def constexprs(self, key: KeyBase) -> dict[str, Any]:
        """Values of the ``constexpr`` arguments when compiling for a GPU."""
        return {}

    def divisible_by_16(self, key: KeyBase) -> tuple[str, ...]:
        """Arguments the compiled kernel may assume divisible by 16 (pointers: 16-byte aligned)."""
        return ()

    def workspaces(self, key: KeyBase, problem: ProblemBase) -> dict[str, int]:
        """Scratch buffers the kernel needs, ``{name: bytes}``; each reaches :meth:`launch_args`
        as a uint8 tensor ``workspace_<name>``, zeroed when ckcore first allocates it and kept
        per (device, stream, instance, name). The kernel must leave every byte it relies on
        being zero (counters, atomic accumulators) at zero when it finishes."""
        return {}

    def bucket(self, key: KeyBase) -> Hashable | None:
        """A value that a problem's :meth:`Operator.bucket` must match for ``key`` to support
        it (e.g. ``(dtype, layout)``), so that selection skips ``supports`` for instances of
        other buckets; ``supports`` must reject every problem of another bucket. A tuple
        matches a problem bucket tuple whose leading components it equals, where a None
        component matches any value (a shorter tuple leaves the op's later components open:
        :func:`ckcore.registry.bucket_matches`); another value must equal it. None (the
        default): checked for every problem."""
        return None

    def specialize(self, key: KeyBase, problem: ProblemBase) -> KeyBase:
        """The key that runs ``problem`` in place of the declared ``key``: a variant compiled
        for what the problem adds to the kernel's body (a GEMM's fused epilogue, batching),
        while the declared key stands for its tile. The registry ranks and runs the returned
        key, compiling it into the cache on first use. Default: ``key`` itself."""
        return key

    def deterministic(self, key: KeyBase) -> bool:
        """Whether the kernel gives bitwise-identical results run to run (atomics in floating
        point do not). Non-deterministic instances are selected only when allowed."""
        return True

    #: Whether the family's kernels run in Triton's interpreter (CPU). Gluon kernels
    #: (``triton.experimental.gluon``) do not: where kernels are interpreted, the registry rejects
    #: such a family's instances (and they are tested compiled for the target and on the GPU).
    interpretable: bool = True

    @abc.abstractmethod
    def compile_options(self, key: KeyBase) -> dict[str, Any]:
        """Compiler options (``num_warps``, ``num_stages``...)."""

    @abc.abstractmethod
    def grid(self, key: KeyBase, problem: ProblemBase) -> tuple[int, int, int]:
        """Launch grid for ``problem``."""

    @abc.abstractmethod
    def launch_args(self, key: KeyBase, problem: ProblemBase, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        """Positional kernel arguments (constexprs included, in signature order)."""

    @abc.abstractmethod
    def kernel_sets(self) -> dict[str, Callable[[ArchSpec], list[KeyBase]]]:
        """Named sets of preselected keys: ``{"default": fn(arch) -> [keys], ...}``."""

    @abc.abstractmethod
    def estimate_ms(self, key: KeyBase, problem: ProblemBase, arch: ArchSpec, device: DeviceSpec) -> float:
        """A rough run-time estimate (ms) used by the ``rules`` heuristic to rank candidates."""

    def pair_features(self, key: KeyBase, problem: ProblemBase, arch: ArchSpec) -> dict[str, float]:
        """Numeric features of running ``key`` on ``problem`` (tile counts per SM wave, padding
        waste...) for learned heuristics; default none."""
        return {}

    def template_values(self, key: KeyBase) -> dict[str, Any]:
        """Values derived from ``key`` that the template reads as ``derived`` (numbers, bools,
        identifier-like strings, as the key's fields), so that the template restates no formula
        of the family's; default none."""
        return {}

    def features(self, key: KeyBase) -> dict[str, float]:
        """Numeric kernel features for learned heuristics."""
        return {k: float(v) for k, v in key.to_dict().items() if isinstance(v, (int, float))}


@attrs.frozen
class Instance:
    """One declared kernel: a family and a key. ``name`` is ``key.name``."""

    family: str
    op: str
    key: Any
    name: str

    @classmethod
    def of(cls, family: KernelFamily, key: KeyBase) -> "Instance":
        return cls(family=family.name, op=family.op, key=key, name=key.name)
