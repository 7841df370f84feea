"""A tiny real test plugin: a kernel family for op ``gemm`` whose template does not compile.

Used to check negative cache entries and plugin registration. Register it with
``pm.register(ckt_broken.hooks_module, name=...)`` in tests.
"""

from __future__ import annotations

import attrs

from ckcore import hookimpl
from ck_plugin_gemm.family import TiledGemm
from ck_plugin_gemm.keys import GemmKey


@attrs.frozen(kw_only=True)
class BrokenKey(GemmKey):
    @property
    def name(self) -> str:
        return f"gemm_broken_{self.dtype.value}_{self.layout.value}_{self.block_m}"


class BrokenFamily(TiledGemm):
    name = "gemm_broken"
    key_cls = BrokenKey
    template_package = "ckt_broken"
    template = "broken.py.j2"

    def kernel_sets(self):
        return {"broken": lambda arch: [BrokenKey(dtype="bf16", layout="rcr", block_m=64, block_n=64, block_k=32)]}

    def supports(self, key, problem):
        return "never selected"


class Hooks:
    @hookimpl
    def ck_register_kernel_families(self, register):
        register(BrokenFamily())


class DuplicateGemm:
    @hookimpl
    def ck_register_operators(self, register):
        from ck_plugin_gemm.op import GemmOperator

        register(GemmOperator())


class UnknownHook:
    @hookimpl
    def ck_no_such_hook(self):
        pass
