"""The direct depthwise families ``dw_fwd``, ``dw_bwd_data`` and ``dw_bwd_weight`` (tap by tap),
and the sliding-window families ``dw_win_fwd``, ``dw_win_bwd_data`` and ``dw_win_bwd_weight``: they serve the grouped
convolution ops for problems with C/G = 1, next to the implicit-GEMM families, with the same
kernel arguments (:func:`ck_plugin_grouped_conv.family.int_args`). ``gw_win_fwd``,
``gw_win_bwd_data`` and ``gw_win_bwd_weight`` run the same sliding windows on tensor cores for
grouped problems with few channels per group."""

from __future__ import annotations

import functools
import math

from ckcore import DType
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.features import wave_features
from ck_plugin_grouped_conv.family import (MAX_SPLIT_WORKSPACE, ConvFamily, access_features, stride_phases,
                                           unit_stride_reason)

from .keys import (DwBwdDataKey, DwBwdWeightKey, DwFwdKey, DwKey, DwWindowBwdDataKey, DwWindowBwdWeightKey,
                   DwWindowFwdKey, DwWindowKey, GroupWindowBwdDataKey, GroupWindowBwdWeightKey, GroupWindowFwdKey)

__all__ = ["DwFamily", "DwFwd", "DwWindow", "DwWinFwd", "DwWinBwdData", "DwWinBwdWeight", "DwBwdData", "DwBwdWeight",
           "GwWindow", "GwWinFwd", "GwWinBwdData", "GwWinBwdWeight", "FAMILIES", "MAX_WINDOW_COLUMNS"]


def spatial_reasons(key) -> list[str]:
    """Why a spatial-tile key (``block_h`` > 0) is invalid: not channels-last, rows not a power of
    two dividing ``block_p``; backward-data: not unit-stride and multiplier one (sliding windows:
    or multiplier two)."""
    bh = key.block_h
    if not bh:
        return []
    reasons = []
    if not key.channels_last:
        reasons.append(f"block_h={bh}: spatial tiles are channels-last")
    if bh & (bh - 1) or key.block_p % bh:
        reasons.append(f"block_h={bh} must be a power of two dividing block_p={key.block_p}")
    # (multiplier two: the windows sum each dx channel's dy pair; check() refuses it elsewhere)
    if key.direction == "bwd_data" and not (key.unit_stride and (key.multiplier_one or key.multiplier_two
                                                                 or getattr(key, "dot", False))):
        # (the tensor-core grouped windows need unit stride only; their keys always have it)
        reasons.append(f"block_h={bh}: backward-data spatial tiles need unit_stride and multiplier_one "
                       f"(sliding windows: or multiplier_two)")
    return reasons


