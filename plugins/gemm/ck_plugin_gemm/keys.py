"""The key of the ``gemm_tiled`` kernel family."""

from __future__ import annotations

import attrs

from ckcore import DType, KeyBase
from ckcore.keys import boolean, enum_converter, int_in, member_of, power_of_two_in

from .epilogue import valid_epilogue, valid_out, variant_suffix
from .quant import QuantType, element_type, valid_element_type
from .problem import Layout

__all__ = ["GemmKey"]


@attrs.frozen(kw_only=True)
class GemmKey(KeyBase):
    """One tiled GEMM kernel: dtype, layout, block M/N/K, group-M ordering, warps, stages, and
    ``aligned`` (assumes 16-byte-aligned pointers, leading dimensions and contiguous sizes
    divisible by 16, 32-bit offsets) versus the generic fallback (no assumptions, 64-bit offsets).
    ``epilogue``, ``batched`` and ``out_dtype`` name the fused epilogue, batching and output type
    compiled in (see :mod:`ck_plugin_gemm.epilogue`; ``same``: the input type, int32 for int8 and
    bf16 for fp8 inputs); kernel sets declare plain keys and the registry derives the others.
    ``halves`` (``_h2``, tiled family only): the tile's rows are two halves of BLOCK_M / 2, each
    with its own accumulator and dot. With fp8's promoted accumulation each half's partial sum is
    added to its accumulator by CUDA cores, and the other half's MMAs can run meanwhile (a
    single-accumulator kernel waits for its MMAs before every promotion)."""

    dtype: DType | QuantType = attrs.field(converter=element_type, validator=valid_element_type)
    layout: Layout = attrs.field(converter=enum_converter(Layout), validator=member_of(Layout))
    block_m: int = attrs.field(validator=power_of_two_in(16, 256))
    block_n: int = attrs.field(validator=power_of_two_in(16, 256))
    block_k: int = attrs.field(validator=power_of_two_in(16, 256))
    group_m: int = attrs.field(default=8, validator=power_of_two_in(1, 16))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 16))
    num_stages: int = attrs.field(default=3, validator=int_in(1, 8))
    aligned: bool = attrs.field(default=True, validator=boolean)
    epilogue: str = attrs.field(default="none", validator=valid_epilogue)
    batched: bool = attrs.field(default=False, validator=boolean)
    out_dtype: str = attrs.field(default="same", validator=valid_out)
    fast_accum: bool = attrs.field(default=False, validator=boolean)
    halves: bool = attrs.field(default=False, validator=boolean)

    @property
    def name(self) -> str:
        return (
            f"gemm_tiled_{self.dtype.value}_{self.layout.value}_{self.block_m}x{self.block_n}x{self.block_k}"
            f"_g{self.group_m}_w{self.num_warps}_s{self.num_stages}{'_h2' if self.halves else ''}"
            f"_{'a16' if self.aligned else 'generic'}" + variant_suffix(self)
        )
