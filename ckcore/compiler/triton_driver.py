"""The ``triton`` compiler driver: ``triton.compile`` for an explicit ``GPUTarget``, no GPU needed.
Rendered sources may define a Triton (``@triton.jit``) or a Gluon (``@gluon.jit``) kernel.

Artifacts: ``kernel.cubin``, ``kernel.json`` (Triton's metadata), ``kernel.ptx`` and
``kernel.ttgir`` (for inspection).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
import tempfile
import types
from pathlib import Path

from ..errors import CompileError
from . import CompileJob

__all__ = ["TritonCompiler", "exec_source"]

_KEEP = {".cubin": "kernel.cubin", ".json": "kernel.json", ".ptx": "kernel.ptx", ".ttgir": "kernel.ttgir"}


def exec_source(name: str, source: str, directory: Path | None = None) -> types.ModuleType:
    """Import rendered ``source`` as a fresh module (written to a file, since Triton reads
    kernel source through ``inspect``)."""
    directory = Path(directory or tempfile.mkdtemp(prefix="ckcore-src-"))
    path = directory / f"{name}.py"
    path.write_text(source)
    mod_name = f"ckcore_kernels.{name}_{os.getpid()}_{id(path)}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


class TritonCompiler:
    """Compiles rendered Triton kernels with ``triton.compile``."""

    name = "triton"

    @functools.cache
    def version(self) -> str:
        import triton

        parts = [f"triton {triton.__version__}"]
        try:
            from triton.backends.nvidia.compiler import get_ptxas_version

            parts.append(f"ptxas {get_ptxas_version()}")
        except Exception:  # ptxas missing: the triton version still pins the bundled one
            pass
        return "; ".join(parts)

    def compile(self, job: CompileJob) -> dict[str, bytes]:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        with tempfile.TemporaryDirectory(prefix="ckcore-compile-") as tmp:
            try:
                module = exec_source(job.name, job.source, Path(tmp))
                fn = getattr(module, job.name)
                names = list(job.signature)
                attrs_ = {(names.index(a),): [["tt.divisibility", 16]] for a in job.divisible_by_16}
                source_cls = ASTSource
                if fn.is_gluon():  # a Gluon kernel (triton.experimental.gluon): its own front end
                    from triton.experimental.gluon._runtime import GluonASTSource as source_cls
                src = source_cls(fn=fn, signature=dict(job.signature), constexprs=dict(job.constexprs), attrs=attrs_)
                compiled = triton.compile(src, target=GPUTarget("cuda", job.cc, 32), options=dict(job.options))
            except Exception as exc:  # Triton raises many types; all mean "this instance does not compile"
                raise CompileError(job.name, job.arch, f"{type(exc).__name__}: {exc}") from None
            out: dict[str, bytes] = {}
            for _, path in compiled.metadata_group.items():
                suffix = Path(path).suffix
                if suffix in _KEEP:
                    out[_KEEP[suffix]] = Path(path).read_bytes()
        if "kernel.cubin" not in out or "kernel.json" not in out:
            raise CompileError(job.name, job.arch, f"triton produced no cubin/metadata (got {sorted(out)})")
        from .. import arch as arch_mod

        shared = json.loads(out["kernel.json"]).get("shared", 0)
        limit = arch_mod.load(job.arch).smem_per_block_bytes
        if shared > limit:
            raise CompileError(job.name, job.arch, f"needs {shared} B of shared memory, {job.arch} allows {limit} B per block")
        return out

    def load(self, job: CompileJob, files: dict[str, Path], fingerprint: str):
        from triton.compiler.compiler import CompiledKernel

        names = list(job.signature)
        src = types.SimpleNamespace(
            signature=dict(job.signature),
            constants={(names.index(k),): v for k, v in job.constexprs.items()},
            fn=types.SimpleNamespace(arg_names=names),
        )
        group = {f"{job.name}.json": str(files["kernel.json"]), f"{job.name}.cubin": str(files["kernel.cubin"])}
        kernel = CompiledKernel(src, group, fingerprint)
        kernel._init_handles()  # load the module now, so the first launch pays nothing extra
        if getattr(kernel.metadata, "global_scratch_size", 0):
            from .scratch import ScratchLaunch

            return ScratchLaunch(kernel, "cuda")
        return kernel
