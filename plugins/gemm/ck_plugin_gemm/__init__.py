"""ck-plugin-gemm: the ``gemm`` op (C[M,N] = A[M,K] @ B[K,N]) and its tiled Triton kernel family."""

from .problem import GemmProblem, Layout
from .keys import GemmKey

__all__ = ["GemmProblem", "GemmKey", "Layout"]
