"""Staging: running a problem as a twin whose tensors ckcore copies into buffers laid out for
faster kernels.

A problem whose strides rule out the fast kernel families (a GEMM with a leading dimension of
4095 bf16 elements: 8190-byte rows, which TMA cannot address) can still run at their speed on
copies: the inputs are copied into ckcore buffers with padded strides, the kernel runs on the
twin problem those strides describe, and the output is copied back. The copies move bytes at
memory bandwidth; selection weighs them (:meth:`Staging.cost_ms`) against the best kernel that
runs the problem as it is, and stages only where the sum is predicted faster.

An op offers a twin through :meth:`ckcore.spec.Operator.staging`; the copies, the buffers and
the decision are ckcore's. Buffers come from the registry's :class:`~ckcore.workspace.Workspaces`
(one per device, stream and tensor name; reused in stream order, never shared between streams).
Padding elements of the buffers are never read: the twin problem's sizes are the original
ones, and the kernels mask or zero-fill (TMA) everything past them.
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

__all__ = ["StagedTensor", "Staging", "COPY_EFFICIENCY", "PERMUTED_COPY_EFFICIENCY_PER_BYTE", "COPY_LAUNCH_MS"]

#: Fraction of the device's memory bandwidth a staging copy reaches (ckcore's copy kernels,
#: :mod:`ckcore.copying`), and the fixed cost of launching one copy (ms). Measured on an H100
#: 80GB HBM3 (3350 GB/s in the arch specs; ``python benchmarks/copy_bench.py``,
#: ``benchmarks/results/copy_bench_h100.jsonl``): copies that keep the order of the strides
#: (padding rows) 2.0-2.15 TB/s = 0.62; copies that permute them (channels-first to
#: channels-last, a transposed B) 0.47-1.45 TB/s with 2-byte elements, mean 0.25, and 0.36 TB/s
#: with 1-byte ones = 0.11: scaled by the element size (4-byte elements assumed twice the
#: 2-byte rate).
COPY_EFFICIENCY = 0.62
PERMUTED_COPY_EFFICIENCY_PER_BYTE = 0.125
COPY_LAUNCH_MS = 0.006


@attrs.frozen
class StagedTensor:
    """One tensor of the twin problem.

    :ivar name: the op's tensor name (``a``, ``b``, ``c``...).
    :ivar shape, strides: the twin's logical shape and strides, in elements.
    :ivar dtype: element type (an object with ``torch`` and ``itemsize``, as :class:`ckcore.DType`).
    :ivar output: copied back to the caller's tensor after the launch (else copied in before it).
    :ivar permuted: the copy changes the order of the strides (a transposition; slower than a
        copy that only pads rows, see :data:`COPY_EFFICIENCY`).
    """

    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: Any
    output: bool = False
    permuted: bool = False

    def efficiency(self) -> float:
        """Fraction of the device's bandwidth its copy is assumed to reach."""
        if not self.permuted:
            return COPY_EFFICIENCY
        return PERMUTED_COPY_EFFICIENCY_PER_BYTE * min(self.dtype.itemsize, 4)

    @property
    def span(self) -> int:
        """Elements from the first to one past the last addressed element."""
        if any(s == 0 for s in self.shape):
            return 0
        return 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))

    @property
    def logical_bytes(self) -> int:
        """Bytes of the tensor's elements (what one copy reads, and writes)."""
        count = 1
        for n in self.shape:
            count *= n
        return count * self.dtype.itemsize


@attrs.frozen
class Staging:
    """A twin of a problem that runs on copies of some of its tensors.

    :ivar problem: the twin problem the kernel runs (same sizes and semantics, other strides).
    :ivar tensors: the tensors that are copied (inputs in, outputs back); the others are passed
        through unchanged.
    :ivar reason: what the twin changes, for ``ckcore select --explain`` (e.g. ``lda 4095 -> 4096``).
    """

    problem: Any
    tensors: tuple[StagedTensor, ...]
    reason: str

    def copies(self, name: str) -> bool:
        """Whether input ``name`` is copied into a staged buffer."""
        return any(t.name == name and not t.output for t in self.tensors)

    @property
    def copy_bytes(self) -> int:
        """Bytes the copies move: each staged tensor read once and written once."""
        return sum(2 * t.logical_bytes for t in self.tensors)

    def cost_ms(self, device) -> float:
        """Estimated time of the copies (ms) on ``device`` (a :class:`ckcore.arch.DeviceSpec`):
        each tensor's bytes read and written at its copy's fraction of the memory bandwidth
        (:meth:`StagedTensor.efficiency`), plus ``COPY_LAUNCH_MS`` per copy."""
        per_ms = device.mem_bandwidth_gbps * 1e6  # bytes per ms
        return sum(2 * t.logical_bytes / (per_ms * t.efficiency()) + COPY_LAUNCH_MS for t in self.tensors)

    def stage(self, workspaces, device, tensors: Mapping[str, Any], op: str,
              prepacked: Mapping[str, Any] | None = None, copy=None) -> dict[str, Any]:
        """The tensors the kernel runs on: ``tensors`` with each staged one replaced by a view of
        a ckcore buffer (inputs copied into it with ``copy(dst, src)``, default torch's
        ``copy_``; outputs left for the kernel to write), or by its ``prepacked`` tensor
        (already in the twin's layout: :mod:`ckcore.packing`)."""
        import torch

        copy = copy or _torch_copy
        out = dict(tensors)
        for t in self.tensors:
            if prepacked and t.name in prepacked:
                out[t.name] = prepacked[t.name]
                continue
            nbytes = max(t.span, 1) * t.dtype.itemsize
            buf = workspaces.get(device, nbytes, f"staging/{op}/{t.name}")
            view = buf[:nbytes].view(t.dtype.torch).as_strided(t.shape, t.strides)
            if not t.output:
                with torch.no_grad():
                    copy(view, tensors[t.name])
            out[t.name] = view
        return out

    def finish(self, staged: Mapping[str, Any], tensors: Mapping[str, Any], copy=None) -> None:
        """Copy the staged outputs back into the caller's tensors (``copy(dst, src)``)."""
        import torch

        copy = copy or _torch_copy
        with torch.no_grad():
            for t in self.tensors:
                if t.output:
                    copy(tensors[t.name], staged[t.name])


def _torch_copy(dst, src) -> None:
    dst.copy_(src)
