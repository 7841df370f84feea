"""A test plugin for ``ckcore tune``: a ``gemm`` family whose instances behave well, give wrong
results, raise, hang, or fault (a load from a non-canonical address) in the interpreter.

Kernel set ``faulty`` holds one instance per mode (``faulty_fast``: ok, wrong, raise); they support only fp32 ``rrr`` problems with
M, N, K <= 64. Register with ``--plugin-module ckt_faulty`` (``tests/plugins`` on sys.path)."""

from __future__ import annotations

import attrs

from ckcore import hookimpl
from ckcore.keys import member_of
from ck_plugin_gemm.family import TiledGemm
from ck_plugin_gemm.keys import GemmKey

MODES = ("ok", "wrong", "raise", "hang", "fault")


def _mode(instance, attribute, value):
    if value not in MODES:
        from ckcore import InvalidKernelKey

        raise InvalidKernelKey("FaultyKey", [f"mode={value!r}: expected one of {MODES}"])


@attrs.frozen(kw_only=True)
class FaultyKey(GemmKey):
    mode: str = attrs.field(default="ok", validator=_mode)

    @property
    def name(self) -> str:
        return f"gemm_faulty_{self.mode}"


class FaultyFamily(TiledGemm):
    name = "gemm_faulty"
    key_cls = FaultyKey
    template_package = "ckt_faulty"
    template = "faulty.py.j2"

    def kernel_sets(self):
        def keys(modes):
            return lambda arch: [FaultyKey(dtype="fp32", layout="rrr", block_m=64, block_n=64, block_k=64, mode=m)
                                 for m in modes]

        return {"faulty": keys(MODES), "faulty_fast": keys(("ok", "wrong", "raise"))}

    def supports(self, key, p):
        if p.dtype.value != "fp32" or p.layout.value != "rrr" or max(p.M, p.N, p.K) > 64:
            return "faulty test kernels take fp32 rrr problems up to 64"
        return None

    def grid(self, key, p):
        return (1, 1, 1)


@hookimpl
def ck_register_kernel_families(register):
    register(FaultyFamily())
