"""ck-plugin-stream-k: split-K kernel families for the ``gemm`` op of ck-plugin-gemm."""
