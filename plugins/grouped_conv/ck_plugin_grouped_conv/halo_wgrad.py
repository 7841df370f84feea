"""The halo backward-weight family (sm_90): ``conv_halo_bwd_weight``, stride-1 channels-last
backward-weight in Gluon, template ``conv_halo_bwd_weight.py.j2``.

The TMA backward-weight family (``conv_tma_bwd_weight``) runs one program per (tap, channel
tiles, split): every tap reloads the dy patch and the x patch shifted by the tap. Here a program
owns one column tap (and depth tap) and all ``taps_h`` row taps of it: per output-pixel patch it
loads the dy patch once and the x patch plus its ``(taps_h - 1) · dil_h`` halo rows once (two TMA
boxes), and row tap fy multiplies dy^T by the halo shifted by fy · dil_h image rows, a view of
shared memory at whole 8-row swizzle atoms (``docs/conv.md``, halo families). So a 3×3 filter
loads per patch 3 dy patches and 3 halos instead of 9 of each. ``taps_h`` fp32 accumulators of
``block_m × block_n`` stay in registers; the reduction over N·output pixels is split over
``split_k`` programs whose fp32 partials the last to arrive sums in split order (deterministic;
the workspaces of :func:`.family.split_workspaces`, one partial tile per row tap).

Scope (:meth:`ConvHaloBwdWeight.supports`): fp16 / bf16, channels-last, stride 1 (stride 2 from x's row
phases with ``_st2`` keys: :attr:`ConvHaloBwdWeightKey.stride`), the filter height
and height dilation of the key, C/G and K/G multiples of 16 bytes (TMA), 32-bit coordinates, at most
:data:`.tma.MAX_TMA_SPLIT_REDUCTION` pixels per split and partials within
:data:`.family.MAX_SPLIT_WORKSPACE`. The split is the grid's second dimension. Gluon kernels do not run in Triton's
interpreter (``interpretable = False``): CPU tests compile them, GPU tests check them.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs

from ckcore.arch import ArchSpec
from ckcore.keys import int_in, power_of_two_in

from .family import MAX_SPLIT_WORKSPACE, split_levels, split_workspaces, tile_features
from .halo import SM_COUNT, GluonTmaConv, HaloKeyBase, halo_reason, pow2_ceil
from .problem import ConvProblem
from .tma import ConvTmaBwdWeight, dest_view, geometry, source_view

__all__ = ["ConvHaloBwdWeightKey", "ConvHaloBwdWeight"]


@attrs.frozen(kw_only=True)
class ConvHaloBwdWeightKey(HaloKeyBase):
    """One halo backward-weight kernel (4 warps, one warpgroup).

    :ivar block_h, block_w: the output-pixel patch of one reduction step (64 or 128 pixels;
        ``block_w`` a multiple of 8).
    :ivar block_m, block_n: output channels (dy) and input channels (x) per program: 64 (one
        warpgroup's MMA rows) and 32 or 64 (one swizzled row at 2 bytes).
    :ivar split_k: programs sharing one program's patches (fp32 partials summed in split order).
    :ivar num_stages: patch slots in the ring.
    :ivar taps_h, dil_h: the filter height and height dilation the kernel is compiled for.
    :ivar stream_k: 0, or the programs per SM of a stream-K grid (``_sk<n>`` in the name instead of
        ``_k<split>``; ``split_k`` 1): :data:`.halo.SM_COUNT` × ``stream_k`` programs share the
        T = dw tiles × pixel patches steps evenly, program p taking steps [p·T/P, (p+1)·T/P) tile
        after tile. A tile one program runs whole is stored; the programs sharing a tile publish
        fp32 partials (two slots a program: its first and its last run) and the last to arrive
        sums them in program order. A fixed split gives each tile's programs equal shares, so
        with fewer tiles than SMs (ResNeXt-50's 96 at 32 groups) a split either leaves SMs idle
        or gives some SMs two programs' work; stream-K balances the SMs to within one patch.
    :ivar stride: the height and width stride the kernel is compiled for (``_st2`` in the name when
        2; 3-row filters at dilation 1). As the forward halo keys' (:class:`.halo.ConvHaloKey`): x
        is read from its row phases (:func:`.tma.source_view`), dy row oh's row tap fy reads phase
        row oh + q of phase a (fy - pad_h = 2·q + a), so a halo is the even row taps' ``block_h``
        + 1 phase rows and then the odd row tap's ``block_h``; the program's column tap fixes its
        column phase. ``groups_per_block`` × C/G must be ``block_n`` (one x box of whole groups).
    :ivar groups_per_block: consecutive groups one program serves (``_gpb<n>`` in the name when
        above 1), for few channels per group (ResNeXt's 4-16): the activations' descriptors are
        viewed as [.., G / gpb, gpb · channels per group], so one dy box holds the ``gpb`` groups'
        output channels and one x box their input channels; the MMAs compute every (output,
        input) channel pair of the block and the store keeps the diagonal blocks (a group's
        output channels against its own input channels). ``gpb`` × K/G fits ``block_m`` and
        ``gpb`` × C/G fits ``block_n``; the MMAs issue ``gpb`` times the useful multiply-adds.
    """

    direction: ClassVar[str] = "bwd_weight"
    source_box_field: ClassVar[str] = "block_n"  # an x box holds block_n channels
    block_m: int = attrs.field(validator=power_of_two_in(16, 128))
    block_n: int = attrs.field(validator=power_of_two_in(16, 128))
    split_k: int = attrs.field(default=1, validator=int_in(1, 64))
    num_stages: int = attrs.field(default=4, validator=int_in(2, 8))
    taps_h: int = attrs.field(default=3, validator=int_in(2, 7))
    groups_per_block: int = attrs.field(default=1, validator=power_of_two_in(1, 16))
    stream_k: int = attrs.field(default=0, validator=int_in(0, 2))
    stride: int = attrs.field(default=1, validator=int_in(1, 2))

    @property
    def block_k(self) -> int:
        """Output pixels per reduction step: ``block_h · block_w``."""
        return self.block_h * self.block_w

    @property
    def tap_block(self) -> int:
        """Partial tiles per program: one per row tap (:func:`.family.split_workspaces`)."""
        return self.taps_h

    @property
    def programs(self) -> int:
        """The stream-K grid: :data:`.halo.SM_COUNT` × ``stream_k`` programs (0 without stream-K)."""
        return SM_COUNT * self.stream_k

    @property
    def dy_ring_atoms(self) -> int:
        return pow2_ceil(self.num_stages * self.block_k // 8)

    @property
    def x_ring_atoms(self) -> int:
        return pow2_ceil(self.num_stages * self.slot_atoms)

    def smem_bytes(self) -> int:
        """Both rings (rounded up to powers of two of atoms, as Gluon allocates) and 1 KB for
        mbarriers and alignment."""
        atom = 8 * self.dtype.itemsize
        return self.dy_ring_atoms * atom * self.block_m + self.x_ring_atoms * atom * self.block_n + 1024

    @property
    def name(self) -> str:
        return (f"conv_halo_bwd_weight_{self.dtype.value}_{self.block_h}x{self.block_w}_{self.block_m}x{self.block_n}"
                + (f"_sk{self.stream_k}" if self.stream_k else f"_k{self.split_k}")
                + f"_s{self.num_stages}_t{self.taps_h}d{self.dil_h}"
                + (f"_gpb{self.groups_per_block}" if self.groups_per_block > 1 else "")
                + ("_st2" if self.stride == 2 else ""))

    @property
    def split_levels(self) -> tuple[int, int]:
        """(B, S / B) of the split sum (:func:`.family.split_levels`)."""
        return split_levels(self.split_k)


class ConvHaloBwdWeight(GluonTmaConv, ConvTmaBwdWeight):
    """Backward-weight with halo loads (see the module docstring)."""

    name = "conv_halo_bwd_weight"
    op = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    key_cls = ConvHaloBwdWeightKey
    template = "conv_halo_bwd_weight.py.j2"
    tensors = ("x", "dy", "dw")
    _ptr_names = ("x_ptr", "dy_ptr", "dw_ptr")

    def check(self, key: ConvHaloBwdWeightKey, arch: ArchSpec) -> list[str]:
        """TMA and warpgroup MMA, a 16-bit dtype, equal channel tiles of 32-128 bytes, a patch of
        64 or 128 pixels, and the shared memory within the block limit."""
        reasons = self.gluon_reasons(key, arch)
        if key.block_k not in (64, 128):
            reasons.append(f"block_h*block_w = {key.block_k}: 64 or 128 pixels per step")
        if key.taps_h * key.block_m * key.block_n // 128 > 128:
            reasons.append(f"{key.taps_h} accumulators of {key.block_m}x{key.block_n} fp32: "
                           f"{key.taps_h * key.block_m * key.block_n // 128} registers a thread > 128")
        if key.block_m != 64:
            reasons.append(f"block_m {key.block_m}: one warpgroup's MMA rows (64; {key.taps_h} accumulators of 128 rows "
                           "would not fit its registers)")
        if not 32 <= key.block_n * key.dtype.itemsize <= 128:
            reasons.append(f"block_n {key.block_n} x {key.dtype.itemsize} B outside 32-128 B (one swizzled row)")
        smem = key.smem_bytes()
        if smem > arch.smem_per_block_bytes:
            reasons.append(f"shared memory {smem} B (dy and x rings) > {arch.smem_per_block_bytes} B")
        if key.stride == 2 and (key.taps_h != 3 or key.dil_h != 1):
            reasons.append(f"stride 2: 3-row filters at dilation 1 (taps_h {key.taps_h}, dil_h {key.dil_h})")
        if key.stream_k and key.split_k != 1:
            reasons.append(f"stream_k {key.stream_k} with split_k {key.split_k}: stream-K shares the patches itself (split_k 1)")
        return reasons

    def supports(self, key: ConvHaloBwdWeightKey, p: ConvProblem) -> str | None:
        """Why ``key`` cannot run ``p``: :func:`.halo.halo_reason`; the split of the TMA
        backward-weight family (no more splits than patches, at most
        :data:`.tma.MAX_TMA_SPLIT_REDUCTION` pixels per split); partials within
        :data:`.family.MAX_SPLIT_WORKSPACE` (their offsets are 32-bit); each split's share of the
        patches computable in 32 bits. Stream-K: at least one patch step per program (T >= P, so
        every program between a tile's first and last has a run of it) and T × P within 32 bits
        (the programs' shares ``p·T / P``)."""
        why = halo_reason(key, p) or self._merged_wgrad_reason(key, p) or self._split_reason(key, p)
        if why:
            return why
        if key.split_k > 1:
            need = split_workspaces(self, key, p)["partials"]
            if need > MAX_SPLIT_WORKSPACE:
                return f"split_k={key.split_k} partials need {need} B > {MAX_SPLIT_WORKSPACE} B"
        if (key.split_k + 1) * self._steps(key, p) >= 2**31:
            return f"{self._steps(key, p)} pixel patches: the splits' 32-bit shares would overflow"
        if key.stream_k:
            steps = self.dw_tiles(key, p) * self._steps(key, p)
            if steps < key.programs:
                return f"stream-K: {steps} patch steps, fewer than its {key.programs} programs"
            if (steps + 1) * key.programs >= 2**31:
                return f"stream-K: {steps} patch steps x {key.programs} programs would overflow 32 bits"
        return None

    def dw_tiles(self, key: ConvHaloBwdWeightKey, p: ConvProblem) -> int:
        """dw tiles: group blocks × output- and input-channel blocks × depth taps × column taps (a
        tile holds its ``taps_h`` row taps)."""
        d3, gpb = p.as_3d(), key.groups_per_block
        blocks = math.ceil(gpb * p.Kg / key.block_m) * math.ceil(gpb * p.Cg / key.block_n)
        return p.G // gpb * blocks * d3["filter"][0] * d3["filter"][2]

    @staticmethod
    def _merged_wgrad_reason(key: ConvHaloBwdWeightKey, p: ConvProblem) -> str | None:
        """Why merged groups (``groups_per_block`` > 1) cannot serve ``p``: G not a multiple of
        them, their output channels beyond ``block_m`` or input channels beyond ``block_n``, or
        a tile at most half full each way. So a problem whose only fitting group count fills half a
        tile (G = 2 or 6 with 4 channels per group) gets no halo key; other families serve it."""
        gpb = key.groups_per_block
        if gpb == 1:
            return None
        if p.G % gpb:
            return f"G={p.G} is not a multiple of groups_per_block={gpb}"
        if gpb * p.Kg > key.block_m:
            return f"groups_per_block {gpb} x Kg={p.Kg} output channels > block_m {key.block_m}"
        if gpb * p.Cg > key.block_n:
            return f"groups_per_block {gpb} x Cg={p.Cg} input channels > block_n {key.block_n}"
        if 2 * gpb * p.Kg <= key.block_m and 2 * gpb * p.Cg <= key.block_n:
            return (f"groups_per_block {gpb} x (Kg={p.Kg}, Cg={p.Cg}) fill at most half of the "
                    f"{key.block_m}x{key.block_n} tile each way")
        return None

    def descriptor_blocks(self, key: ConvHaloBwdWeightKey) -> dict[str, tuple[str, tuple[int, ...]]]:
        """``x_src`` (x) in boxes [1, block_h, block_w, 1, block_n], ``x_tail`` in [1, tail_h,
        block_w, 1, block_n] and ``dy_desc`` (dy) in [1, block_h, block_w, 1, block_m]."""
        return {"x_src": ("x", (1, key.block_h, key.block_w, 1, key.block_n)),
                "x_tail": ("x", (1, key.tail_h, key.block_w, 1, key.block_n)),
                "dy_desc": ("dy", (1, key.block_h, key.block_w, 1, key.block_m))}

    def _views(self, key, p: ConvProblem) -> dict[str, tuple[list[int], list[int]]]:
        g, gpb = geometry(self.direction, p), key.groups_per_block
        x = source_view(g, p.G, gpb)
        return {"x_src": x, "x_tail": x, "dy_desc": dest_view(g, p.G, gpb)}

    def template_values(self, key: ConvHaloBwdWeightKey) -> dict[str, Any]:
        """The key's derived sizes (:class:`ConvHaloBwdWeightKey` properties)."""
        return {"pixels": key.block_k, "split_levels": key.split_levels, "programs": key.programs, "tail_h": key.tail_h, "dy_atoms": key.block_k // 8, "slot_atoms": key.slot_atoms,
                "dy_ring_atoms": key.dy_ring_atoms, "x_ring_atoms": key.x_ring_atoms,
                "itemsize": key.dtype.itemsize, "stride": key.stride, "swizzle_dy": key.block_m * key.dtype.itemsize,
                "swizzle_x": key.block_n * key.dtype.itemsize}

    def grid(self, key: ConvHaloBwdWeightKey, p: ConvProblem) -> tuple[int, int, int]:
        """(dw tiles, split_k, 1); stream-K: (:attr:`ConvHaloBwdWeightKey.programs`, 1, 1)."""
        if key.stream_k:
            return (key.programs, 1, 1)
        return (self.dw_tiles(key, p), key.split_k, 1)

    def workspaces(self, key: ConvHaloBwdWeightKey, p: ConvProblem) -> dict[str, int]:
        """Split keys: :func:`.family.split_workspaces`. Stream-K: two slots of ``taps_h`` fp32
        partial tiles a program, and one int32 arrival counter a dw tile (left at zero)."""
        if key.stream_k:
            return {"partials": key.programs * 2 * key.taps_h * key.block_m * key.block_n * 4,
                    "counters": 4 * self.dw_tiles(key, p)}
        return split_workspaces(self, key, p)

    def kernel_sets(self):
        from . import sets

        return {"default": lambda arch: sets.halo_wgrad_set(self, arch, full=False),
                "full": lambda arch: sets.halo_wgrad_set(self, arch, full=True)}

    def estimate_ms(self, key: ConvHaloBwdWeightKey, p: ConvProblem, arch: ArchSpec, device) -> float:
        """The TMA families' implicit-GEMM cost model (:mod:`.rules`); stream-K keys scaled by their
        programs' share of the patch steps over an unsplit grid's per-SM share."""
        ms = super().estimate_ms(key, p, arch, device)
        if key.stream_k:
            tiles, steps = self.dw_tiles(key, p), self._steps(key, p)
            ms *= math.ceil(tiles * steps / key.programs) / (math.ceil(tiles / arch.sm_count) * steps)
        return ms

    def features(self, key: ConvHaloBwdWeightKey) -> dict[str, float]:
        """The TMA backward-weight family's (patch, channel tiles, split, stages),
        ``groups_per_block`` and ``stream_k``."""
        return {**super().features(key), "groups_per_block": float(key.groups_per_block),
                "stream_k": float(key.stream_k)}

    def pair_features(self, key: ConvHaloBwdWeightKey, p: ConvProblem, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves; padding waste of the channel tiles and patches; patches per
        program; log of the multiply-adds issued; the partial sums' (:meth:`_sum_features`)."""
        g = geometry(self.direction, p)
        tiles = self.dw_tiles(key, p)
        programs = key.programs if key.stream_k else tiles * key.split_k  # the grid's
        if key.stream_k:  # patch steps shared evenly: a program's share, the issued work of every step
            steps = tiles * self._steps(key, p)
            k_steps = math.ceil(steps / programs)
            issued = steps * key.taps_h * key.block_m * key.block_n * key.block_k
        else:
            k_steps = math.ceil(self._steps(key, p) / key.split_k)
            issued = programs * key.taps_h * key.block_m * key.block_n * k_steps * key.block_k
        covered = p.Kg * p.Cg * p.taps * p.G * g["ND_dst"] * g["H_dst"] * g["W_dst"]
        return {**tile_features(programs, arch.sm_count, k_steps, issued / max(covered, 1) - 1.0, issued),
                **self._sum_features(key, p, tiles)}

    @staticmethod
    def _sum_features(key: ConvHaloBwdWeightKey, p: ConvProblem, tiles: int) -> dict[str, float]:
        """What the partial sums cost: ``shares``, programs per dw tile (the split; stream-K: programs
        over tiles, at least 1); ``runs``, tile runs per program (1; stream-K: about (tiles + P - 1) /
        P, each a pipeline refill and an epilogue); ``log_partial_bytes``, log of the fp32 partial
        bytes written (the dw elements of each partial run; 0 without partials). ``tiles``: the dw
        tiles (:meth:`dw_tiles`)."""
        gpb = key.groups_per_block
        useful = min(gpb * p.Kg, key.block_m) * min(p.Cg, key.block_n) * key.taps_h * 4
        if key.stream_k:
            runs = tiles + key.programs - 1
            partial_runs = runs if key.programs >= tiles else 2 * (key.programs - 1)
            return {"shares": max(1.0, key.programs / tiles), "runs": runs / key.programs,
                    "log_partial_bytes": math.log(1.0 + partial_runs * useful)}
        partial_runs = tiles * key.split_k if key.split_k > 1 else 0
        return {"shares": float(key.split_k), "runs": 1.0, "log_partial_bytes": math.log(1.0 + partial_runs * useful)}
