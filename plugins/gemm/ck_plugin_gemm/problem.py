"""The ``gemm`` problem: C[M,N] = A[M,K] @ B[K,N], fp32 accumulation.

Layouts spell A, B, C as ``r`` (row-major) or ``c`` (column-major): ``rcr`` is nn.Linear's
forward (B is a [N,K] row-major weight read as its transpose). Leading dimensions (``lda``,
``ldb``, ``ldc``, in elements) default to packed storage. ``ptr_align`` is the byte alignment
every base pointer is known to have (16 for fresh torch allocations).

Fused epilogue (see :mod:`ck_plugin_gemm.epilogue`): ``C = act(alpha · (A @ B) + beta · C_in +
bias + D_0 + ... + D_{num_d-1})``. Batched GEMM: ``batch`` matrices, ``stride_a``, ``stride_b``,
``stride_c`` elements apart (``stride_a`` or ``stride_b`` 0: one matrix shared by the batch).
"""

from __future__ import annotations

import enum
import math

import attrs

from ckcore import DType, ProblemBase, UnsupportedProblem
from ckcore.keys import boolean, canonical, enum_converter, int_in, member_of, positive_int

from .epilogue import MAX_D, Activation, Bias, D_NAMES, epilogue_name
from .quant import DEFAULT_OUT, OutType, QuantType, Scale, element_type, valid_element_type

__all__ = ["Layout", "GemmProblem", "MAX_DIM"]

MAX_DIM = 2**31 - 1


class Layout(str, enum.Enum):
    """Storage order of A, B and C (C is always row-major)."""

    RCR = "rcr"
    RRR = "rrr"
    CRR = "crr"
    CCR = "ccr"

    @property
    def a(self) -> str:
        return self.value[0]

    @property
    def b(self) -> str:
        return self.value[1]


def _dim(instance, attribute, value):
    positive_int(instance, attribute, value)
    if value > MAX_DIM:
        raise UnsupportedProblem(attribute.name, value, f"at most {MAX_DIM}", op="gemm")


def _optional_ld(instance, attribute, value):
    if value is not None:
        positive_int(instance, attribute, value)


