"""ckcore: a plugin-based GPU kernel dispatcher.

Operators ship as pluggy plugins (entry-point group ``ckcore``); ckcore renders their Triton
templates, compiles them into a content-addressed cache, selects an instance per problem and
launches it::

    import ckcore
    p = ckcore.problem("gemm", M=1024, N=4096, K=4096, dtype="bf16", layout="rcr")
    c = ckcore.dispatch("gemm", p, a=a, b=b)
"""

from __future__ import annotations

from .errors import (
    CacheError,
    CkError,
    CompileError,
    DeviceError,
    DuplicateOperatorError,
    InvalidKernelKey,
    NoKernelFound,
    PluginError,
    UnknownOperatorError,
    UnsupportedProblem,
)
from .hookspecs import hookimpl
from .keys import KeyBase, ProblemBase
from .spec import Instance, KernelFamily, Operator, Tolerance
from .dtypes import DType
from .settings import Settings
from .registry import Registry, Selection
from .dispatch import default_registry, dispatch, ops, prepack, problem, select

__version__ = "0.1.0"

__all__ = [
    "CacheError",
    "CkError",
    "CompileError",
    "DeviceError",
    "DType",
    "DuplicateOperatorError",
    "Instance",
    "InvalidKernelKey",
    "KernelFamily",
    "KeyBase",
    "NoKernelFound",
    "Operator",
    "PluginError",
    "ProblemBase",
    "Registry",
    "Selection",
    "Settings",
    "Tolerance",
    "UnknownOperatorError",
    "UnsupportedProblem",
    "default_registry",
    "dispatch",
    "hookimpl",
    "ops",
    "prepack",
    "problem",
    "select",
]
