"""Hardware facts per GPU architecture, loaded from the packaged ``arch_specs/*.json``.

Validity rules read only these objects. :func:`detect` asks torch for the current device's
compute capability; importing this module never touches CUDA.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

import attrs

from .errors import UnsupportedProblem

__all__ = ["ArchSpec", "DeviceSpec", "load", "known", "detect"]


@attrs.frozen(kw_only=True)
class DeviceSpec:
    """One product of an architecture: peak dense TFLOP/s per dtype and memory bandwidth (GB/s)."""

    name: str
    match: tuple[str, ...] = attrs.field(converter=tuple)
    peak_tflops: dict = attrs.field(eq=False, hash=False)
    mem_bandwidth_gbps: float


@attrs.frozen(kw_only=True)
class ArchSpec:
    """An architecture (``sm_90``...): SM count, shared memory per block (bytes), registers,
    warps, tensor-core dtypes, TMA / wgmma availability, and its devices' peaks."""

    arch: str
    compute_capability: tuple[int, int] = attrs.field(converter=tuple)
    family: str
    sm_count: int
    smem_per_block_bytes: int
    smem_per_sm_bytes: int
    regs_per_sm: int
    max_regs_per_thread: int
    max_warps_per_sm: int
    max_threads_per_block: int
    l2_bytes: int
    tensor_core_dtypes: tuple[str, ...] = attrs.field(converter=tuple)
    mma_min_k: dict = attrs.field(eq=False, hash=False)
    tma: bool
    wgmma: bool
    devices: tuple[DeviceSpec, ...] = attrs.field(converter=tuple, eq=False, hash=False)
    default_device: str
    sources: tuple[str, ...] = attrs.field(converter=tuple, eq=False, hash=False)

    @property
    def cc(self) -> int:
        """Compute capability as one integer (``90`` for sm_90), as Triton's GPUTarget wants."""
        return self.compute_capability[0] * 10 + self.compute_capability[1]

    def device(self, name: str | None = None) -> DeviceSpec:
        """The device entry whose match strings occur in ``name`` (a torch device name);
        the architecture's default device if ``name`` is None or matches nothing."""
        if name:
            for dev in self.devices:
                if any(m.lower() in name.lower() for m in dev.match):
                    return dev
        return next(d for d in self.devices if d.name == self.default_device)


def _spec_dir():
    """The packaged ``ckcore.arch_specs`` data (wheel), else the source tree's ``arch_specs/``
    (a checkout on ``sys.path``, where the package-dir mapping does not apply)."""
    try:
        return resources.files("ckcore.arch_specs")
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "arch_specs"


@functools.cache
def _load(arch: str) -> ArchSpec:
    path = _spec_dir().joinpath(f"{arch}.json")
    if not path.is_file():
        raise UnsupportedProblem("arch", arch, f"one of {', '.join(known())}")
    data = json.loads(path.read_text())
    data["devices"] = [DeviceSpec(name=k, **v) for k, v in data["devices"].items()]
    return ArchSpec(**data)


def load(arch: str) -> ArchSpec:
    """The :class:`ArchSpec` of ``arch`` (``"sm_90"``; ``"90"`` and ``"sm90"`` are accepted).

    :raises UnsupportedProblem: unknown architecture.
    """
    arch = str(arch).strip().lower()
    if not arch.startswith("sm_"):
        arch = "sm_" + arch.removeprefix("sm")
    return _load(arch)


def known() -> list[str]:
    """Names of the packaged architectures."""
    return sorted(p.name[:-5] for p in _spec_dir().iterdir() if p.name.endswith(".json"))


def detect() -> tuple[ArchSpec, str] | None:
    """The current CUDA device's (ArchSpec, device name), or None without a usable GPU.

    Initialises CUDA through torch; call only when a launch is imminent.
    """
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return load(f"sm_{major}{minor}"), torch.cuda.get_device_name()