def spatial_programs(key, n: int, plane: tuple[int, int, int]) -> int:
    """Spatial tiles over ``n`` images of the (depth, height, width) ``plane`` (forward and
    backward-weight: the output's, backward-data: the input's): a forward or backward-data grid's
    programs, a backward-weight split's units of work."""
    d, h, w = plane
    return n * d * math.ceil(h / key.block_h) * math.ceil(w / (key.block_p // key.block_h))


class DwFamily(ConvFamily):
    """Shared behaviour: validity, support (C/G = 1), alignment, cost model, kernel sets."""

    template_package = "ck_plugin_depthwise"

    @property
    def template(self) -> str:
        return f"dw_{self.direction}.py.j2"

    def check(self, key: DwKey, arch: ArchSpec) -> list[str]:
        """Static validity: threads per block, a tile of at least one element per thread and
        at most 64 fp32 accumulators per thread (backward-weight keeps one accumulator tile per
        tap of a pass, ``unroll`` tiles, and may hold 128: its loop body has no other tile
        alive across iterations; the sliding-window backward-weight family 160)."""
        reasons = []
        threads = key.num_warps * 32
        if threads > arch.max_threads_per_block:
            reasons.append(f"num_warps {key.num_warps} exceeds {arch.max_threads_per_block} threads per block")
        tile = key.block_p * key.block_c
        if tile < threads:
            reasons.append(f"tile {key.block_p}x{key.block_c} smaller than {threads} threads")
        if key.multiplier_one and key.multiplier_two:
            reasons.append("multiplier_one and multiplier_two exclude each other")
        if key.multiplier_two and not ((isinstance(key, DwWindowKey) and not getattr(key, "dot", False))
                                       or (isinstance(key, DwBwdDataKey) and key.channels_last and not key.block_h)):
            reasons.append("multiplier_two: depthwise sliding windows and channels-last tap-by-tap backward-data "
                           "(block_h 0) only")
        if key.multiplier_two and key.block_c < 2:
            reasons.append(f"multiplier_two needs block_c >= 2 (block_c={key.block_c})")
        if key.multiplier_two and key.access.value not in ("a16", "i32"):
            reasons.append(f"access {key.access.value}: multiplier_two takes a16 or i32")
        tiles, tile, budget = self._accumulators(key)
        if tiles * tile // threads > budget:
            reasons.append(f"{tiles * tile // threads} fp32 accumulators per thread > {budget}"
                           + (f" ({tiles} accumulator tiles)" if tiles > 1 else ""))
        return reasons + spatial_reasons(key)

    def _accumulators(self, key: DwKey) -> tuple[int, int, int]:
        """(fp32 tiles alive across the loop, elements per tile, budget per thread) for
        :meth:`check`."""
        return (key.unroll, key.block_p * key.block_c, 128) if self.direction == "bwd_weight" else (1, key.block_p * key.block_c, 64)

    def _pixel_blocks(self, key: DwKey, p, grid, split: int) -> int:
        """Pixel blocks of ``block_p`` the grid covers (the pixel waste's numerator)."""
        if self.direction == "bwd_weight" and key.block_h:
            return math.ceil(spatial_programs(key, p.N, p.as_3d()["out"]) / split) * split
        if self.direction == "bwd_data" or key.block_h:
            return grid[0]
        return math.ceil(p.N * p.out_pixels / split / key.block_p) * split

    def channels(self, key: DwKey, p) -> int:
        """The channels ``block_c`` tiles: dx's C in backward-data, except with multiplier two
        (dy's K there: each dx channel's pair is summed at the store); K otherwise."""
        return p.C if self.direction == "bwd_data" and not key.multiplier_two else p.K

    def bucket(self, key: DwKey):
        """(dtype, channels-last, any group count, C/G = 1) of the conv op's ``bucket``."""
        return key.dtype, key.channels_last, None, True

    def _tile_reason(self, key: DwKey, p) -> str | None:
        """Depthwise problems only (C/G = 1); multiplier-one instances need K/G = 1."""
        if p.Cg != 1:
            return f"depthwise kernels need C/G = 1 (C/G={p.Cg})"
        if key.multiplier_one and p.Kg != 1:
            return f"multiplier-one kernel, K/G = {p.Kg}"
        if key.multiplier_two and p.Kg != 2:
            return f"multiplier-two kernel, K/G = {p.Kg}"
        return None

    @functools.lru_cache(maxsize=4096)
    def _hinted_ints(self, key: DwKey) -> tuple[str, ...]:
        """Channel counts and the strides of x and y (16-byte channel vectors)."""
        return tuple(n for n in super()._hinted_ints(key) if n not in ("Cs", "Ks") and not n.startswith("sw"))

    def compile_options(self, key: DwKey):
        return {"num_warps": key.num_warps, "num_stages": key.num_stages}

    def kernel_sets(self):
        from . import sets

        return {"default": lambda arch: sets.default_set(self, arch), "full": lambda arch: sets.full_set(self, arch)}

    def estimate_ms(self, key: DwKey, p, arch: ArchSpec, device: DeviceSpec) -> float:
        from .rules import estimate_ms

        return estimate_ms(self, key, p, arch, device)

    def features(self, key: DwKey) -> dict[str, float]:
        """Tile over pixels × channels, warps, stages, split, the access one-hot, multiplier_one
        and the spatial tile's rows ``block_h`` (0: consecutive pixels); ``multiplier_two`` for
        keys with it only (missing for the rest, so the models trained before the field still
        match)."""
        out = {"block_p": key.block_p, "block_c": key.block_c, "num_warps": key.num_warps,
               "num_stages": key.num_stages, "split": float(getattr(key, "split", 1)),
               "multiplier_one": float(key.multiplier_one), **access_features(key), "block_h": float(key.block_h)}
        if key.multiplier_two:
            out["multiplier_two"] = 1.0
        return out

    def pair_features(self, key: DwKey, p, arch: ArchSpec) -> dict[str, float]:
        """Programs and SM waves of the grid; padding waste of the pixel and channel tiles
        (backward-data: of its stride phases' pixel blocks)."""
        pixels = p.N * (p.pixels if self.direction == "bwd_data" else p.out_pixels)
        chans = self.channels(key, p)
        grid = self.grid(key, p)
        split = getattr(key, "split", 1)
        blocks = self._pixel_blocks(key, p, grid, split)
        return {**wave_features(grid[0] * grid[1] * grid[2], arch.sm_count),
                "pixel_waste": blocks * key.block_p / pixels - 1.0,
                "channel_waste": math.ceil(chans / key.block_c) * key.block_c / chans - 1.0,
                "pixels_per_program": pixels / (grid[0] if self.direction != "bwd_weight" else split)}


class DwFwd(DwFamily):
    """Forward: output pixels × output channels per program; with ``block_h`` the pixels are a
    ``block_h`` × ``block_p / block_h`` patch of one output plane."""

    name = "dw_fwd"
    op = "grouped_conv_fwd"
    direction = "fwd"
    key_cls = DwFwdKey
    tensors = ("x", "w", "y")

    def grid(self, key, p):
        if key.block_h:
            return (spatial_programs(key, p.N, p.as_3d()["out"]), math.ceil(p.K / key.block_c), 1)
        return (math.ceil(p.N * p.out_pixels / key.block_p), math.ceil(p.K / key.block_c), 1)


class DwBwdData(DwFamily):
    """Backward-data: input pixels × input channels per program."""

    name = "dw_bwd_data"
    op = "grouped_conv_bwd_data"
    direction = "bwd_data"
    key_cls = DwBwdDataKey
    tensors = ("dy", "w", "dx")

    def grid(self, key, p):
        """(stride phases × pixel blocks per phase, channel blocks, 1); one phase at unit stride;
        spatial tiles: (tiles of the input planes, channel blocks, 1)."""
        if key.block_h:
            return (spatial_programs(key, p.N, p.as_3d()["spatial"]), math.ceil(self.channels(key, p) / key.block_c), 1)
        phases, rows = stride_phases(p)
        return (phases * math.ceil(rows / key.block_p), math.ceil(self.channels(key, p) / key.block_c), 1)

    def supports(self, key, p):
        return unit_stride_reason(key, p) or super().supports(key, p)


class DwBwdWeight(DwFamily):
    """Backward-weight: channel blocks × splits of the pixel reduction × passes of ``unroll``
    taps, combined in order."""

    name = "dw_bwd_weight"
    op = "grouped_conv_bwd_weight"
    direction = "bwd_weight"
    key_cls = DwBwdWeightKey
    tensors = ("x", "dy", "dw")
    _rows_arg = "P"

    def _pointer_args(self, key):
        ptr = f"*{key.dtype.triton}"
        return {"x_ptr": ptr, "dy_ptr": ptr, "dw_ptr": ptr, "ws_ptr": "*fp32", "lock_ptr": "*i32"}

    def divisible_by_16(self, key):
        base = super().divisible_by_16(key)  # the workspaces are always 16-byte aligned
        return base + tuple(p for p in ("ws_ptr", "lock_ptr") if p not in base)

    def _tensor_of(self, arg):
        return {"ws_ptr": "workspace_partials_f32", "lock_ptr": "workspace_counters_i32"}.get(arg, arg[: -len("_ptr")])

    def launch_args(self, key, p, tensors, *, interpret):
        import torch

        tensors = {**tensors, "workspace_partials_f32": tensors["workspace_partials"].view(torch.float32),
                   "workspace_counters_i32": tensors["workspace_counters"].view(torch.int32)}
        return super().launch_args(key, p, tensors, interpret=interpret)

    def grid(self, key, p):
        return (math.ceil(p.K / key.block_c), key.split, key.passes(p))

    def supports(self, key, p):
        reason = super().supports(key, p)
        blocks = (spatial_programs(key, p.N, p.as_3d()["out"]) if key.block_h
                  else math.ceil(p.N * p.out_pixels / key.block_p))
        if reason is None and blocks < key.split:
            return f"N·output pixels = {p.N * p.out_pixels} make {blocks} pixel blocks, fewer than split={key.split}"
        return reason

    def pair_features(self, key, p, arch):
        """Plus taps per pass (``unroll``) and the passes over the pixels."""
        return {**super().pair_features(key, p, arch), "taps_per_pass": key.unroll,
                "passes": key.passes(p)}

    def workspaces(self, key, p):
        """``partials``: fp32 [channel blocks, split, taps, block_c]; ``counters``: one int32
        arrival count per (channel block, pass), left at zero by the kernel: the last of a
        pass's ``split`` programs sums that pass's taps, so the passes' sums run in parallel
        (``dw_common.reduce_pass``, or ``reduce_pass_scan`` in the 7-tap windows at split <= 16)."""
        blocks = math.ceil(p.K / key.block_c)
        return {"partials": blocks * key.split * p.taps * key.block_c * 4, "counters": 4 * blocks * key.passes(p)}


MAX_WINDOW_COLUMNS = 32
"""Most source column loads one step of a sliding-window kernel may unroll (the default sets
reach 21: 8 columns at stride 2 with 7 taps)."""


class DwWindow(DwFamily):
    """Sliding-window kernels (:class:`DwWindowKey`): ``block_h`` output rows × ``block_w``
    output columns × ``block_c`` channels per program, channels-last only, for problems whose
    last-dimension stride and dilation equal the key's."""

    @property
    def template(self) -> str:
        return f"dw_win_{self.direction}.py.j2"

    fixed: dict[str, tuple[int, str]] = {}
    """Key fields a direction's kernels take one value of: field -> (value, why)."""

    def check(self, key: DwWindowKey, arch):
        """Plus (channels-last comes with ``block_h``): ``block_p`` = ``block_h`` · ``block_w``,
        at most :data:`MAX_WINDOW_COLUMNS` unrolled column loads per step (compile time), and the
        family's :attr:`fixed` fields."""
        reasons = super().check(key, arch)
        reasons += [f"{f}={getattr(key, f)}: {why}" for f, (v, why) in self.fixed.items() if getattr(key, f) != v]
        if key.block_p != key.block_h * key.block_w:
            reasons.append(f"block_p={key.block_p} != block_h·block_w = {key.block_h * key.block_w}")
        if key.columns > MAX_WINDOW_COLUMNS:
            reasons.append(f"{key.columns} column loads per step > {MAX_WINDOW_COLUMNS}")
        if key.max_registers and not (64 <= key.max_registers <= 255 and key.max_registers % 8 == 0):
            reasons.append(f"max_registers={key.max_registers}: 0 (no cap) or a multiple of 8 in [64, 255]")
        return reasons

    def compile_options(self, key: DwWindowKey):
        """Plus Triton's ``maxnreg`` where the key caps registers."""
        return {**super().compile_options(key), **({"maxnreg": key.max_registers} if key.max_registers else {})}

    def supports(self, key, p):
        reason = super().supports(key, p)
        if reason is None and (p.stride[-1], p.dilation[-1]) != (key.stride_w, key.dilation_w):
            return (f"compiled for column stride {key.stride_w} and dilation {key.dilation_w}; the problem's are "
                    f"{p.stride[-1]} and {p.dilation[-1]}")
        return reason

    def _plane(self, p) -> tuple[int, int, int]:
        """The (depth, height, width) plane a program's rows and columns tile."""
        return p.as_3d()["out"]

    def grid(self, key, p):
        d, h, w = self._plane(p)
        return (math.ceil(p.N * d * h / key.block_h) * math.ceil(w / key.block_w),
                math.ceil(self.channels(key, p) / key.block_c), 1)

    def features(self, key):
        """Plus the unrolled output columns ``block_w`` and the source columns of a step; and
        ``max_registers`` for keys with a cap only (missing for the rest, so the models trained
        before the field still match)."""
        out = {**super().features(key), "block_w": float(key.block_w), "window_columns": float(key.columns)}
        if key.max_registers:
            out["max_registers"] = float(key.max_registers)
        return out

    def pair_features(self, key, p, arch):
        """Plus ``loads_per_tap``: source column loads per FMA tile over the filter width (a
        tap-by-tap kernel would have 1; those families do not emit it)."""
        x = p.as_3d()["filter"][2]
        return {**super().pair_features(key, p, arch), "loads_per_tap": key.row_loads(x) / (key.block_w * x)}


class DwWinFwd(DwWindow, DwFwd):
    """Forward: output rows of N·Do·Ho; output channel k reads input channel k // Kg."""

    name = "dw_win_fwd"
    key_cls = DwWindowFwdKey


class DwWinBwdData(DwWindow, DwBwdData):
    """Backward-data, unit stride (:class:`DwBwdData`'s ``supports``), multiplier one or two:
    rows of N·D·H of dx, the forward of dy with the filter flipped."""

    name = "dw_win_bwd_data"
    key_cls = DwWindowBwdDataKey

    fixed = {"stride_w": (1, "backward-data sliding windows are column stride 1")}

    def _plane(self, p):
        return p.as_3d()["spatial"]


class DwWinBwdWeight(DwWindow, DwBwdWeight):
    """Backward-weight (:class:`DwWindowBwdWeightKey`): grid (channel blocks, split, filter
    depth × groups of ``filter_rows`` rows × steps of ``unroll`` taps); a split's share is a range of blocks of
    ``block_h`` rows of N·Do·Ho, each walked in blocks of ``block_w`` output columns. Partials and
    their in-order sum as in :class:`DwBwdWeight`."""

    name = "dw_win_bwd_weight"
    key_cls = DwWindowBwdWeightKey

    fixed = {"num_stages": (1, "backward-weight windows have no flat pipelined loop")}

    def _accumulators(self, key):
        """One tile per tap of the step and filter row and one dy tile per output column, each
        block_h × block_c; 160 per thread (ptxas: 8x8x64 with 7 taps took 168 registers)."""
        return key.unroll * key.filter_rows + key.block_w, key.block_h * key.block_c, 160

    def pair_features(self, key, p, arch):
        """Plus ``tap_waste``: the column tap slots of a filter row's steps past the filter
        width, per tap: each slot holds an accumulator tile, 6 of 7 idle on a 1-wide filter at
        ``unroll`` 7 (the tensor-core windows inherit it). With it the backward-weight model's
        held-out P10 reached 0.923 / 0.922 on fold seeds 0 / 1, against 0.926 / 0.919 without
        (twenty-fifth session)."""
        x = p.as_3d()["filter"][2]
        return {**super().pair_features(key, p, arch), "tap_waste": -(-x // key.unroll) * key.unroll / x - 1.0}

    def features(self, key):
        """Plus ``filter_rows`` where above 1 and ``tree_reduce`` where set (models trained before
        the fields still match)."""
        out = super().features(key)
        if key.filter_rows > 1:
            out["filter_rows"] = float(key.filter_rows)
        if key.tree_reduce:
            out["tree_reduce"] = 1.0
        return out

    def check(self, key, arch):
        """Plus: ``tree_reduce`` sums power-of-two tiles of partials, so ``split`` is a power of two."""
        reasons = super().check(key, arch)
        if key.tree_reduce and key.split & (key.split - 1):
            reasons.append(f"tree_reduce needs a power-of-two split, not {key.split}")
        return reasons

    def _row_blocks(self, key, p) -> int:
        d, h, _ = p.as_3d()["out"]
        return math.ceil(p.N * d * h / key.block_h)

    def _split_units(self, key, p) -> int:
        """The units a split's share is counted in: blocks of ``block_h`` rows."""
        return self._row_blocks(key, p)

    def _split_units_text(self, key, p) -> str:
        """What :meth:`_split_units` counted, for a refusal."""
        d, h, _ = p.as_3d()["out"]
        return f"N·Do·Ho = {p.N * d * h} rows make {self._row_blocks(key, p)} blocks of block_h={key.block_h}"

    def _pixel_blocks(self, key, p, grid, split):
        return math.ceil(self._row_blocks(key, p) / split) * split * math.ceil(p.as_3d()["out"][2] / key.block_w)

    def grid(self, key, p):
        """:class:`DwBwdWeight`'s (DwWindow's comes first in the method order)."""
        return DwBwdWeight.grid(self, key, p)

    def supports(self, key, p):
        """The window rules (column stride and dilation), the family's problems (C/G = 1 for the
        depthwise windows), at least ``split`` units of work (:meth:`_split_units`), and no more
        ``filter_rows`` than the filter has rows."""
        reason = super().supports(key, p)
        if reason is None and key.filter_rows > (rows := p.as_3d()["filter"][1]):
            return f"filter_rows={key.filter_rows} exceeds the filter's {rows} row(s)"
        if reason is None and self._split_units(key, p) < key.split:
            return f"{self._split_units_text(key, p)}, fewer than split={key.split}"
        return reason


class GwWindow:
    """What the tensor-core grouped windows share (:class:`GroupWindowFwdKey`,
    :class:`GroupWindowBwdDataKey`, :class:`GroupWindowBwdWeightKey`): channels-last fp16 / bf16 problems with G > 1 and
    C/G = K/G >= 4 whose groups fit the channel block
    (``block_c`` % (C/G) == 0, so C/G is a power of two); the group blocks of ``block_c`` / (C/G)
    groups are dense in the tiles, so one instance serves every such C/G. The forward and
    backward-data filter tiles load 4 filter channels at a time (backward-weight, which loads no
    filter, keeps the same C/G rule; the first version loaded them one element at a time and ran up to
    1.8x slower than a kernel with C/G compiled in: benchmarks/gw_template_vs_probe.py,
    benchmarks/results/gw_template_vs_probe_access_h100.jsonl). Grid and window rules as the
    depthwise windows of the direction.

    Measured before it became a family (``benchmarks/grouped_direct_probe.py --dot``, one H100,
    2026-11-26): on ResNeXt-50's grouped 3x3 layers (C/G = 4-32, batch 32) 1.47-2.2x faster than
    the implicit-GEMM instances selected then, 0.94-1.25x cuDNN at stride 1 and 0.74x at stride 2
    (benchmarks/results/grouped_direct_probe_dot_h100.jsonl.gz)."""

    def bucket(self, key):
        """(dtype, channels-last, G > 1, C/G > 1) of the conv op's ``bucket``."""
        return key.dtype, True, False, False

    def check(self, key, arch):
        """The window rules, plus: fp16 or bf16 (tensor-core operands in the input dtype), tiles
        of at least 16 rows and 16 channels (``tl.dot``), ``a16`` or ``i32`` access, no channel
        multiplier."""
        reasons = super().check(key, arch)
        if key.dtype not in (DType.FP16, DType.BF16):
            reasons.append(f"dtype {key.dtype.value}: tensor-core windows take fp16 or bf16")
        if key.block_h < 16 or key.block_c < 16:
            reasons.append(f"tl.dot tiles need block_h >= 16 and block_c >= 16, got {key.block_h} and {key.block_c}")
        if key.access.value not in ("a16", "i32"):
            reasons.append(f"access {key.access.value}: tensor-core windows take a16 or i32")
        if key.multiplier_one:
            reasons.append("multiplier_one: grouped windows read a block of input channels per block of outputs")
        return reasons

    def _accumulators(self, key):
        """``block_w`` fp32 tiles of block_h × block_c; 128 registers per thread."""
        return key.block_w, key.block_h * key.block_c, 128

    def _tile_reason(self, key, p):
        """Grouped problems (G > 1: the family's ``bucket``) whose groups fit the block (C/G = K/G
        >= 4, block_c % (C/G) == 0) and
        whose rows fill at least one tile (N·Do·Ho of y forward, N·D·H of dx backward-data, >=
        block_h)."""
        if p.G == 1:
            return "grouped windows need G > 1 (dense problems go to the implicit-GEMM families)"
        if p.Cg < 4:
            return (f"grouped windows need C/G >= 4 (C/G={p.Cg}; filter tiles load 4 input channels at a time; "
                    f"depthwise problems go to the dw families)")
        if p.Kg != p.Cg:
            return f"grouped windows need K/G = C/G (K/G={p.Kg}, C/G={p.Cg})"
        if key.block_c % p.Cg:
            return f"block_c={key.block_c} does not hold whole groups of C/G={p.Cg}"
        d, h, _ = self._plane(p)
        if p.N * d * h < key.block_h:
            # Measured on two H100s in the first version's data (the first data call in
            # benchmarks/results/README.md, fifteenth session): on 1-D problems, whose rows are the
            # N images, tiles mostly empty ran up to 7x slower than the implicit GEMM (N = 1,
            # C/G = 2: 149.7 against 21.4 µs; N = 8, 15 taps: 754 against 125 µs). On that data,
            # refusing only under half a tile scored lower held-out than under a whole tile (mean /
            # P10 0.964 / 0.875 against 0.965 / 0.893, `benchmarks/train_sweep.py`).
            return f"{p.N * d * h} rows (N·depth·height) of the plane fill under one tile of block_h={key.block_h} rows"
        return None

    def features(self, key):
        """Plus ``tensor_cores`` = 1 (the depthwise windows leave it missing)."""
        return {**super().features(key), "tensor_cores": 1.0}

    def pair_features(self, key, p, arch):
        """Plus ``diag_waste``: block_c / (C/G), the multiply-adds issued per useful one in the
        block-diagonal tiles."""
        return {**super().pair_features(key, p, arch), "diag_waste": key.block_c / p.Cg}


class GwWinFwd(GwWindow, DwWinFwd):
    """Grouped forward windows on tensor cores (in the default sets)."""

    name = "gw_win_fwd"
    key_cls = GroupWindowFwdKey
    template = "gw_win_fwd.py.j2"


class GwWinBwdData(GwWindow, DwWinBwdData):
    """Grouped unit-stride backward-data windows on tensor cores: the forward of dy with the
    filter flipped and each group's filter transposed."""

    name = "gw_win_bwd_data"
    key_cls = GroupWindowBwdDataKey
    template = "gw_win_bwd_data.py.j2"


class GwWinBwdWeight(GwWindow, DwWinBwdWeight):
    """Grouped backward-weight windows on tensor cores (:class:`GroupWindowBwdWeightKey`): grid
    and passes as :class:`DwWinBwdWeight`, partials summed in split order per (channel block,
    pass) by the pass's last program; a split's share is a
    range of units of ``block_h`` rows × ``block_w`` output columns walked in one loop that
    Triton pipelines (``num_stages``); a partial holds each tap's block_c × C/G filter values."""

    name = "gw_win_bwd_weight"
    key_cls = GroupWindowBwdWeightKey
    template = "gw_win_bwd_weight.py.j2"
    fixed = {"unroll_rows": (1, "the grouped backward-weight windows have no filter-row loop to unroll")}

    def supports(self, key, p):
        """Plus: partials within :data:`~ck_plugin_grouped_conv.family.MAX_SPLIT_WORKSPACE` (they
        grow with split × the whole filter's values)."""
        reason = super().supports(key, p)
        if reason is None and (need := self.workspaces(key, p)["partials"]) > MAX_SPLIT_WORKSPACE:
            return f"split={key.split} partials need {need} B > {MAX_SPLIT_WORKSPACE} B"
        return reason

    def _split_units(self, key, p):
        """Units of ``block_h`` rows × ``block_w`` output columns."""
        return self._row_blocks(key, p) * math.ceil(p.as_3d()["out"][2] / key.block_w)

    def _split_units_text(self, key, p):
        d, h, w = p.as_3d()["out"]
        return (f"N·Do·Ho = {p.N * d * h} rows × Wo = {w} columns make {self._split_units(key, p)} "
                f"units of block_h={key.block_h} × block_w={key.block_w}")

    def _pixel_blocks(self, key, p, grid, split):
        return math.ceil(self._split_units(key, p) / split) * split

    def _accumulators(self, key):
        """One [block_c, block_c] fp32 tile per tap of the step and filter row; 128 registers
        per thread."""
        return key.unroll * key.filter_rows, key.block_c * key.block_c, 128

    def check(self, key, arch):
        """Plus: no ``tree_reduce`` (the partials are block_c × C/G per tap, summed in split
        order), and a unit's tiles (``block_w`` dy columns and the x columns of each filter row,
        [block_h, block_c] each) times ``num_stages`` within shared memory per block (the
        pipeliner's buffers; Triton refused a 64x4x64 tile at 3 stages: 245760 B)."""
        reasons = super().check(key, arch)
        if key.tree_reduce:
            reasons.append("tree_reduce: grouped backward-weight windows sum their partials in split order")
        smem = key.num_stages * (key.block_w + key.filter_rows * key.columns) * key.block_h * key.block_c * 2
        if key.num_stages > 1 and smem > arch.smem_per_block_bytes:
            reasons.append(f"{key.num_stages} stages of {key.block_w + key.filter_rows * key.columns} tiles of "
                           f"{key.block_h}x{key.block_c} need {smem} B of shared memory > {arch.smem_per_block_bytes}")
        return reasons

    def workspaces(self, key, p):
        """``partials``: fp32 [channel blocks, split, taps, block_c · C/G]; ``counters`` as
        :class:`DwBwdWeight`."""
        return {**super().workspaces(key, p), "partials": math.ceil(p.K / key.block_c) * key.split * p.taps * key.block_c * p.Cg * 4}


FAMILIES = (DwFwd, DwWinFwd, DwBwdData, DwWinBwdData, DwBwdWeight, DwWinBwdWeight, GwWinFwd, GwWinBwdData,
            GwWinBwdWeight)
