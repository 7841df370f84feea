"""Staging's copies on the GPU: ckcore's copy kernels (ckcore.copying, through Registry.copy)
against torch's copy_, GB/s counted as bytes read + written; every result compared to torch's
bit for bit. One JSON line per case, then a summary line with the mean fraction of the arch's
memory bandwidth per kind of copy (what ckcore.staging's cost model uses).
usage: python benchmarks/copy_bench.py OUT.jsonl"""

import json
import sys

import torch

from ckcore import Registry, Settings
from ckcore.measure import environment, time_ms


def cases():
    cl = torch.channels_last
    for shape in [(32, 64, 56, 56), (32, 256, 14, 14), (32, 3, 224, 224), (8, 64, 8, 56, 56), (8, 768, 1000),
                  (32, 512, 7, 7)]:
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        fmt = torch.channels_last_3d if len(shape) == 5 else cl if len(shape) == 4 else None
        if fmt is None:  # 1-D convolution: channels-last is the (N, W, C) storage
            dst = torch.empty(shape[0], shape[2], shape[1], device="cuda", dtype=x.dtype).transpose(1, 2)
        else:
            dst = torch.empty_like(x, memory_format=fmt)
        yield f"cf_to_cl{list(shape)}", "permuted", x, dst
        yield f"cl_to_cf{list(shape)}", "permuted", dst.copy_(x), torch.empty_like(x)
    a = torch.randn(4095, 4095, device="cuda", dtype=torch.bfloat16)
    yield "pad_rows[4095,4095]", "rows", a, torch.empty(4095, 4096, device="cuda", dtype=a.dtype)[:, :4095]
    c = torch.empty(4096, 50304, device="cuda", dtype=torch.bfloat16)[:, :50257]
    yield "unpad_rows[4096,50257]", "rows", c.normal_(), torch.empty(4096, 50257, device="cuda", dtype=c.dtype)
    b8 = torch.randn(4096, 6144, device="cuda").to(torch.float8_e4m3fn)
    yield "fp8_transpose[4096,6144]", "permuted_1byte", b8, torch.empty(6144, 4096, device="cuda", dtype=b8.dtype).t()


def main():
    reg = Registry(settings=Settings.from_env())
    bw = reg.device.mem_bandwidth_gbps
    rows, frac = [{"kind": "env", **environment(False), "arch_bandwidth_gbps": bw}], {}
    for name, kind, src, dst in cases():
        nbytes = 2 * src.numel() * src.element_size()
        t_torch = time_ms(lambda: dst.copy_(src), interpret=False)
        want = dst.clone()
        dst.zero_()
        t_ck = time_ms(lambda: reg.copy(dst, src, interpret=False), interpret=False)
        same = bool(torch.equal(dst.view(torch.uint8) if dst.element_size() == 1 else dst, want.view(torch.uint8) if
                                want.element_size() == 1 else want))
        r = {"kind": "copy", "name": name, "copy": kind, "bytes": nbytes, "torch_ms": t_torch, "ckcore_ms": t_ck,
             "torch_gbps": nbytes / t_torch / 1e6, "ckcore_gbps": nbytes / t_ck / 1e6, "equal": same}
        frac.setdefault(kind, []).append(r["ckcore_gbps"] / bw)
        print(json.dumps(r), flush=True)
        rows.append(r)
    rows.append({"kind": "summary", "fraction_of_bandwidth": {k: sum(v) / len(v) for k, v in frac.items()}})
    print(json.dumps(rows[-1]))
    with open(sys.argv[1], "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
