"""The ``gemm_streamk`` kernel family: a persistent grid of ``programs`` programs (the SM count
in the default set) shares the GEMM's K steps evenly, whatever the tile count.

- ``hybrid=False`` (``_sk``): every tile's K steps are pooled; program p takes steps
  [p·T/P, (p+1)·T/P). A tile split between programs is fixed up through a workspace: each
  contributor writes its fp32 partial tile, arrives on the tile's counter, and the last to
  arrive sums the partials in program order (bitwise reproducible) and writes C.
- ``hybrid=True`` (``_dp``): whole waves of tiles run data-parallel (each program whole tiles,
  whole K) and only the last one to two waves' worth of tiles are stream-K ("DP + stream-K
  tail"): the tail keeps every SM busy without splitting the bulk of the tiles.

No program waits on another (the last arrival combines), so correctness does not depend on the
programs being resident at once; the interpreter runs them one after another.
Reference: Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix
Multiplication on the GPU", PPoPP 2023 (the schedule; this kernel is written from the paper's
description, not from its code).
"""

from __future__ import annotations

import attrs

from ckcore import DType
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import boolean, int_in
from ck_plugin_gemm.epilogue import variant_suffix
from ck_plugin_gemm.keys import GemmKey
from ck_plugin_gemm.problem import GemmProblem, Layout
from ck_plugin_gemm.rules import estimate_ms
from ck_plugin_gemm.schedule import dp_tiles as _dp_tiles, fixup_ms

from .fixup import FixupGemm, tiles

__all__ = ["StreamKKey", "StreamKGemm", "dp_tiles"]


@attrs.frozen(kw_only=True)
class StreamKKey(GemmKey):
    """A tiled GEMM key plus ``programs`` (the persistent grid) and ``hybrid`` (data-parallel
    waves before the stream-K tail)."""

    programs: int = attrs.field(validator=int_in(1, 4096))
    hybrid: bool = attrs.field(default=True, validator=boolean)

    @property
    def name(self) -> str:
        return (f"gemm_streamk_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
                f"_p{self.programs}_{'dp' if self.hybrid else 'sk'}_g{self.group_m}_w{self.num_warps}"
                f"_s{self.num_stages}" + variant_suffix(self))


def dp_tiles(key: StreamKKey, p: GemmProblem) -> int:
    """Tiles run data-parallel: none for ``_sk``; for ``_dp`` all of them when they fill whole
    waves of ``programs``, else all but the last one to two waves' worth (at least ``programs``
    tiles are left to stream-K, so the tail is spread over every program)."""
    return _dp_tiles(tiles(key, p), key.programs) if key.hybrid else 0


# (block_m, block_n, block_k, num_warps, num_stages): one large and one mid-size tile per dtype
_CFG_16BIT = [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4)]
_CFG_FP32 = [(128, 128, 32, 8, 3), (64, 128, 32, 4, 3)]


class StreamKGemm(FixupGemm):
    """Stream-K GEMM (pointer loads), for tile counts that quantise badly on the SMs."""

    name = "gemm_streamk"
    key_cls = StreamKKey
    template_package = "ck_plugin_stream_k"
    template = "gemm_streamk.py.j2"
    extra_ints = ("DP_TILES",)

    def workspaces(self, key: StreamKKey, p: GemmProblem) -> dict[str, int]:
        """``partials``: two fp32 tiles per program (the first and last tile of its range;
        scratch); ``counters``: one int32 arrival count per stream-K tile, left at zero."""
        return {"partials": key.programs * 2 * key.block_m * key.block_n * 4,
                "counters": 4 * max(1, tiles(key, p) - dp_tiles(key, p))}

    def grid(self, key: StreamKKey, p: GemmProblem) -> tuple[int, int, int]:
        return (key.programs, 1, 1)

    def extra_args(self, key: StreamKKey, p: GemmProblem) -> tuple:
        return (dp_tiles(key, p),)

    def pair_features(self, key: StreamKKey, p: GemmProblem, arch: ArchSpec) -> dict[str, float]:
        """The tiled features, plus the share of tiles run as stream-K."""
        out = super().pair_features(key, p, arch)
        n_tiles = tiles(key, p)
        out["sk_tile_share"] = (n_tiles - dp_tiles(key, p)) / n_tiles
        return out

    def features(self, key: StreamKKey) -> dict[str, float]:
        return {**super().features(key), "programs": float(key.programs), "hybrid": float(key.hybrid)}

    def kernel_sets(self):
        """Only ``full`` for now: the family has not been measured on a GPU yet, and a family
        absent from the tune data would make the ``lightgbm`` gemm model fall back to rules."""
        def full(arch: ArchSpec):
            keys = []
            for dtype in DType:
                for layout in Layout:
                    for bm, bn, bk, w, s in _CFG_FP32 if dtype is DType.FP32 else _CFG_16BIT:
                        for hybrid in (True, False):
                            keys.append(StreamKKey(dtype=dtype, layout=layout, block_m=bm, block_n=bn, block_k=bk,
                                                   num_warps=w, num_stages=s, programs=arch.sm_count, hybrid=hybrid))
            return [k for k in keys if not self.check(k, arch)]

        return {"full": full}

    def estimate_ms(self, key: StreamKKey, p: GemmProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        """The gemm cost model with the work spread evenly over the SMs (no last-wave
        quantisation), plus the fix-up: each split tile's partials written and read once in
        fp32, and 2 µs of arrival and combine. Not yet fitted to measurements."""
        even = estimate_ms(key, p, arch, device, balanced=True)
        split_tiles = tiles(key, p) - dp_tiles(key, p)
        return even + fixup_ms(split_tiles, key.programs, key.block_m, key.block_n, device.mem_bandwidth_gbps)
