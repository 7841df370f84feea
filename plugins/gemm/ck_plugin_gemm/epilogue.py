"""Fused epilogues and batching of the ``gemm`` op, shared by every gemm kernel family.

A problem asks for ``C = act(alpha · (A @ B) + beta · C_in + bias + D_0 + ... + D_{n-1})``
(CK's "multi-D" GEMM), all in fp32 before one rounding to the output dtype. A kernel instance
spells the parts it applies in its key's ``epilogue`` field, an identifier such as
``alpha_beta_bcol_d2_gelu`` (``none``: plain ``C = A @ B``), and ``batched`` when it walks a
batch of matrices (grid axis 1). Kernel sets declare plain instances; the registry derives the
variant a problem needs through :meth:`GemmEpilogueMixin.specialize`, so one tile serves every
epilogue and the selection models see the same candidates.

Tensors (torch names): ``c_in`` and ``d0`` ... ``d{n-1}`` have C's shape and strides; ``bias``
is a contiguous vector of length M (``bias="row"``: one value per row of C) or N
(``bias="col"``: one per column, nn.Linear's bias), shared by every matrix of a batch.
"""

from __future__ import annotations

import enum
import functools
import math
from typing import Any, Mapping

import attrs

__all__ = ["Activation", "Bias", "MAX_D", "D_NAMES", "EPILOGUE_TENSORS", "epilogue_name", "parse_epilogue", "fused_parts", "c_inputs",
           "valid_epilogue", "variant_suffix", "GemmEpilogueMixin", "activation_numpy", "activation_torch",
           "default_out", "out_type", "valid_out"]

MAX_D = 4
D_NAMES = tuple(f"d{i}" for i in range(MAX_D))
#: Optional input tensors of the gemm op, in kernel-argument order.
EPILOGUE_TENSORS = ("scale_a", "scale_b", "c_in", "bias") + D_NAMES


class Activation(str, enum.Enum):
    """The activation applied last. ``gelu`` is the exact (erf) form, ``gelu_tanh`` the tanh
    approximation (as ``torch.nn.functional.gelu(approximate="tanh")``)."""

    IDENTITY = "identity"
    RELU = "relu"
    GELU = "gelu"
    GELU_TANH = "gelu_tanh"
    SILU = "silu"
    SIGMOID = "sigmoid"
    TANH = "tanh"


class Bias(str, enum.Enum):
    """``row``: a length-M vector, one value per row of C; ``col``: length N, one per column."""

    NONE = "none"
    ROW = "row"
    COL = "col"


@functools.lru_cache(maxsize=None)
def epilogue_name(*, scale: bool, c_in: bool, bias: Bias, num_d: int, activation: Activation, dequant="none") -> str:
    """The identifier of an epilogue: tokens ``sten``/``srow`` (dequantization scales per tensor
    or per row and column), ``alpha``, ``beta``, ``brow``/``bcol``, ``d{n}`` and the activation,
    in that order, joined by ``_``; ``none`` when it is plain."""
    dequant = getattr(dequant, "value", dequant)
    parts = {"none": [], "tensor": ["sten"], "row": ["srow"]}[dequant]
    parts += (["alpha"] if scale else []) + (["beta"] if c_in else [])
    parts += [f"b{bias.value}"] if bias is not Bias.NONE else []
    parts += [f"d{num_d}"] if num_d else []
    parts += [activation.value] if activation is not Activation.IDENTITY else []
    return "_".join(parts) or "none"


@functools.lru_cache(maxsize=None)
def parse_epilogue(name: str) -> dict[str, Any] | None:
    """The parts of an epilogue identifier (inverse of :func:`epilogue_name`), None if invalid."""
    spec = {"dequant": "none", "scale": False, "c_in": False, "bias": Bias.NONE, "num_d": 0,
            "activation": Activation.IDENTITY}
    if name == "none":
        return spec
    rest = name
    for token, field, value in (("sten", "dequant", "tensor"), ("srow", "dequant", "row"), ("alpha", "scale", True), ("beta", "c_in", True), ("brow", "bias", Bias.ROW),
                                ("bcol", "bias", Bias.COL)):
        if rest == token or rest.startswith(token + "_"):
            spec[field] = value
            rest = rest[len(token) + 1:]
    for n in range(1, MAX_D + 1):
        if rest == f"d{n}" or rest.startswith(f"d{n}_"):
            spec["num_d"] = n
            rest = rest[len(f"d{n}") + 1:]
    if rest:
        try:
            spec["activation"] = Activation(rest)
        except ValueError:
            return None
        if spec["activation"] is Activation.IDENTITY:
            return None
    return spec if epilogue_name(**spec) == name else None


def fused_parts(name: str) -> bool:
    """Whether epilogue ``name`` does more than dequantization scaling (alpha, C_in, bias, D
    tensors or an activation)."""
    spec = parse_epilogue(name)
    return spec is not None and (spec["scale"] or spec["c_in"] or spec["bias"] is not Bias.NONE or spec["num_d"] > 0
                                 or spec["activation"] is not Activation.IDENTITY)


def c_inputs(name: str) -> int:
    """C-shaped tensors epilogue ``name`` reads: C_in (beta) and the D tensors."""
    spec = parse_epilogue(name)
    return 0 if spec is None else int(spec["c_in"]) + spec["num_d"]


def valid_epilogue(instance, attribute, value):
    """attrs validator of a key's ``epilogue`` field."""
    from ckcore.keys import _fail

    if not isinstance(value, str) or parse_epilogue(value) is None:
        _fail(instance, attribute.name, value,
              f"'none' or tokens alpha, beta, brow|bcol, d1..d{MAX_D}, an activation "
              f"({', '.join(a.value for a in Activation if a is not Activation.IDENTITY)}), in that order, joined by '_'")


