"""The halo families (sm_90): ``conv_halo_fwd`` and ``conv_halo_bwd_data``, stride-1 channels-last
convolutions written in Gluon (``triton.experimental.gluon``), template ``conv_halo.py.j2``; forward
also at stride 2, from the input's row phases (:attr:`ConvHaloKey.stride`).

Why: the TMA implicit GEMM (``conv_tma_*``) loads, for every filter tap, the program's pixel
patch shifted by the tap: nine loads of the same neighbourhood for a 3×3 filter, plus the tap's
filter tile. On RegNet's 40-channel groups that traffic is the bound: Nsight Compute on an H100
(twenty-seventh session, ``benchmarks/results/README.md``) read 479 MB through L2 for a layer whose
tensors hold 32 MB, with L2 at 71% of its peak and the SMs' issue slots 12% busy (117 µs, where
cuDNN's kernel takes 45 µs).

Here a program:

- loads, per (depth tap, column tap), one **halo**: the patch of ``block_h × block_w`` output
  pixels plus the ``(taps_h - 1) · dil_h`` image rows below it (two TMA boxes: the patch and a
  ``tail_h``-row tail; TMA zero-fills the padding). Each of the ``taps_h`` row taps then reads the
  halo shifted by whole image rows. With ``block_w`` a multiple of 8, a shift of one image row is
  whole 8-row swizzle atoms of shared memory, so the shifted patch is a valid warpgroup-MMA
  operand: a view at an atom offset (Gluon's ``_reinterpret`` of one atom to the full tile;
  ``slice`` accepts only offsets that are multiples of the slice);
- keeps the filter of its (group, column block), every tap, in shared memory while its tiles run;
- is **persistent**: the grid is at most one program per SM (two with ``programs_per_sm = 2``),
  each takes a contiguous run of
  tiles in (group, column block, output row, patch) order, and the halo loads of its next tile
  are in flight while it finishes and stores the current one (a ring of ``num_stages`` slots).

So a 3×3 layer loads 3 halos of ``(block_h + 2) · block_w`` pixels per tile instead of 9 patches
of ``block_h · block_w``, and the filter once per program instead of once per tile.

Scope (:meth:`ConvHaloFamily.supports`): fp16 / bf16, channels-last, every stride 1, the reduction
channels per group (C/G forward, K/G backward-data) at most ``block_k`` (one channel block: the resident filter is
taps × ``block_n`` × ``block_k``), filter height ``taps_h`` and height dilation ``dil_h`` as the key
fixes them (the row shifts are compile-time offsets), at most ``max_taps`` taps, and the TMA rules
of the ``conv_tma`` families (16-byte aligned tensors and channel strides, 32-bit coordinates).
With ``groups_per_block`` > 1 a tile serves that many consecutive groups with block-diagonal filter
taps (ResNeXt's 4-16 channels per group; :class:`ConvHaloKey`). Gluon kernels do not run in Triton's interpreter: the families are ``interpretable = False``; the
CPU tests compile them for sm_90a and their results are checked on the GPU (``gpu`` tests).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import attrs

from ckcore import DType, KeyBase
from ckcore.arch import ArchSpec
from ckcore.keys import enum_converter, int_in, member_of, power_of_two_in

from .family import int32_reason, split_workspace_views, tile_features
from .problem import ConvProblem
from .tma import _ARGS, ConvTmaFamily, _int_args, _TmaTraits, geometry

__all__ = ["ConvHaloKey", "ConvHaloFwdKey", "ConvHaloBwdDataKey", "ConvHaloFwd", "ConvHaloBwdData", "HALO_FAMILIES",
           "halo_reason", "pow2_ceil"]

#: Persistent programs at most: the H100 SXM's and H200's SMs (132; as the gemm plugin's persistent
#: family, the grid does not see the device), times the key's ``programs_per_sm``: the 64-channel
#: tiles' shared memory (140-214 KB) leaves no room for a second program; the 32-channel ones
#: (54-113 KB) have room (``_o2`` keys).
SM_COUNT = 132
#: Shared memory the driver reserves per block on sm_90 (Nsight Compute's "Driver Shared Memory Per
#: Block", 1 KB), which counts against an SM's capacity once per resident program.
DRIVER_SMEM = 1024


def pow2_ceil(n: int) -> int:
    """The least power of two >= ``n`` (1 for ``n`` <= 1): Gluon's shapes and TMA boxes."""
    return 1 << max(0, (n - 1).bit_length())


