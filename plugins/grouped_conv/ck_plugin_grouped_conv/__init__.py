"""ck-plugin-grouped-conv: ops ``grouped_conv_fwd``, ``grouped_conv_bwd_data`` and
``grouped_conv_bwd_weight`` (PyTorch semantics) with implicit-GEMM Triton kernels."""

__version__ = "0.1.0"
