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


# The GPU tests' cases (test_conv_gpu.py; benchmarks/conv_tma_check.py runs the TMA families on them).
# Larger problems that reach the aligned, merged and split-K instances.
GPU_CASES = {
    "resnext_like": case(2, 4, 32, 128, 128, (14, 14), 3, pad=1),
    # TMA merged groups: 16 channels per group (2 groups of a 32-channel box), patches cut off.
    "resnext_cg16": case(2, 2, 8, 128, 128, (17, 18), 3, pad=1),
    "regnet_like": case(2, 2, 6, 240, 240, (14, 14), 3, pad=1),
    "dense_3x3": case(2, 8, 1, 64, 64, (16, 16), 3, pad=1),
    "dense_s2": case(2, 8, 1, 64, 128, (17, 17), 3, stride=2, pad=1),
    "conv3d": case(3, 2, 1, 32, 32, (6, 10, 10), 3, pad=1),
    "wgrad_long": case(2, 16, 2, 64, 64, (28, 28), 3, pad=1),
    # TMA families: 1x1 folded into one row, and 1-D groups of 48 channels with a 9-tap filter.
    "pointwise": case(2, 4, 1, 64, 96, (10, 12), 1),
    "conv1d_groups48": case(1, 4, 4, 192, 192, 50, 9, pad=4),
    # TMA forward and backward-weight with strides above 1 (row-phase descriptors): 3x3 and 1x1 stride 2,
    # two groups of 64 channels with dilation, a 3-D one with strides (2, 2, 3), and a 1-D one.
    "tma_s2": case(2, 8, 1, 64, 128, (16, 16), 3, stride=2, pad=1),
    "tma_pointwise_s2": case(2, 4, 1, 128, 64, (14, 12), 1, stride=2),
    "tma_groups_s2": case(2, 2, 2, 128, 128, (12, 12), 3, stride=2, pad=2, dilation=2),
    "tma_3d_s2": case(3, 2, 1, 64, 64, (4, 8, 9), 3, stride=(2, 2, 3), pad=1),
    "tma_1d_s2": case(1, 4, 1, 64, 64, 50, 5, stride=2, pad=2),
    # A first layer (C = 3, K = 64, 7x7 stride 2): flat, a16k, i32 and generic instances.
    "first_layer": case(2, 4, 1, 3, 64, (33, 31), 7, stride=2, pad=3),
    # Stems the filter-row families serve: a 3-D one (windows of 21) and a 1-D audio one (C = 1).
    "first_layer_3d": case(3, 2, 1, 3, 64, (5, 20, 18), (3, 7, 7), stride=(1, 2, 2), pad=(1, 3, 3)),
    "first_layer_1d": case(1, 2, 1, 1, 64, 400, 10, stride=5),
    # Even W·C and str_w·C: the filter-row kernels load windows in pairs (derived twins).
    "first_layer_pairs": case(2, 4, 1, 3, 64, (33, 32), 7, stride=2, pad=3),
}
