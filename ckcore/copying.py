"""Strided copies for staging (:mod:`ckcore.staging`): a Triton kernel that moves tiles of a
tensor between two layouts at memory speed, where torch's ``copy_`` is slow.

torch's ``copy_`` into a tensor whose strides permute the source's (channels-first to
channels-last, a transposed B) walks the destination in order and reads the source with a
stride: measured on an H100, 0.55-0.61 TB/s for 2-byte elements and 0.29 TB/s for 1-byte ones,
against 3.35 TB/s (``docs/performance.md``, ninth session). This kernel reads a tile along the
source's contiguous dimension and writes it along the destination's (Triton moves the tile
through shared memory in between).

Every copy is first reduced to a batch of 2-D tiles (:func:`plan`): adjacent dimensions that
are contiguous in both layouts merge, and what remains must be at most three dimensions, ``B``
(batch), ``R`` and ``C``, with the source contiguous along ``C`` and the destination along
``C`` (variant ``rows``: padded rows) or ``R`` (variant ``transpose``). Anything else, and every
CPU tensor (the interpreter), falls back to torch's ``copy_``. The kernels are compiled through
ckcore's compiler driver into its content-addressed cache, like the kernel instances.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from .compiler import CompileJob

__all__ = ["CopyPlan", "plan", "aligned", "copy_job", "launch_args", "BLOCK"]

#: Tile edge (elements) and warps of the copy kernels.
BLOCK = 64
WARPS = 4
#: Transposes with fewer rows or columns than this are left to torch (H100: a 3-channel image,
#: 32x3x224x224 bf16, moved at 0.12 TB/s in 64x64 tiles, at 1.09 TB/s by torch's copy_).
MIN_TRANSPOSE = 16

_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def {name}(src_ptr, dst_ptr, R, C, s_b, s_r, d_b, d_o):
    # One BLOCK x BLOCK tile of matrix b of R x C elements. The source is contiguous along C
    # (element (b, r, c) at b*s_b + r*s_r + c); the destination along {dst_axis}
    # ({dst_expr}).
    pid_c = tl.program_id(0)
    pid_r = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    rows = (pid_r * {block} + tl.arange(0, {block})).to(tl.int64)
    cols = (pid_c * {block} + tl.arange(0, {block})).to(tl.int64)
    mask = (rows[:, None] < R) & (cols[None, :] < C)
    tile = tl.load(src_ptr + b * s_b + rows[:, None] * s_r + cols[None, :], mask=mask)
    tl.store(dst_ptr + b * d_b + {dst_offsets}, tile, mask=mask)
'''

_VARIANTS = {
    "rows": ("C", "element (b, r, c) at b*d_b + r*d_o + c", "rows[:, None] * d_o + cols[None, :]"),
    "transpose": ("R", "element (b, r, c) at b*d_b + r + c*d_o", "rows[:, None] + cols[None, :] * d_o"),
}

_INT = {1: "i8", 2: "i16", 4: "i32", 8: "i64"}


@attrs.frozen
class CopyPlan:
    """A copy as ``B`` matrices of ``R`` x ``C`` elements: source element (b, r, c) at
    ``b*src[0] + r*src[1] + c``; destination at ``b*dst[0] + r*dst[1] + c`` (``rows``) or
    ``b*dst[0] + r + c*dst[1]`` (``transpose``)."""

    variant: str
    B: int
    R: int
    C: int
    src: tuple[int, int]
    dst: tuple[int, int]

    @property
    def grid(self) -> tuple[int, int, int]:
        return (math.ceil(self.C / BLOCK), math.ceil(self.R / BLOCK), self.B)


def _merge(shape, src, dst):
    """Drop size-1 dimensions and merge adjacent ones contiguous in both layouts."""
    dims = [(n, s, d) for n, s, d in zip(shape, src, dst) if n != 1]
    out: list[tuple[int, int, int]] = []
    for n, s, d in dims:
        if out:
            pn, ps, pd = out[-1]
            if ps == s * n and pd == d * n:
                out[-1] = (pn * n, s, d)
                continue
        out.append((n, s, d))
    return out


def plan(shape, src_strides, dst_strides) -> CopyPlan | None:
    """How the copy kernels move a tensor of ``shape`` from ``src_strides`` to ``dst_strides``
    (elements), or None where they cannot (see the module)."""
    dims = _merge(shape, src_strides, dst_strides)
    if not dims or any(n >= 2**31 for n, _, _ in dims):
        return None
    js = [i for i, (_, s, _) in enumerate(dims) if s == 1]
    jd = [i for i, (_, _, d) in enumerate(dims) if d == 1]
    if len(js) != 1 or len(jd) != 1:
        return None
    js, jd = js[0], jd[0]
    rest = [i for i in range(len(dims)) if i not in (js, jd)]
    if js == jd:
        if len(rest) > 2:
            return None
        r = rest[-1] if rest else None
        b = rest[0] if len(rest) == 2 else None
        variant, other = "rows", r
    else:
        if len(rest) > 1:
            return None
        b = rest[0] if rest else None
        variant, other = "transpose", jd
    n_b, sb, db = dims[b] if b is not None else (1, 0, 0)
    n_r, sr, dr = dims[other] if other is not None else (1, 0, 0)
    n_c, _, dc = dims[js]
    if n_b > 65535 or math.ceil(n_r / BLOCK) > 65535:
        return None
    if variant == "transpose" and min(n_r, n_c) < MIN_TRANSPOSE:
        return None  # mostly masked tiles: 3-channel images ran at 0.12 TB/s, torch's copy_ at 1.1
    return CopyPlan(variant, n_b, n_r, n_c, (sb, sr), (db, dr if variant == "rows" else dc))


def aligned(p: CopyPlan, dst, src) -> bool:
    """Whether both base pointers are 16-byte aligned and every stride a multiple of 16
    elements (the kernel variant that may load and store 16-byte vectors)."""
    return src.data_ptr() % 16 == 0 and dst.data_ptr() % 16 == 0 and all(x % 16 == 0 for x in p.src + p.dst)


def copy_job(variant: str, itemsize: int, arch: str, cc: int, *, is_aligned: bool) -> CompileJob:
    """The compile job of the copy kernel for ``variant`` and elements of ``itemsize`` bytes
    (moved as integers of that size); ``is_aligned``: compiled for :func:`aligned` copies."""
    name = f"ckcore_copy_{variant}_b{itemsize}{'_a16' if is_aligned else ''}"
    axis, expr, offsets = _VARIANTS[variant]
    ptr = "*" + _INT[itemsize]
    sig = {"src_ptr": ptr, "dst_ptr": ptr, "R": "i64", "C": "i64", "s_b": "i64", "s_r": "i64", "d_b": "i64",
           "d_o": "i64"}
    return CompileJob(name=name, source=_SOURCE.format(name=name, block=BLOCK, dst_axis=axis, dst_expr=expr,
                                                       dst_offsets=offsets),
                      signature=sig, constexprs={},
                      divisible_by_16=("src_ptr", "dst_ptr", "s_b", "s_r", "d_b", "d_o") if is_aligned else (),
                      options={"num_warps": WARPS, "num_stages": 1}, arch=arch, cc=cc)


def launch_args(p: CopyPlan, dst, src) -> tuple[Any, ...]:
    """The kernel's arguments: both tensors viewed as integers of their element size."""
    import torch

    as_int = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[src.element_size()]
    return (src.view(as_int), dst.view(as_int), p.R, p.C, p.src[0], p.src[1], p.dst[0], p.dst[1])
