"""ck-plugin-depthwise: direct (CUDA-core) depthwise convolution kernels for the ops
``grouped_conv_fwd``, ``grouped_conv_bwd_data`` and ``grouped_conv_bwd_weight`` (defined by
ck-plugin-grouped-conv), for problems with C/G = 1 and any channel multiplier K/G."""

__version__ = "0.1.0"
