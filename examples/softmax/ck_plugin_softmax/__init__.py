"""ck-plugin-softmax: an example third-party ckcore plugin (op ``softmax``)."""
