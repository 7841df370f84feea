"""What the split-K and stream-K families share: a tiled GEMM whose programs combine partial
tiles through an fp32 workspace (``ws_ptr``) and int32 arrival counters (``lock_ptr``), passed
after C; extra integer arguments (``extra_ints``) after the leading dimensions."""

from __future__ import annotations

from typing import Any, Mapping

from ckcore.arch import ArchSpec
from ck_plugin_gemm.family import TiledGemm
from ck_plugin_gemm.keys import GemmKey
from ck_plugin_gemm.problem import GemmProblem
from ck_plugin_gemm.schedule import fixup_args, fixup_signature, tiles

__all__ = ["FixupGemm", "tiles"]


class FixupGemm(TiledGemm):
    """Base of ``gemm_splitk`` and ``gemm_streamk`` (aligned problem class only)."""

    extra_ints: tuple[str, ...] = ()
    batches = False
    halves = False

    def check(self, key: GemmKey, arch: ArchSpec) -> list[str]:
        reasons = super().check(key, arch)
        if not key.aligned:
            reasons.append(f"aligned=False: {self.name} instances assume the aligned problem class")
        return reasons

    def core_signature(self, key: GemmKey) -> dict[str, str]:
        return fixup_signature(super().core_signature(key), {n: "i32" for n in self.extra_ints})

    def divisible_by_16(self, key: GemmKey) -> tuple[str, ...]:
        return super().divisible_by_16(key) + ("ws_ptr", "lock_ptr")

    def workspace_name(self, key: GemmKey) -> str:
        """The fp32 workspace the kernel's ``ws_ptr`` points at."""
        return "partials"

    def extra_args(self, key: GemmKey, p: GemmProblem) -> tuple:
        """Values of :attr:`extra_ints`."""
        return ()

    def core_args(self, key: GemmKey, p: GemmProblem, tensors: Mapping[str, Any], *, interpret: bool) -> tuple:
        return fixup_args(super().core_args(key, p, tensors, interpret=interpret), tensors, self.workspace_name(key),
                          self.extra_args(key, p))