def _finite(instance, attribute, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnsupportedProblem(attribute.name, value, "a finite number", op="gemm")


def _optional_stride(instance, attribute, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise UnsupportedProblem(attribute.name, value, "an integer >= 0 (elements between matrices of the batch)", op="gemm")


def _out_type(instance, attribute, value):
    if value is not None and not isinstance(value, OutType):
        raise UnsupportedProblem(attribute.name, value, f"None or one of {', '.join(o.value for o in OutType)}", op="gemm")


def _ptr_align(instance, attribute, value):
    if value not in (1, 2, 4, 8, 16):
        raise UnsupportedProblem(attribute.name, value, "one of 1, 2, 4, 8, 16 (bytes)", op="gemm")


@attrs.frozen(kw_only=True, cache_hash=True)  # hashed once: it keys every per-dispatch memo
class GemmProblem(ProblemBase):
    """C[M,N] = A[M,K] @ B[K,N].

    :ivar M, N, K: sizes, 1 <= size < 2**31.
    :ivar dtype: ``fp16``, ``bf16`` or ``fp32`` (fp32 runs on tensor cores as tf32); quantized:
        ``int8``, ``fp8e4m3``, ``fp8e5m2`` (layout ``rcr``; ``rrr`` runs on a K-major copy of B,
        :meth:`GemmOperator.staging`; see :mod:`ck_plugin_gemm.quant`).
    :ivar out_dtype: C's type: the input type for fp16/bf16/fp32 (None: that); for int8 ``int32``
        (default), ``fp16``, ``bf16`` or ``fp32``; for fp8 ``bf16`` (default), ``fp16`` or ``fp32``.
    :ivar scale: dequantization scales ``none``, ``tensor`` or ``row`` (tensors ``scale_a``, ``scale_b``, fp32).
    :ivar fast_accum: fp8 only: let the tensor cores' accumulator run the whole K loop without
        promotion to fp32 (as ``torch._scaled_mm(use_fast_accum=True)``): faster, less accurate.
    :ivar layout: ``rcr``, ``rrr``, ``crr`` or ``ccr``.
    :ivar lda, ldb, ldc: leading dimensions in elements (None: packed).
    :ivar ptr_align: byte alignment of every base pointer (default 16).
    :ivar alpha, beta: fp32 scales of A @ B and of ``c_in`` (``beta`` 0: no ``c_in`` tensor).
    :ivar bias: ``none``, ``row`` (a length-M vector) or ``col`` (length N).
    :ivar num_d: number of extra tensors ``d0``... of C's shape added (0 to 4).
    :ivar activation: ``identity``, ``relu``, ``gelu`` (erf), ``gelu_tanh``, ``silu``, ``sigmoid``, ``tanh``.
    :ivar batch: number of matrices (default 1); tensors gain a leading batch dimension.
    :ivar stride_a, stride_b, stride_c: elements between consecutive matrices (None: packed;
        0 allowed for A and B, which the batch then shares; C_in and D tensors use ``stride_c``).
    :raises UnsupportedProblem: any field out of range, naming the field.
    """

    op = "gemm"

    M: int = attrs.field(validator=_dim)
    N: int = attrs.field(validator=_dim)
    K: int = attrs.field(validator=_dim)
    dtype: DType | QuantType = attrs.field(converter=element_type, validator=valid_element_type)
    layout: Layout = attrs.field(converter=enum_converter(Layout), validator=member_of(Layout))
    lda: int | None = attrs.field(default=None, validator=_optional_ld)
    ldb: int | None = attrs.field(default=None, validator=_optional_ld)
    ldc: int | None = attrs.field(default=None, validator=_optional_ld)
    ptr_align: int = attrs.field(default=16, validator=_ptr_align)
    alpha: float = attrs.field(default=1.0, validator=_finite)
    beta: float = attrs.field(default=0.0, validator=_finite)
    bias: Bias = attrs.field(default=Bias.NONE, converter=enum_converter(Bias), validator=member_of(Bias))
    num_d: int = attrs.field(default=0, validator=int_in(0, MAX_D))
    activation: Activation = attrs.field(default=Activation.IDENTITY, converter=enum_converter(Activation),
                                         validator=member_of(Activation))
    batch: int = attrs.field(default=1, validator=_dim)
    stride_a: int | None = attrs.field(default=None, validator=_optional_stride)
    stride_b: int | None = attrs.field(default=None, validator=_optional_stride)
    stride_c: int | None = attrs.field(default=None, validator=_optional_stride)
    out_dtype: OutType | None = attrs.field(default=None, converter=enum_converter(OutType), validator=_out_type)
    scale: Scale = attrs.field(default=Scale.NONE, converter=enum_converter(Scale), validator=member_of(Scale))
    fast_accum: bool = attrs.field(default=False, validator=boolean)

    #: Fields left out of :meth:`to_dict` and :attr:`name` while they hold these defaults, so
    #: plain problems keep their spelling (datasets, models and suites predate them).
    _DEFAULTS = {"alpha": 1.0, "beta": 0.0, "bias": "none", "num_d": 0, "activation": "identity", "batch": 1,
                 "scale": "none", "fast_accum": False}

    def __attrs_post_init__(self):
        self._check_types()
        packed = self.packed_ld()
        for field, least in packed.items():
            value = getattr(self, field)
            if value is None:
                object.__setattr__(self, field, least)
            elif value < least:
                raise UnsupportedProblem(field, value, f">= {least} for layout {self.layout.value}", op="gemm")
        spans = self.matrix_spans()
        for field in ("stride_a", "stride_b", "stride_c"):
            if self.batch == 1:
                if getattr(self, field) is not None:
                    raise UnsupportedProblem(field, getattr(self, field), "unset (None) when batch is 1", op="gemm")
                continue
            if getattr(self, field) is None:
                object.__setattr__(self, field, spans[field[-1]])
        if self.batch > 1 and self.stride_c < spans["c"]:
            raise UnsupportedProblem("stride_c", self.stride_c, f">= {spans['c']} (M * ldc: the matrices of C may not overlap)", op="gemm")

    def _check_types(self):
        quant = isinstance(self.dtype, QuantType)
        if self.out_dtype is None:
            object.__setattr__(self, "out_dtype", DEFAULT_OUT[self.dtype] if quant else OutType(self.dtype.value))
        if not quant and self.out_dtype.value != self.dtype.value:
            raise UnsupportedProblem("out_dtype", self.out_dtype.value, f"None or {self.dtype.value} (the input type; "
                                     "mixed output types are for int8 and fp8 inputs)", op="gemm")
        if quant and self.layout not in (Layout.RCR, Layout.RRR):
            raise UnsupportedProblem("layout", self.layout.value, f"rcr for {self.dtype.value} inputs (both operands "
                                     "K-major, as torch._scaled_mm and torch._int_mm take them), or rrr (a row-major "
                                     "B, which runs on a K-major copy: staged per call or packed once with "
                                     "ckcore.prepack)", op="gemm")
        if quant and self.layout is Layout.RRR and self.batch != 1:
            raise UnsupportedProblem("batch", self.batch, f"1 for {self.dtype.value} with layout rrr (B runs on a K-major "
                                     "copy, made per problem)", op="gemm")
        if self.fast_accum and self.dtype not in (QuantType.FP8E4M3, QuantType.FP8E5M2):
            raise UnsupportedProblem("fast_accum", True, "False (fast accumulation is for fp8 inputs)", op="gemm")
        if self.out_dtype is OutType.INT32:
            if self.dtype is not QuantType.INT8:
                raise UnsupportedProblem("out_dtype", "int32", "int32 only for int8 inputs", op="gemm")
            if self.scale is not Scale.NONE or (self.alpha, self.beta, self.num_d) != (1.0, 0.0, 0) \
                    or self.bias is not Bias.NONE or self.activation is not Activation.IDENTITY:
                raise UnsupportedProblem("out_dtype", "int32", "a float out_dtype for scales or a fused epilogue "
                                         "(int32 output is the exact integer product)", op="gemm")

    @property
    def out(self) -> OutType:
        """C's element type (``out_dtype``, resolved)."""
        return self.out_dtype

    def matrix_spans(self) -> dict[str, int]:
        """Elements one packed matrix of A, B, C spans with the leading dimensions."""
        return {"a": (self.M if self.layout.a == "r" else self.K) * self.lda,
                "b": (self.K if self.layout.b == "r" else self.N) * self.ldb, "c": self.M * self.ldc}

    @property
    def epilogue(self) -> str:
        """The epilogue identifier (:func:`~ck_plugin_gemm.epilogue.epilogue_name`): ``none`` for plain C = A @ B."""
        return epilogue_name(dequant=self.scale, scale=self.alpha != 1.0, c_in=self.beta != 0.0, bias=self.bias,
                             num_d=self.num_d, activation=self.activation)

    def epilogue_tensors(self) -> tuple[str, ...]:
        """Names of the extra input tensors this problem reads: ``scale_a``, ``scale_b``, ``c_in``, ``bias``, ``d0``..."""
        return (("scale_a", "scale_b") if self.scale is not Scale.NONE else ()) + (("c_in",) if self.beta != 0.0 else ()) + (("bias",) if self.bias is not Bias.NONE else ()) + D_NAMES[:self.num_d]

    def to_dict(self) -> dict:
        """The fields in canonical form; epilogue and batch fields only where they differ from plain."""
        out = canonical(self)
        for field, default in self._DEFAULTS.items():
            if out[field] == default:
                del out[field]
        if out["out_dtype"] == (DEFAULT_OUT[self.dtype].value if isinstance(self.dtype, QuantType) else out["dtype"]):
            del out["out_dtype"]
        if self.batch == 1:
            for field in ("stride_a", "stride_b", "stride_c"):
                del out[field]
        return out

    def packed_ld(self) -> dict[str, int]:
        """The smallest legal leading dimensions (those of packed storage)."""
        return {
            "lda": self.K if self.layout.a == "r" else self.M,
            "ldb": self.N if self.layout.b == "r" else self.K,
            "ldc": self.N,
        }

    @property
    def name(self) -> str:
        s = f"gemm_{self.dtype.value}_{self.layout.value}_M{self.M}_N{self.N}_K{self.K}"
        for field, packed in self.packed_ld().items():
            if getattr(self, field) != packed:
                s += f"_{field}{getattr(self, field)}"
        if self.ptr_align != 16:
            s += f"_pa{self.ptr_align}"
        if isinstance(self.dtype, QuantType) and self.out is not DEFAULT_OUT[self.dtype]:
            s += f"_o{self.out.value}"
        if self.fast_accum:
            s += "_fastacc"
        if self.epilogue != "none":
            s += f"_{self.epilogue}"
            if self.alpha != 1.0 or self.beta != 0.0:
                s += f"_a{self.alpha:g}_b{self.beta:g}".replace("-", "m").replace(".", "p").replace("+", "")
        if self.batch > 1:
            s += f"_x{self.batch}"
            spans = self.matrix_spans()
            for field in ("stride_a", "stride_b", "stride_c"):
                if getattr(self, field) != spans[field[-1]]:
                    s += f"_s{field[-1]}{getattr(self, field)}"
        return s

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides (elements) of the logical [M,K], [K,N], [M,N] views of A, B, C (with a leading
        batch stride when ``batch > 1``), and of the epilogue tensors: C_in and D as C, bias (1,)."""
        a = (self.lda, 1) if self.layout.a == "r" else (1, self.lda)
        b = (self.ldb, 1) if self.layout.b == "r" else (1, self.ldb)
        out = {"a": a, "b": b, "c": (self.ldc, 1)}
        if self.batch > 1:
            out = {n: (getattr(self, f"stride_{n}"), *s) for n, s in out.items()}
        out.update({n: out["c"] for n in self.epilogue_tensors() if n not in ("bias", "scale_a", "scale_b")})
        if self.bias is not Bias.NONE:
            out["bias"] = (1,)
        if self.scale is not Scale.NONE:
            out.update(scale_a=(1,), scale_b=(1,))
        return out

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Shapes of A, B, C (and of the epilogue tensors), with a leading batch dimension when ``batch > 1``."""
        lead = (self.batch,) if self.batch > 1 else ()
        out = {"a": (*lead, self.M, self.K), "b": (*lead, self.K, self.N), "c": (*lead, self.M, self.N)}
        out.update({n: out["c"] for n in self.epilogue_tensors() if n not in ("bias", "scale_a", "scale_b")})
        if self.bias is not Bias.NONE:
            out["bias"] = (self.M if self.bias is Bias.ROW else self.N,)
        if self.scale is not Scale.NONE:
            out.update(scale_a=(self.M if self.scale is Scale.ROW else 1,), scale_b=(self.N if self.scale is Scale.ROW else 1,))
        return out

    def tensor_type(self, name: str):
        """Element type of tensor ``name``: A and B the input type, scales fp32, the rest C's type."""
        if name in ("a", "b"):
            return self.dtype
        return OutType.FP32 if name in ("scale_a", "scale_b") else self.out