def halo_reason(key, p: ConvProblem) -> str | None:
    """What every halo kernel needs of ``p``, or None: the key's dtype, channels-last, every
    stride 1, the filter height and height dilation the key is compiled for (the row shifts are
    compile-time offsets), 16-byte aligned pointers, C/G and K/G (times the key's
    ``groups_per_block``) multiples of 16 bytes (descriptor strides) and 32-bit TMA coordinates."""
    if key.dtype is not p.dtype:
        return f"dtype {key.dtype.value} != {p.dtype.value}"
    if not p.layout.channels_last:
        return f"halo kernels are channels-last, layout {p.layout.value}"
    d3 = p.as_3d()
    stride = key.stride
    if tuple(d3["stride"]) != (1, stride, stride):
        what = "stride 1" if stride == 1 else "depth stride 1, height and width stride 2"
        return f"the kernel is compiled for {what} (stride {list(p.stride)})"
    if d3["filter"][1] != key.taps_h or d3["dilation"][1] != key.dil_h:
        return (f"filter height {d3['filter'][1]}, dilation {d3['dilation'][1]}: the kernel is compiled for "
                f"{key.taps_h} rows at dilation {key.dil_h}")
    if p.ptr_align != 16:
        return f"TMA needs 16-byte aligned pointers (ptr_align={p.ptr_align})"
    gpb = key.groups_per_block
    for field in ("Cg", "Kg"):
        if gpb * getattr(p, field) * p.dtype.itemsize % 16:
            merged = f"groups_per_block {gpb} * " if gpb > 1 else ""
            return (f"TMA needs {merged}{field} * {p.dtype.itemsize} B % 16 == 0 ({field}={getattr(p, field)}: "
                    "a descriptor stride)")
    if stride > 1:
        why = _phase_reason(key, p)
        if why:
            return why
    return int32_reason(p, "32-bit TMA coordinates")


def _phase_reason(key, p: ConvProblem) -> str | None:
    """What a row-phase (stride-2) key needs beyond :func:`halo_reason`'s: the input's row phases
    (:func:`.tma.source_view`, H and W even), unit dilation, and a channel box of exactly
    ``groups_per_block`` groups' C/G (in the phase view the channels of a row phase's two column
    phases and all groups are one dimension: a wider box would read the next groups' channels)."""
    d3 = p.as_3d()
    (_, H, W), (_, dil_h, dil_w) = d3["spatial"], d3["dilation"]
    if H % 2 or W % 2:
        return f"row phases need an even input height and width (H={H}, W={W})"
    if (dil_h, dil_w) != (1, 1):
        return f"row-phase kernels take dilation 1 (dilation {list(p.dilation)})"
    field = key.source_box_field
    if key.groups_per_block * p.Cg != getattr(key, field):
        return (f"row phases need groups_per_block {key.groups_per_block} x Cg={p.Cg} == {field} {getattr(key, field)} "
                "(the channel box is one block of groups)")
    return None


@attrs.frozen(kw_only=True)
class HaloKeyBase(_TmaTraits, KeyBase):
    """What every halo key holds (4 warps, one warpgroup): ``dtype`` (fp16 / bf16), the
    output-pixel patch ``block_h × block_w`` (``block_w`` a multiple of 8: one image row is whole
    8-row swizzle atoms) and ``dil_h``, the height dilation the kernel is compiled for; subclasses
    add ``taps_h`` (the filter height) and ``num_stages``. ``stride`` (height and width) is 1
    unless a subclass makes it a field (:class:`ConvHaloKey`)."""

    num_warps: ClassVar[int] = 4
    stride: ClassVar[int] = 1
    split_k: ClassVar[int] = 1
    stream_k: ClassVar[int] = 0
    source_box_field: ClassVar[str] = "block_k"  # the key field that is a source box's channels
    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    block_h: int = attrs.field(validator=power_of_two_in(1, 128))
    block_w: int = attrs.field(validator=power_of_two_in(8, 128))
    dil_h: int = attrs.field(default=1, validator=int_in(1, 8))

    @property
    def tail_h(self) -> int:
        """Halo rows below the patch: stride 1, ``(taps_h - 1) · dil_h`` rounded up to a power of
        two (a TMA box size); stride 2 (3 rows, dilation 1), the one row the even row taps' phase
        holds beyond the patch."""
        return 1 if self.stride == 2 else pow2_ceil((self.taps_h - 1) * self.dil_h)

    @property
    def sums_partials(self) -> bool:
        """Whether the kernel sums fp32 partial tiles (a split or stream-K reduction): it takes
        the partials and counters workspaces."""
        return self.split_k > 1 or self.stream_k > 0

    @property
    def slot_atoms(self) -> int:
        """8-row shared-memory atoms of one halo: stride 1, the patch and its tail rows; stride 2,
        the even row taps' phase (the patch and one row) and then the odd row tap's (the patch)."""
        rows = 2 * self.block_h if self.stride == 2 else self.block_h
        return (rows + self.tail_h) * self.block_w // 8


