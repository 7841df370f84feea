"""The ``softmax_rows`` kernel family: one program per row; single pass when the row fits one
block (``BLOCK_N >= cols``), otherwise an online-softmax pass for max and sum and a second pass
that writes the output."""

from __future__ import annotations

import math
from typing import Any, Mapping

import attrs

from ckcore import DType, KernelFamily, KeyBase
from ckcore.arch import ArchSpec, DeviceSpec
from ckcore.keys import boolean, enum_converter, member_of, power_of_two_in

from .problem import SoftmaxProblem


@attrs.frozen(kw_only=True)
class SoftmaxKey(KeyBase):
    """dtype, block of columns per step, warps, and single- or two-pass schedule."""

    dtype: DType = attrs.field(converter=enum_converter(DType), validator=member_of(DType))
    block_n: int = attrs.field(validator=power_of_two_in(32, 32768))
    num_warps: int = attrs.field(default=4, validator=power_of_two_in(1, 32))
    single_pass: bool = attrs.field(default=True, validator=boolean)

    @property
    def name(self) -> str:
        return f"softmax_rows_{self.dtype.value}_n{self.block_n}_w{self.num_warps}_{'1pass' if self.single_pass else '2pass'}"


_DEFAULT = [(256, 2, True), (1024, 4, True), (4096, 8, True), (16384, 16, True), (1024, 4, False)]


class SoftmaxRows(KernelFamily):
    name = "softmax_rows"
    op = "softmax"
    key_cls = SoftmaxKey
    template_package = "ck_plugin_softmax"
    template = "softmax_rows.py.j2"

    def check(self, key: SoftmaxKey, arch: ArchSpec) -> list[str]:
        reasons = []
        if key.num_warps * 32 > arch.max_threads_per_block:
            reasons.append(f"num_warps {key.num_warps} > {arch.max_threads_per_block // 32} on {arch.arch}")
        if key.block_n // (32 * key.num_warps) > 128:
            reasons.append(f"{key.block_n // (32 * key.num_warps)} fp32 values per thread > 128 (registers)")
        return reasons

    def supports(self, key: SoftmaxKey, p: SoftmaxProblem) -> str | None:
        if key.dtype is not p.dtype:
            return f"dtype {key.dtype.value} != {p.dtype.value}"
        if key.single_pass and p.cols > key.block_n:
            return f"single pass needs cols <= {key.block_n} (cols={p.cols})"
        return None

    def signature(self, key: SoftmaxKey) -> dict[str, str]:
        ptr = f"*{key.dtype.triton}"
        return {"x_ptr": ptr, "y_ptr": ptr, "cols": "i32", "ldx": "i64", "ldy": "i64"}

    def compile_options(self, key: SoftmaxKey) -> dict[str, Any]:
        return {"num_warps": key.num_warps, "num_stages": 1}

    def grid(self, key: SoftmaxKey, p: SoftmaxProblem) -> tuple[int, int, int]:
        return (p.rows, 1, 1)

    def launch_args(self, key: SoftmaxKey, p: SoftmaxProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        return (tensors["x"], tensors["y"], p.cols, p.ldx, p.ldy)

    def kernel_sets(self):
        def default(arch: ArchSpec):
            keys = [SoftmaxKey(dtype=d, block_n=n, num_warps=w, single_pass=s) for d in DType for n, w, s in _DEFAULT]
            return [k for k in keys if not self.check(k, arch)]

        return {"default": default}

    def estimate_ms(self, key: SoftmaxKey, p: SoftmaxProblem, arch: ArchSpec, device: DeviceSpec) -> float:
        """Bytes over bandwidth (x read once, twice for two passes; y written once; masked lanes
        move nothing) or lane issue time (every lane of a block costs an issue slot: about
        128 lanes per SM per cycle at ~1.7 GHz), whichever is larger; fewer rows than SMs leave
        bandwidth idle."""
        passes = 1 if key.single_pass else 2
        nbytes = p.rows * (passes + 1) * p.cols * p.dtype.itemsize
        lanes = p.rows * (passes + 1) * key.block_n * math.ceil(p.cols / key.block_n)
        busy = min(1.0, p.rows / arch.sm_count)
        memory = nbytes / (device.mem_bandwidth_gbps * 1e9 * busy)
        issue = lanes / (arch.sm_count * busy * 128 * 1.7e9)
        # The issue term also breaks ties between memory-bound blocks: the smallest block that fits wins.
        return (max(memory, issue) + 0.1 * issue) * 1e3 + 0.004