def valid_out(instance, attribute, value):
    """attrs validator of a key's ``out_dtype`` field: ``same`` or an output type."""
    from ckcore.keys import _fail

    from .quant import OutType

    if value != "same" and value not in {o.value for o in OutType}:
        _fail(instance, attribute.name, value, f"'same' or one of {', '.join(o.value for o in OutType)}")


def variant_suffix(key) -> str:
    """The name suffix of a key's output type, epilogue and batching ('' for a plain key)."""
    suffix = "" if key.out_dtype == "same" else f"_o{key.out_dtype}"
    suffix += "_fastacc" if key.fast_accum else ""
    suffix += "" if key.epilogue == "none" else f"_{key.epilogue}"
    return suffix + ("_batched" if key.batched else "")


def activation_numpy(name: Activation, x):
    """The activation on a float64 NumPy array (the reference)."""
    import numpy as np

    if name is Activation.IDENTITY:
        return x
    if name is Activation.RELU:
        return np.maximum(x, 0.0)
    if name is Activation.GELU:
        from math import erf

        return 0.5 * x * (1.0 + np.vectorize(erf, otypes=[np.float64])(x / math.sqrt(2.0)))
    if name is Activation.GELU_TANH:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if name is Activation.SILU:
        return x / (1.0 + np.exp(-x))
    if name is Activation.SIGMOID:
        return 1.0 / (1.0 + np.exp(-x))
    return np.tanh(x)


def activation_torch(name: Activation, x):
    """The activation as PyTorch computes it, in place where torch allows (the unfused baseline)."""
    import torch.nn.functional as F

    return {Activation.IDENTITY: lambda t: t, Activation.RELU: lambda t: F.relu(t, inplace=True),
            Activation.GELU: F.gelu, Activation.GELU_TANH: lambda t: F.gelu(t, approximate="tanh"),
            Activation.SILU: lambda t: F.silu(t, inplace=True), Activation.SIGMOID: lambda t: t.sigmoid_(),
            Activation.TANH: lambda t: t.tanh_()}[name](x)


class GemmEpilogueMixin:
    """What every gemm family does about epilogues and batching: derive the variant a problem
    needs from a plain key, reject a variant that is not the problem's, and append the kernel
    arguments (after the family's own, in :data:`EPILOGUE_TENSORS` order, then the batch strides).

    A family that cannot walk a batch sets ``batches = False``: it rejects ``batch > 1``.
    """

    batches: bool = True

    def specialize(self, key, p):
        """``key`` with ``p``'s epilogue and batching, if ``key`` is plain; else ``key``."""
        if key.epilogue != "none" or key.batched or key.out_dtype != "same" or key.fast_accum:
            return key
        want, batched = p.epilogue, p.batch > 1 and self.batches
        out = "same" if p.out is default_out(key.dtype) else p.out.value
        if want == "none" and not batched and out == "same" and not p.fast_accum:
            return key
        return _evolve(key, want, batched, out, p.fast_accum)

    def variant_reason(self, key, p) -> str | None:
        """Why ``key``'s epilogue or batching is not ``p``'s, or None."""
        if key.epilogue != p.epilogue:
            return f"epilogue {key.epilogue} != the problem's {p.epilogue}"
        if key.fast_accum != p.fast_accum:
            return f"fast_accum={key.fast_accum} but the problem's is {p.fast_accum}"
        if out_type(key) is not p.out:
            return f"out_dtype {out_type(key).value} != the problem's {p.out.value}"
        if p.batch > 1 and not self.batches:
            return f"batch={p.batch}: {self.name} kernels take one matrix"
        if key.batched != (p.batch > 1):
            return f"batched={key.batched} but the problem's batch is {p.batch}"
        return None

    def variant_signature(self, key, ptr: str) -> dict[str, str]:
        """Kernel parameters of the epilogue and the batch, after the family's own."""
        spec = parse_epilogue(key.epilogue)
        sig: dict[str, str] = {}
        if key.epilogue != "none":
            if spec["dequant"] != "none":
                sig.update({"scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32"})
            sig.update({"alpha": "fp32", "beta": "fp32"})
            if spec["c_in"]:
                sig["c_in_ptr"] = ptr
            if spec["bias"] is not Bias.NONE:
                sig["bias_ptr"] = ptr
            sig.update({f"d{i}_ptr": ptr for i in range(spec["num_d"])})
        if key.batched:
            sig.update({"stride_a": "i64", "stride_b": "i64", "stride_c": "i64"})
        return sig

    def variant_args(self, key, p, tensors: Mapping[str, Any]) -> tuple:
        """Values of :meth:`variant_signature`'s parameters: ``<name>_ptr`` is tensor ``<name>``,
        the scalars are the problem's fields."""
        return tuple(tensors[name[:-4]] if name.endswith("_ptr") else
                     float(getattr(p, name)) if name in ("alpha", "beta") else getattr(p, name)
                     for name in self.variant_signature(key, "*"))


@functools.lru_cache(maxsize=None)
def default_out(dtype):
    """C's type when a key says ``out_dtype="same"``: the input type, int32 for int8, bf16 for fp8."""
    from .quant import DEFAULT_OUT, OutType

    return DEFAULT_OUT.get(dtype, None) or OutType(dtype.value)


def out_type(key):
    """The resolved output type of a key (an :class:`~ck_plugin_gemm.quant.OutType`)."""
    from .quant import OutType

    return default_out(key.dtype) if key.out_dtype == "same" else OutType(key.out_dtype)


@functools.lru_cache(maxsize=4096)
def _evolve(key, epilogue: str, batched: bool, out: str, fast_accum: bool):
    return attrs.evolve(key, epilogue=epilogue, batched=batched, out_dtype=out, fast_accum=fast_accum)