@attrs.frozen(kw_only=True)
class ConvHaloKey(HaloKeyBase):
    """One halo convolution kernel (channels-last, stride 1; 4 warps, one warpgroup).

    :ivar dtype: fp16 or bf16.
    :ivar block_h, block_w: the output-pixel patch of a tile (rows of the implicit GEMM:
        ``block_h · block_w``, 64 or 128); ``block_w`` a multiple of 8 (one image row = whole
        8-row swizzle atoms).
    :ivar block_n: output channels of the group per tile (the MMA's N); ``block_k``, the reduction
        channels of one step, is the same (C/G at most that).
    :ivar num_stages: halo slots in the ring.
    :ivar taps_h, dil_h: the filter height and height dilation the kernel is compiled for.
    :ivar max_taps: filter taps (depth × height × width) the resident filter holds.
    :ivar groups_per_block: consecutive groups one tile serves (``_gpb<n>`` in the name when above
        1), for few channels per group (ResNeXt's 4-16): their channels are one box row of the
        activations' descriptors [.., G / gpb, gpb · channels per group], and the resident filter
        tap tiles are block-diagonal (a group's outputs see only its own inputs), gathered from
        ``w`` with pointer loads when the tile's group block changes; ``gpb`` × the reduction
        channels and × the output channels per group each fit one tile. The MMAs issue ``gpb``
        times the useful multiply-adds.
    :ivar programs_per_sm: persistent programs per SM (``_o<n>`` in the name when above 1): the
        grid is ``programs_per_sm`` × :data:`SM_COUNT` programs, so that where the shared memory
        of two fits an SM, one program's waits (TMA loads, MMAs) overlap the other's work.
    :ivar stride: the height and width stride the kernel is compiled for (``_st2`` in the name
        when 2; forward, 3-row filters at dilation 1). With stride 2 the source descriptor is the
        input's row phases (:func:`.tma.source_view`): output row oh, row tap fy reads input row
        2·oh + fy - pad_h, i.e. row oh + q of phase a where fy - pad_h = 2·q + a. The even row
        taps (0, 2) share a phase and read rows q and q + 1 of it, the odd tap (1) the other:
        a halo is the even taps' ``block_h`` + 1 phase rows, then the odd tap's ``block_h``, each
        row tap's operand a view at whole atoms, as at stride 1; a column tap picks its column
        phase at run time (its box's channel offset).
    """

    direction: ClassVar[str] = ""
    block_n: int = attrs.field(validator=power_of_two_in(16, 128))
    num_stages: int = attrs.field(default=3, validator=int_in(2, 8))
    taps_h: int = attrs.field(default=3, validator=int_in(2, 15))
    max_taps: int = attrs.field(default=9, validator=int_in(1, 64))
    groups_per_block: int = attrs.field(default=1, validator=power_of_two_in(1, 16))
    programs_per_sm: int = attrs.field(default=1, validator=int_in(1, 2))
    stride: int = attrs.field(default=1, validator=int_in(1, 2))

    @property
    def block_k(self) -> int:
        return self.block_n

    @property
    def block_m(self) -> int:
        return self.block_h * self.block_w

    @property
    def tap_atoms(self) -> int:
        """Atoms of one filter tap tile (``block_n × block_k``)."""
        return self.block_n // 8

    @property
    def ring_atoms(self) -> int:
        """The ring's allocation: ``num_stages`` halo slots, rounded up to a power of two of atoms
        (Gluon allocates power-of-two shapes); its spare atoms hold :attr:`spill_taps` filter taps."""
        return pow2_ceil(self.num_stages * self.slot_atoms)

    @property
    def spill_taps(self) -> int:
        return min(self.max_taps, (self.ring_atoms - self.num_stages * self.slot_atoms) // self.tap_atoms)

    @property
    def filter_atoms(self) -> int:
        """The allocation of the filter taps the ring does not hold (a power of two, at least one tap)."""
        return pow2_ceil(max(1, self.max_taps - self.spill_taps) * self.tap_atoms)

    @property
    def swizzle(self) -> int:
        """Bytes of a row of every shared tile (the NVMMA swizzle width)."""
        return self.block_k * self.dtype.itemsize

    def smem_bytes(self) -> int:
        """The ring and the filter bank, the output staging tile and 1 KB for mbarriers and
        alignment."""
        row = self.block_k * self.dtype.itemsize
        return (self.ring_atoms + self.filter_atoms) * 8 * row + self.block_m * self.block_n * self.dtype.itemsize + 1024

    @property
    def name(self) -> str:
        return (f"conv_halo_{self.direction}_{self.dtype.value}_{self.block_h}x{self.block_w}x{self.block_n}"
                f"_s{self.num_stages}_t{self.taps_h}d{self.dil_h}_m{self.max_taps}"
                + (f"_gpb{self.groups_per_block}" if self.groups_per_block > 1 else "")
                + (f"_o{self.programs_per_sm}" if self.programs_per_sm > 1 else "")
                + (f"_st{self.stride}" if self.stride > 1 else ""))


@attrs.frozen(kw_only=True)
class ConvHaloFwdKey(ConvHaloKey):
    direction: ClassVar[str] = "fwd"


@attrs.frozen(kw_only=True)
class ConvHaloBwdDataKey(ConvHaloKey):
    direction: ClassVar[str] = "bwd_data"


class GluonTmaConv:
    """What the halo families share beyond the TMA families they extend: Gluon kernels (not
    interpretable) of one warpgroup, whose signature is the tensors' pointers (with a split, the
    fp32 partials and int32 counters), the integer arguments of :func:`.tma.geometry`, then host
    descriptors ``tensordesc<type[block],layout>`` with the default NVMMA layout, whose swizzle is
    a box row (the templates' swizzle constants); no constexprs; the bucket of stride 1 and the key's
    filter height."""

    interpretable = False

    @staticmethod
    def gluon_reasons(key, arch: ArchSpec) -> list[str]:
        """The kernels' needs of ``arch`` and of the key's dtype: TMA, warpgroup MMA, fp16 / bf16."""
        reasons = []
        if not arch.tma:
            reasons.append(f"{arch.arch} has no TMA (tensor memory accelerator)")
        if not getattr(arch, "wgmma", False):
            reasons.append(f"{arch.arch} has no wgmma (warpgroup MMA)")
        if key.dtype not in (DType.FP16, DType.BF16):
            reasons.append(f"dtype {key.dtype.value}: the kernel is written for fp16 / bf16")
        return reasons

    def signature(self, key) -> dict[str, str]:
        import triton.language as tl
        from triton.experimental.gluon import language as gl

        ty = key.dtype.triton
        sig = dict.fromkeys(self._ptr_names, f"*{ty}")
        if key.sums_partials:
            sig.update({"ws_ptr": "*fp32", "lock_ptr": "*i32"})
        sig.update({n: "i32" for n in _ARGS})
        for name, (_, block) in self.descriptor_blocks(key).items():
            layout = gl.NVMMASharedLayout.get_default_for(list(block), tl.str_to_ty(ty, None))
            assert layout.swizzle_byte_width == block[-1] * key.dtype.itemsize, (name, layout)
            sig[name] = f"tensordesc<{ty}{list(block)},{layout!r}>"
        return sig

    def constexprs(self, key) -> dict[str, Any]:
        return {}

    def divisible_by_16(self, key) -> tuple[str, ...]:
        """The tensors' pointers, and the workspaces (ckcore's 64 KiB-aligned buffers) of keys that
        sum partials: their fp32 pairs store and load as 8-byte vectors."""
        return self._ptr_names + (("ws_ptr", "lock_ptr") if key.sums_partials else ())

    def bucket(self, key):
        """(dtype, channels-last, any G, any C/G, whether every stride is 1 (the key's stride), the
        key's filter height) of the conv op's ``bucket`` (:func:`halo_reason` rejects every other
        problem)."""
        return key.dtype, True, None, None, key.stride == 1, key.taps_h

    def compile_options(self, key) -> dict[str, Any]:
        return {"num_warps": 4}

    def launch_args(self, key, p: ConvProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        ptrs = tuple(tensors[t] for t in self.tensors)
        if key.sums_partials:
            ptrs += split_workspace_views(tensors)
        return ptrs + _int_args(self.direction, p) + self.host_descriptors(key, p, tensors)


class ConvHaloFamily(GluonTmaConv, ConvTmaFamily):
    """Shared behaviour of the two halo families (see the module docstring)."""

    template = "conv_halo.py.j2"

    def check(self, key: ConvHaloKey, arch: ArchSpec) -> list[str]:
        """Static validity: TMA and warpgroup MMA, a 16-bit dtype, a patch of 64 or 128 pixels,
        channel tiles of at most 128 bytes, the shared memory within the block limit, and stride 2
        only forward, for 3-row filters at dilation 1."""
        reasons = self.gluon_reasons(key, arch)
        if key.stride == 2 and (self.direction != "fwd" or key.taps_h != 3 or key.dil_h != 1):
            reasons.append(f"stride 2: forward kernels for 3-row filters at dilation 1 ({self.direction}, taps_h "
                           f"{key.taps_h}, dil_h {key.dil_h})")
        if key.block_m not in (64, 128):
            reasons.append(f"block_h*block_w = {key.block_m}: one warpgroup's MMA tile of 64 or 128 rows")
        if key.block_k * key.dtype.itemsize > 128:
            reasons.append(f"block_n {key.block_n} x {key.dtype.itemsize} B > 128 B (one swizzled row)")
        if key.block_k * key.dtype.itemsize < 32:
            reasons.append(f"block_n {key.block_n} x {key.dtype.itemsize} B < 32 B (the narrowest swizzle)")
        smem = key.smem_bytes()
        if smem > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem} B (halo ring, resident filter, output tile) > "
                           f"{arch.smem_per_block_bytes} B")
        elif key.programs_per_sm * (smem + DRIVER_SMEM) > arch.smem_per_sm_bytes:
            reasons.append(f"programs_per_sm {key.programs_per_sm} x (shared memory {smem} B + {DRIVER_SMEM} B the "
                           f"driver reserves) > {arch.smem_per_sm_bytes} B an SM")
        return reasons

    def supports(self, key: ConvHaloKey, p: ConvProblem) -> str | None:
        """Why ``key`` cannot run ``p``: :func:`halo_reason`, at most ``max_taps`` taps, the
        reduction channels per group (C/G forward, K/G backward-data) within one ``block_k``
        (merged groups: G a multiple of ``groups_per_block``, whose channels fit one tile and fill
        more than half of it: the MMAs issue ``groups_per_block`` times the useful work already), and
        tile counts whose product with the program count fits 32 bits (each program's share is
        ``pid · tiles / programs``)."""
        why = halo_reason(key, p)
        if why:
            return why
        if p.taps > key.max_taps:
            return f"{p.taps} filter taps > max_taps {key.max_taps} (the resident filter)"
        field = "Cg" if self.direction == "fwd" else "Kg"
        g = geometry(self.direction, p)
        red = g["RED"]
        if key.groups_per_block > 1:
            why = self._merged_reason(key, p)
            if why:
                return why
            used = key.groups_per_block * max(red, g["COLS"])
            if 2 * used <= key.block_k:
                return (f"groups_per_block {key.groups_per_block} x {max(red, g['COLS'])} channels fill at most half "
                        f"of block_k {key.block_k} (a narrower tile or more groups per block serves it)")
        if red > key.block_k:
            return f"{field}={red} reduction channels per group > block_k {key.block_k} (one channel block)"
        tiles, programs = self.tiles(key, p), SM_COUNT * key.programs_per_sm
        if tiles * programs >= 2**31:
            return f"{tiles} tiles: the programs' 32-bit tile arithmetic (tiles x {programs}) would overflow"
        return None

    def descriptor_blocks(self, key: ConvHaloKey) -> dict[str, tuple[str, tuple[int, ...]]]:
        """``src`` (x or dy) in boxes [1, block_h, block_w, 1, block_k], ``src_tail`` (the same
        tensor) in [1, tail_h, block_w, 1, block_k], ``filt`` (w) in [1, block_n, 1, block_k]
        (backward-data: [1, block_k, 1, block_n]) and ``dst`` (y or dx) in [1, block_h, block_w,
        1, block_n]; no ``filt`` with merged groups (:attr:`ConvHaloKey.groups_per_block`). The
        activations' group dimension is one of ``groups_per_block`` groups (:func:`.tma.source_view`)."""
        src, w, dst = self.tensors
        filt = (1, key.block_n, 1, key.block_k) if self.direction == "fwd" else (1, key.block_k, 1, key.block_n)
        out = {"src": (src, (1, key.block_h, key.block_w, 1, key.block_k)),
               "src_tail": (src, (1, key.tail_h, key.block_w, 1, key.block_k))}
        if key.groups_per_block == 1:  # merged groups gather their block-diagonal filter with pointers
            out["filt"] = (w, filt)
        out["dst"] = (dst, (1, key.block_h, key.block_w, 1, key.block_n))
        return out

    def _views(self, key, p: ConvProblem) -> dict[str, tuple[list[int], list[int]]]:
        views = super()._views(key, p)
        return {**views, "src_tail": views["src"]}

    def template_values(self, key: ConvHaloKey) -> dict[str, Any]:
        """The direction and the key's derived sizes (:class:`ConvHaloKey` properties)."""
        return {"direction": key.direction, "block_m": key.block_m, "block_k": key.block_k, "tail_h": key.tail_h,
                "slot_atoms": key.slot_atoms, "tap_atoms": key.tap_atoms, "ring_atoms": key.ring_atoms,
                "spill_taps": key.spill_taps, "filter_atoms": key.filter_atoms, "itemsize": key.dtype.itemsize, "swizzle": key.swizzle,
                "stride": key.stride}

    def tiles(self, key: ConvHaloKey, p: ConvProblem) -> int:
        """Output tiles: pixel patches × column blocks × group blocks (``groups_per_block``)."""
        g, gpb = geometry(self.direction, p), key.groups_per_block
        return (g["ND_dst"] * math.ceil(g["H_dst"] / key.block_h) * math.ceil(g["W_dst"] / key.block_w)
                * math.ceil(gpb * g["COLS"] / key.block_n) * (p.G // gpb))

    def grid(self, key: ConvHaloKey, p: ConvProblem) -> tuple[int, int, int]:
        return (min(SM_COUNT * key.programs_per_sm, self.tiles(key, p)), 1, 1)

    def kernel_sets(self):
        from . import sets

        return {"default": lambda arch: sets.halo_set(self, arch, full=False),
                "full": lambda arch: sets.halo_set(self, arch, full=True)}

    # features: the TMA families' (the same tile keys); the model tells the families apart by
    # their ``fam_`` flags.

    def pair_features(self, key: ConvHaloKey, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves (of tiles: the grid is persistent); padding waste of the pixel
        patches and channel tiles; K steps per tile (taps × one channel block); log of the
        multiply-adds issued."""
        g = geometry(self.direction, p)
        tiles = self.tiles(key, p)
        covered = g["ND_dst"] * g["H_dst"] * g["W_dst"] * g["COLS"] * p.G
        issued = tiles * key.block_m * key.block_n * p.taps * key.block_k
        return tile_features(tiles, arch.sm_count, p.taps, tiles * key.block_m * key.block_n / max(covered, 1) - 1.0,
                             issued)


class ConvHaloFwd(ConvHaloFamily):
    """Forward with halo loads: rows output pixels, columns output channels."""

    name = "conv_halo_fwd"
    op = "grouped_conv_fwd"
    direction = "fwd"
    key_cls = ConvHaloFwdKey
    tensors = ("x", "w", "y")


class ConvHaloBwdData(ConvHaloFamily):
    """Backward-data with halo loads (stride 1: the forward convolution of dy with the filter
    mirrored): rows input pixels, columns input channels."""

    name = "conv_halo_bwd_data"
    op = "grouped_conv_bwd_data"
    direction = "bwd_data"
    key_cls = ConvHaloBwdDataKey
    tensors = ("dy", "w", "dx")


HALO_FAMILIES = (ConvHaloFwd, ConvHaloBwdData)
