"""Small problems shared by the interpreter and GPU tests: every ndim, G = 1, G > 1 with C/G > 1,
C/G = 1 (depthwise, channel multiplier 1 and 2), odd sizes, stride 2, dilation 2."""

OPS = ("grouped_conv_fwd", "grouped_conv_bwd_data", "grouped_conv_bwd_weight")
DTYPES = ("fp16", "bf16", "fp32")


def layout(ndim: int, channels_last: bool) -> str:
    spatial = "dhw"[3 - ndim:]
    return f"n{spatial}gc" if channels_last else f"ngc{spatial}"


def case(ndim, N, G, C, K, spatial, filter, stride=1, pad=0, dilation=1):
    per = lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * ndim  # noqa: E731
    return dict(ndim=ndim, N=N, G=G, C=C, K=K, spatial=per(spatial), filter=per(filter), stride=per(stride),
                pad=per(pad), dilation=per(dilation))


# One geometry per ndim for the full direction × dtype × layout matrix.
MATRIX = {
    1: case(1, 2, 2, 6, 10, 13, 3, stride=2, pad=1),
    2: case(2, 2, 4, 8, 8, (7, 6), 3, stride=1, pad=2, dilation=2),
    3: case(3, 1, 1, 5, 7, (3, 5, 4), (3, 1, 3), stride=(1, 2, 1), pad=(1, 0, 1)),
}

# Special classes, each in one dtype and layout.
SPECIAL = {
    "g1": case(2, 2, 1, 16, 24, (9, 7), 3, pad=1),
    "grouped_small": case(2, 2, 8, 32, 32, (6, 5), 3, pad=1),           # C/G = 4: merged groups
    "depthwise": case(2, 2, 16, 16, 16, (9, 8), 3, stride=2, pad=1),    # C/G = 1
    "depthwise_mult2": case(2, 1, 8, 8, 16, (7, 7), 5, pad=2),           # K/G = 2
    "odd": case(2, 3, 3, 9, 15, (11, 5), (3, 2), stride=(2, 1), pad=(1, 0), dilation=(1, 2)),
    "pointwise_s2": case(2, 2, 1, 16, 32, (8, 8), 1, stride=2),
    "conv1d_31": case(1, 1, 4, 4, 4, 40, 31, pad=15),
    "conv3d_dw": case(3, 1, 4, 4, 4, (4, 5, 6), 3, pad=1),
}
