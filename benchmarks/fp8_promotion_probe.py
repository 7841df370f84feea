#!/usr/bin/env python3
"""fp8 e4m3 GEMM with promoted accumulation: which Triton construct gets cuBLAS's accuracy fastest?

Standalone research probe (plain torch + triton, no ckcore). Problem: layout "rcr"
(A is M x K row-major, B is N x K row-major i.e. K-major, C is M x N bf16), per-tensor scales.

Every promoted variant keeps the SAME numerical promotion interval as cuBLAS's non-fast
accumulation: the tensor core sums at most 128 products (one BLOCK_K = 128 step, four
m64nNk32 wgmmas chained from zero) in its reduced-precision accumulator, and that partial is
then added to the fp32 accumulator with an ordinary fp32 add. The variants differ only in how
that add is scheduled against the tensor cores:

  fast        acc = tl.dot(a, b, acc)                         (no promotion; reference speed)
  a_imp128    acc = tl.dot(a, b, acc, max_num_imprecise_acc=128)   (what ckcore does today)
  b_explicit  acc += tl.dot(a, b)                             (fresh partial every K step)
  c_swp       p = tl.dot(a, b); acc += prev; prev = p        (prev carried across iterations)
  c_ksplit    p = tl.dot(a_lo, b_lo); p = tl.dot(a_hi, b_hi, p); acc += prev; prev = p
              (the 128-product partial is built by two chained dots of 64; the first one is
              synchronous, and its wait lets Triton keep the second one in flight while the
              previous step's partial is added: Triton's rule 3b for "properly async" dots)
  d_halves    two M-halves: acc0 += tl.dot(a0, b); acc1 += tl.dot(a1, b)
  d_pipe      two M-halves: p0 = dot(a0, b); p1 = dot(a1, b); acc0 += p0; acc1 += prev1;
              prev1 = p1 (same rule-3b trick: dot p0 is synchronous, p1 stays in flight while
              both adds run)
  d_pipe_ip   like d_pipe, but p1 accumulates in place into the carried partial (zeroed through
              an always-true `if K > 0`), so no register copy of an in-flight result is needed

Each exists as a non-persistent pointer-load kernel ("tiled") and as a persistent kernel with
device-side TMA descriptors ("tma"); the persistent kernel is also tried with
tl.range(..., warp_specialize=True) ("ws", num_warps=4: Triton's Hopper auto-WS makes one
producer and two consumer warpgroups). A config "BMxBNxBK_wW_sS_xP" launches P persistent
programs per SM (P = 2: two CTAs share an SM, so one's fp32 adds overlap the other's MMAs).

Run (GPU):  python3 benchmarks/fp8_promotion_probe.py --out $OUT/fp8_promotion_probe.jsonl
              [--only kernel/mode/CONFIG ...] [--rounds 7 --warmup-ms 10 --rep-ms 40]
  Without --only: the whole sweep (variants x configs in CFG_*). Kernels are compiled in
  parallel worker processes (a compiler crash kills only its worker) and smoke-tested there
  on a small problem; then, per shape, every kernel is checked once against a float64
  reference (poisoned output, bitwise comparison with a_imp128), the fp32-output accuracy is
  checked on the largest-K shape, and all entries are timed with do_bench (median) in
  --rounds interleaved rounds; speedups are medians of per-round ratios to torch._scaled_mm.
Checks on a CPU box:
  TRITON_INTERPRET=1 python benchmarks/fp8_promotion_probe.py --interpret-check
      every variant on tiny shapes in Triton's interpreter against a float64 reference
  python benchmarks/fp8_promotion_probe.py --compile-sm90 [--filter SUBSTR | --only ID ...]
      compiles the variants for cuda:90 (no GPU needed): registers, spills, shared memory,
      the wgmma.wait_group pattern and ptxas's wgmma notes (C7514/C7515: every wgmma of the
      kernel serialised; C7517: a wait injected before registers written by a wgmma are read)
Writes JSON lines (env, compile, result, accuracy_fp32, summary) and prints a table at the end.

Findings (NVIDIA H200, torch 2.11, Triton 3.6, 2026-11-25; benchmarks/results/
fp8_promotion_probe_h200.jsonl, run "rounds7"): every promoted variant is bitwise equal to
a_imp128 and has exactly torch._scaled_mm(use_fast_accum=False)'s error. The fastest is
d_halves with 4 warps and 3 stages at two CTAs per SM (tma 128x128x128_w4_s3_x2: 0.877 of
scaled_mm geomean, 1.06x the best a_imp128 config per shape; tiled 128x128x128_w4_s3: 0.865).
max_num_imprecise_acc adds the partial right after the wgmmas without a wait, so ptxas injects
one (C7517) and, when a warpgroup owns more than one m64 tile, serialises every wgmma (C7514).
The carried-partial pipelines (c_*, d_pipe*) are serialised by ptxas (register copies of, or
writes to, registers of an in-flight wgmma) and lose.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

if "--compile-one" not in sys.argv and "TRITON_CACHE_DIR" not in os.environ:
    # A fresh cache shared by the parallel compile workers and the timing process.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="fp8probe_cache_")

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"

SHAPES = [(6144, 4096, 512), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096),
          (4096, 4096, 14336), (1024, 4096, 4096)]
PROMOTE = 128  # products summed by the tensor core before an fp32 add (cuBLAS: 4 x k32)

MODES = {"fast": 0, "a_imp128": 1, "b_explicit": 2, "c_swp": 3, "d_halves": 4, "d_pipe": 5,
         "c_ksplit": 6, "d_pipe_ip": 7}
M_FAST, M_IMP, M_EXPL, M_SWP, M_HALVES, M_DPIPE, M_KSPLIT, M_DPIPE_IP = range(8)


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
@triton.jit
def _tile_origin(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GM: tl.constexpr):
    # Grouped ordering (GM row-blocks share a B column-block while it is in L2). The host
    # checks that BM divides M and BN divides N.
    npm = M // BM
    npn = N // BN
    width = GM * npn
    first_m = (tile // width) * GM
    gs = tl.minimum(npm - first_m, GM)
    pm = first_m + (tile % width) % gs
    pn = (tile % width) // gs
    return pm * BM, pn * BN


@triton.jit
def fp8_gemm_tiled(a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, M, N, K, MODE: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, AM: tl.constexpr,
                   AK: tl.constexpr, GM: tl.constexpr, PROMOTE_N: tl.constexpr):
    """One program per BM x BN tile; pointer loads (cp.async pipeline); no masks (the host
    checks divisibility). A loads are AM x AK tiles (AM = BM/2 for the M-half modes, AK = BK/2
    for c_ksplit)."""
    off_m, off_n = _tile_origin(tl.program_id(0), M, N, BM, BN, GM)
    scale = tl.load(sa_ptr) * tl.load(sb_ptr)
    rm = tl.arange(0, AM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, AK)
    a_ptrs = a_ptr + (off_m + rm)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + (off_n + rn)[:, None] * K + rk[None, :]
    cn = off_n + rn
    if MODE == 4 or MODE == 5 or MODE == 7:  # d_halves, d_pipe, d_pipe_ip
        acc0 = tl.zeros((AM, BN), tl.float32)
        acc1 = tl.zeros((AM, BN), tl.float32)
        prev1 = tl.zeros((AM, BN), tl.float32)
        for k in range(0, K, BK):
            a0 = tl.load(a_ptrs)
            a1 = tl.load(a_ptrs + AM * K)
            b = tl.load(b_ptrs)
            if MODE == 4:
                acc0 += tl.dot(a0, tl.trans(b))
                acc1 += tl.dot(a1, tl.trans(b))
            elif MODE == 7:
                p0 = tl.dot(a0, tl.trans(b))  # synchronous; its wait also completes prev1
                acc1 += prev1  # previous step's half-1 partial (exposed add)
                if K > 0:  # true at run time: Triton turns this into the wgmma's scale-d=0
                    prev1 = tl.zeros((AM, BN), tl.float32)
                prev1 = tl.dot(a1, tl.trans(b), prev1)  # async, accumulates in place: no copy
                acc0 += p0  # overlaps the in-flight half-1 MMA
            else:
                p0 = tl.dot(a0, tl.trans(b))  # used in-loop: synchronous (wait 0 after it)
                p1 = tl.dot(a1, tl.trans(b))  # only carried: stays in flight
                acc0 += p0
                acc1 += prev1  # previous step's partial, added while p1 runs
                prev1 = p1
            a_ptrs += BK
            b_ptrs += BK
        if MODE == 5 or MODE == 7:
            acc1 += prev1
        cm = off_m + rm
        tl.store(c_ptr + cm[:, None] * N + cn[None, :], (acc0 * scale).to(c_ptr.dtype.element_ty))
        tl.store(c_ptr + (cm + AM)[:, None] * N + cn[None, :],
                 (acc1 * scale).to(c_ptr.dtype.element_ty))
    else:
        acc = tl.zeros((BM, BN), tl.float32)
        prev = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            if MODE == 6:  # c_ksplit: two chained dots of BK/2 make one 128-product partial
                a_lo = tl.load(a_ptrs)
                a_hi = tl.load(a_ptrs + AK)
                b_lo = tl.load(b_ptrs)
                b_hi = tl.load(b_ptrs + AK)
                p = tl.dot(a_lo, tl.trans(b_lo))  # used in-loop: synchronous
                p = tl.dot(a_hi, tl.trans(b_hi), p)  # only carried: stays in flight
                acc += prev
                prev = p
            else:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                if MODE == 0:
                    acc = tl.dot(a, tl.trans(b), acc)
                elif MODE == 1:
                    acc = tl.dot(a, tl.trans(b), acc, max_num_imprecise_acc=PROMOTE_N)
                elif MODE == 2:
                    acc += tl.dot(a, tl.trans(b))
                else:  # 3: c_swp
                    p = tl.dot(a, tl.trans(b))
                    acc += prev
                    prev = p
            a_ptrs += BK
            b_ptrs += BK
        if MODE == 3 or MODE == 6:
            acc += prev
        cm = off_m + rm
        tl.store(c_ptr + cm[:, None] * N + cn[None, :], (acc * scale).to(c_ptr.dtype.element_ty))


@triton.jit
def _epi_store(c_desc, tile_c, M, N, acc, scale, row_off: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr, GM: tl.constexpr):
    om, on = _tile_origin(tile_c, M, N, BM, BN, GM)
    c_desc.store([om + row_off, on], (acc * scale).to(c_desc.dtype))


@triton.jit(do_not_specialize=["NUM_PROGS"])
def fp8_gemm_tma(a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, M, N, K, NUM_PROGS, MODE: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, AM: tl.constexpr,
                 AK: tl.constexpr, GM: tl.constexpr, PROMOTE_N: tl.constexpr,
                 WS: tl.constexpr, FLATTEN: tl.constexpr):
    """Persistent grid of NUM_PROGS programs; A, B and C through device-side TMA descriptors."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[AM, AK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, AK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[AM, BN])
    scale = tl.load(sa_ptr) * tl.load(sb_ptr)
    tiles = (M // BM) * (N // BN)
    # The epilogue recomputes its tile from its own counter (with a flattened loop the
    # loop-carried tile index may already belong to the next tile).
    tile_c = tl.program_id(0) - NUM_PROGS
    for tile in tl.range(tl.program_id(0), tiles, NUM_PROGS, flatten=FLATTEN, warp_specialize=WS):
        off_m, off_n = _tile_origin(tile, M, N, BM, BN, GM)
        if MODE == 4 or MODE == 5 or MODE == 7:
            acc0 = tl.zeros((AM, BN), tl.float32)
            acc1 = tl.zeros((AM, BN), tl.float32)
            prev1 = tl.zeros((AM, BN), tl.float32)
            for k in range(0, K, BK):
                a0 = a_desc.load([off_m, k])
                a1 = a_desc.load([off_m + AM, k])
                b = b_desc.load([off_n, k])
                if MODE == 4:
                    acc0 += tl.dot(a0, b.T)
                    acc1 += tl.dot(a1, b.T)
                elif MODE == 7:
                    p0 = tl.dot(a0, b.T)
                    acc1 += prev1
                    if K > 0:
                        prev1 = tl.zeros((AM, BN), tl.float32)
                    prev1 = tl.dot(a1, b.T, prev1)
                    acc0 += p0
                else:
                    p0 = tl.dot(a0, b.T)
                    p1 = tl.dot(a1, b.T)
                    acc0 += p0
                    acc1 += prev1
                    prev1 = p1
            if MODE == 5 or MODE == 7:
                acc1 += prev1
            tile_c += NUM_PROGS
            _epi_store(c_desc, tile_c, M, N, acc0, scale, 0, BM, BN, GM)
            _epi_store(c_desc, tile_c, M, N, acc1, scale, AM, BM, BN, GM)
        else:
            acc = tl.zeros((BM, BN), tl.float32)
            prev = tl.zeros((BM, BN), tl.float32)
            for k in range(0, K, BK):
                if MODE == 6:
                    a_lo = a_desc.load([off_m, k])
                    a_hi = a_desc.load([off_m, k + AK])
                    b_lo = b_desc.load([off_n, k])
                    b_hi = b_desc.load([off_n, k + AK])
                    p = tl.dot(a_lo, b_lo.T)
                    p = tl.dot(a_hi, b_hi.T, p)
                    acc += prev
                    prev = p
                else:
                    a = a_desc.load([off_m, k])
                    b = b_desc.load([off_n, k])
                    if MODE == 0:
                        acc = tl.dot(a, b.T, acc)
                    elif MODE == 1:
                        acc = tl.dot(a, b.T, acc, max_num_imprecise_acc=PROMOTE_N)
                    elif MODE == 2:
                        acc += tl.dot(a, b.T)
                    else:
                        p = tl.dot(a, b.T)
                        acc += prev
                        prev = p
            if MODE == 3 or MODE == 6:
                acc += prev
            tile_c += NUM_PROGS
            _epi_store(c_desc, tile_c, M, N, acc, scale, 0, BM, BN, GM)


# --------------------------------------------------------------------------------------------
# variants and configurations
# --------------------------------------------------------------------------------------------
# (BM, BN, BK, num_warps, num_stages)
CFG_TILED = [(128, 256, 128, 8, 3), (128, 256, 128, 8, 4), (128, 128, 128, 4, 4),
             (128, 128, 128, 8, 4), (256, 128, 128, 8, 3), (128, 128, 128, 4, 3)]
CFG_TMA = CFG_TILED
# Hopper auto-WS only engages with num_warps=4 (then 12 warps: 1 producer + 2 consumer groups)
CFG_WS = [(128, 128, 128, 4, 4), (128, 256, 128, 4, 3), (256, 128, 128, 4, 3),
          (128, 128, 128, 4, 3)]
TILED_MODES = ["fast", "a_imp128", "b_explicit", "c_swp", "c_ksplit", "d_halves", "d_pipe", "d_pipe_ip"]
TMA_MODES = TILED_MODES
WS_MODES = ["fast", "a_imp128", "b_explicit", "c_ksplit", "d_halves", "d_pipe"]


def cfg_name(cfg):
    bm, bn, bk, w, s = cfg[:5]
    pps = cfg[5] if len(cfg) > 5 else 1  # persistent programs per SM
    return f"{bm}x{bn}x{bk}_w{w}_s{s}" + (f"_x{pps}" if pps > 1 else "")


def parse_task(tid, out="bf16"):
    """'kernel/mode/BMxBNxBK_wW_sS[_xP]' (P: persistent programs per SM) -> task"""
    kernel, mode, cfg = tid.split("/")[:3]
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)_w(\d+)_s(\d+)(?:_x(\d+))?", cfg)
    assert kernel in ("tiled", "tma", "ws") and mode in MODES and m, f"bad task id {tid}"
    c = tuple(int(g) for g in m.groups() if g is not None)
    return dict(kernel=kernel, mode=mode, cfg=c, ws=kernel == "ws", flatten=kernel == "tma", out=out)


def all_tasks(out_dtypes=("bf16",)):
    """Every (kernel, mode, config, out dtype) to compile."""
    tasks = []
    for od in out_dtypes:
        for mode in TILED_MODES:
            for cfg in CFG_TILED:
                tasks.append(dict(kernel="tiled", mode=mode, cfg=cfg, ws=False, flatten=False, out=od))
        for mode in TMA_MODES:
            for cfg in CFG_TMA:
                tasks.append(dict(kernel="tma", mode=mode, cfg=cfg, ws=False, flatten=True, out=od))
        for mode in WS_MODES:
            for cfg in CFG_WS:
                tasks.append(dict(kernel="ws", mode=mode, cfg=cfg, ws=True, flatten=False, out=od))
    return tasks


def task_id(t):
    return f"{t['kernel']}/{t['mode']}/{cfg_name(t['cfg'])}/{t['out']}"


def variant_name(t):
    return f"{t['kernel']}:{t['mode']}"


def kernel_args(t):
    bm, bn, bk, w, s = t["cfg"][:5]
    mode = MODES[t["mode"]]
    am = bm // 2 if mode in (M_HALVES, M_DPIPE, M_DPIPE_IP) else bm
    ak = bk // 2 if mode == M_KSPLIT else bk
    kw = dict(MODE=mode, BM=bm, BN=bn, BK=bk, AM=am, AK=ak, GM=8, PROMOTE_N=PROMOTE,
              num_warps=w, num_stages=s)
    if t["kernel"] != "tiled":
        kw.update(WS=t["ws"], FLATTEN=t["flatten"])
    return kw


def num_sms(device):
    if INTERPRET:
        return 4
    return torch.cuda.get_device_properties(device).multi_processor_count


def launch(t, a, b, c, sa, sb):
    M, K = a.shape
    N = b.shape[0]
    bm, bn = t["cfg"][0], t["cfg"][1]
    tiles = (M // bm) * (N // bn)
    kw = kernel_args(t)
    if t["kernel"] == "tiled":
        return fp8_gemm_tiled[(tiles,)](a, b, c, sa, sb, M, N, K, **kw)
    pps = t["cfg"][5] if len(t["cfg"]) > 5 else 1
    progs = min(num_sms(a.device) * pps, tiles)
    return fp8_gemm_tma[(progs,)](a, b, c, sa, sb, M, N, K, progs, **kw)


def supports(t, M, N, K):
    bm, bn, bk = t["cfg"][:3]
    return M % bm == 0 and N % bn == 0 and K % bk == 0


TORCH_OUT = {"bf16": torch.bfloat16, "fp32": torch.float32}


def set_allocator(device):
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device=device, dtype=torch.int8))


# --------------------------------------------------------------------------------------------
# compilation (GPU: parallel worker processes warm the shared cache; a crash or an MLIR
# assertion in one task kills only its worker)
# --------------------------------------------------------------------------------------------
def compile_worker(tasks):
    """Child process: compile each task through the JIT's warmup path (same cache key as the
    later launches) and print one JSON line per task."""
    dev = "cuda"
    set_allocator(dev)
    M = N = K = 4096  # divisible by 16 like every probed shape: same specialisation
    a = torch.empty(16, 16, device=dev, dtype=torch.float8_e4m3fn)
    b = torch.empty(16, 16, device=dev, dtype=torch.float8_e4m3fn)
    s = torch.ones(1, device=dev, dtype=torch.float32)
    # smoke problem: every kernel runs once here first, so that a kernel that faults or computes
    # garbage is dropped before the timing process (whose CUDA context a fault would break)
    sm_shape = (768, 512, 1024)
    sa8, sb8, ssa, ssb = make_inputs(*sm_shape, dev, seed=5)
    sref = reference(sa8, sb8, ssa, ssb)
    for t in tasks:
        t0 = time.time()
        rec = dict(task=task_id(t))
        try:
            c = torch.empty(16, 16, device=dev, dtype=TORCH_OUT[t["out"]])
            kw = kernel_args(t)
            if t["kernel"] == "tiled":
                ck = fp8_gemm_tiled.warmup(a, b, c, s, s, M, N, K, grid=(1,), **kw)
            else:
                ck = fp8_gemm_tma.warmup(a, b, c, s, s, M, N, K, 132, grid=(1,), **kw)
            ck._init_handles()
            rec.update(ok=True, n_regs=ck.n_regs, n_spills=ck.n_spills,
                       shared=ck.metadata.shared, num_warps_total=getattr(ck.metadata, "num_warps", None))
            ttgir = ck.asm.get("ttgir", "")
            rec["ws_emitted"] = "ttg.warp_specialize" in ttgir
            rec["total_warps"] = _total_warps(ck.asm.get("ptx", ""))
            rec.update(_wait_pattern(ck.asm.get("ptx", "")))
            try:
                rec.update(ptxas_notes(ck.asm.get("ptx", "")))
            except Exception as e:
                rec["ptxas_notes"] = f"n/a ({type(e).__name__})"
            if supports(t, *sm_shape):
                sc = torch.full(sm_shape[:2], float("nan"), device=dev, dtype=TORCH_OUT[t["out"]])
                launch(t, sa8, sb8, sc, ssa, ssb)
                torch.cuda.synchronize()
                e = errors(sc, sref)
                rec["smoke_max_rel_err"] = e["max_rel_err"]
                if not e["max_rel_err"] < 0.02:
                    rec.update(ok=False, error=f"wrong result on the smoke problem {sm_shape}: {e}")
        except Exception as e:  # compile failure: record it, go on
            rec.update(ok=False, error=f"{type(e).__name__}: {str(e)[-600:]}")
        rec["compile_s"] = round(time.time() - t0, 2)
        print("@@" + json.dumps(rec), flush=True)


def _total_warps(ptx):
    m = re.search(r"\.(?:reqntid|maxntid)\s+(\d+)", ptx)
    return int(m.group(1)) // 32 if m else None


def ptxas_notes(ptx):
    """ptxas's own notes on wgmma (C7514/C7515: every wgmma of the kernel serialised; C7517:
    a wait injected so registers written by a wgmma can be read; C7519: an arrive injected)."""
    import triton.backends.nvidia as nv
    exe = os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([exe, "-arch=sm_90a", "-v", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
    codes = sorted(set(re.findall(r"\((C75\d\d)\)", r.stdout + r.stderr)))
    return dict(ptxas_notes=",".join(codes), wgmma_serialized=any(c in ("C7514", "C7515", "C7516")
                                                                      for c in codes))


def _wait_pattern(ptx):
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)", ptx)
    return dict(n_wgmma=len(re.findall(r"wgmma\.mma_async", ptx)),
                wgmma_waits=",".join(waits[:24]))


def compile_all(tasks, jobs, per_task_s=240):
    """Compile every task in worker subprocesses, `jobs` at a time. A worker that dies marks
    its first unreported task failed and the rest go to a new worker."""
    from concurrent.futures import ThreadPoolExecutor
    results = {}

    def run_batch(batch):
        pending = list(batch)
        while pending:
            payload = json.dumps(pending)
            try:
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-one", payload],
                                      capture_output=True, text=True, timeout=per_task_s * len(pending),
                                      env=os.environ.copy())
                out, err, rc = proc.stdout, proc.stderr, proc.returncode
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                err, rc = "timeout", -9
            done = {}
            for line in out.splitlines():
                if line.startswith("@@"):
                    r = json.loads(line[2:])
                    done[r["task"]] = r
            for t in pending:
                if task_id(t) in done:
                    results[task_id(t)] = done[task_id(t)]
            rest = [t for t in pending if task_id(t) not in done]
            if rest:
                # the first unreported task is the one that crashed or hung
                results[task_id(rest[0])] = dict(task=task_id(rest[0]), ok=False,
                                                 error=f"worker died rc={rc}: {err[-800:]}")
                rest = rest[1:]
            pending = rest

    # group by kernel+mode (crashes tend to be mode-specific); split into `jobs`-ish batches
    batches = []
    size = max(1, math.ceil(len(tasks) / max(1, jobs * 2)))
    for i in range(0, len(tasks), size):
        batches.append(tasks[i:i + size])
    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(run_batch, batches))
    return results


# --------------------------------------------------------------------------------------------
# checks and timing
# --------------------------------------------------------------------------------------------
def make_inputs(M, N, K, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(device)
    b = torch.randn(N, K, generator=g).to(device)
    a8 = (a * 1.5).to(torch.float8_e4m3fn)
    b8 = (b * 1.5).to(torch.float8_e4m3fn)
    sa = torch.tensor([0.37], dtype=torch.float32, device=device)
    sb = torch.tensor([1.73], dtype=torch.float32, device=device)
    return a8, b8, sa, sb


def reference(a8, b8, sa, sb):
    return (a8.double() @ b8.double().T) * (sa.double() * sb.double())


def errors(out, ref):
    """max |out - ref| / max |ref| and ||out - ref|| / ||ref|| (NaN/unwritten -> inf)."""
    o = out.double()
    if not torch.isfinite(o).all():
        return dict(max_rel_err=float("inf"), rel_l2_err=float("inf"))
    d = o - ref
    return dict(max_rel_err=(d.abs().max() / ref.abs().max()).item(),
                rel_l2_err=(d.norm() / ref.norm()).item())


def scaled_mm(a8, b8, sa, sb, fast, out_dtype=torch.bfloat16):
    return torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype,
                            use_fast_accum=fast)


def bench(fn, warmup_ms, rep_ms):
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def env_record():
    p = torch.cuda.get_device_properties(0)
    return dict(type="env", gpu=torch.cuda.get_device_name(0), sms=p.multi_processor_count,
                torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda,
                python=platform.python_version(), host=platform.node(),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                promote_interval=PROMOTE, layout="rcr", dtype="float8_e4m3fn", out_dtype="bfloat16",
                scales="per-tensor", timing="triton.testing.do_bench median, L2 flushed per rep")


DEVICE = "cuda"


def main_gpu(args):
    t_start = time.time()
    dev = DEVICE
    set_allocator(dev)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    fout = open(args.out, "w")

    def emit(rec):
        fout.write(json.dumps(rec) + "\n")
        fout.flush()

    env = env_record()
    env["triton_cache_dir"] = os.environ.get("TRITON_CACHE_DIR")
    emit(env)
    print(json.dumps(env), flush=True)

    shapes = SHAPES if not args.shapes else [tuple(map(int, s.split("x"))) for s in args.shapes]
    if args.only:
        tasks = [parse_task(x) for x in args.only]
    else:
        tasks = [t for t in all_tasks() if (not args.filter or any(f in task_id(t) for f in args.filter))]
    # one fp32-output build per variant for the sensitive accuracy check (a 128x128 config:
    # the result does not depend on the tile, only on the order of the K sum)
    f32_tasks = {}
    for t in tasks:
        v = variant_name(t)
        if v not in f32_tasks or (cfg_name(t["cfg"]) in ("128x128x128_w8_s4", "128x128x128_w4_s4")
                                  and not cfg_name(f32_tasks[v]["cfg"]).startswith("128x128x128")):
            f32_tasks[v] = dict(t, out="fp32")
    f32_tasks = list(f32_tasks.values())
    t0 = time.time()
    comp = compile_all(tasks + f32_tasks, args.jobs)
    n_ok = sum(r.get("ok", False) for r in comp.values())
    print(f"compiled {n_ok}/{len(comp)} kernels in {time.time() - t0:.1f} s", flush=True)
    for t in tasks + f32_tasks:
        r = comp.get(task_id(t), dict(ok=False, error="not compiled"))
        emit(dict(type="compile", variant=variant_name(t), kernel=t["kernel"], mode=t["mode"],
                  config=cfg_name(t["cfg"]), out=t["out"], **{k: v for k, v in r.items() if k != "task"}))
        if not r.get("ok"):
            print(f"  compile FAILED {task_id(t)}: {r.get('error', '')[:300]}", flush=True)
    ok_tasks = [t for t in tasks if comp.get(task_id(t), {}).get("ok")]
    # skip configs that spill badly (they cannot be competitive; saves device time)
    runnable = []
    for t in ok_tasks:
        sp = comp[task_id(t)].get("n_spills", 0) or 0
        if sp > args.max_spills:
            emit(dict(type="skip", variant=variant_name(t), config=cfg_name(t["cfg"]),
                      reason=f"{sp} spilled registers > {args.max_spills}"))
            continue
        runnable.append(t)

    results = []  # (shape, variant, config, ms, ...)
    for si, (M, N, K) in enumerate(shapes):
        if time.time() - t_start > args.budget_s:
            print(f"budget reached, skipping shape {(M, N, K)}", flush=True)
            emit(dict(type="skip", shape=[M, N, K], reason="time budget"))
            continue
        flops = 2.0 * M * N * K
        a8, b8, sa, sb = make_inputs(M, N, K, dev, seed=1000 + si)
        ref = reference(a8, b8, sa, sb)
        c = torch.empty((M, N), device=dev, dtype=torch.bfloat16)
        # 1. correctness of everything once (poisoned output), before any timing
        checks, fns = {}, {}
        for fast in (False, True):
            name = "scaled_mm_fast" if fast else "scaled_mm"
            checks[name] = errors(scaled_mm(a8, b8, sa, sb, fast), ref)
            fns[name] = (lambda fast=fast: scaled_mm(a8, b8, sa, sb, fast))
        a_out = None  # a_imp128's output: the promoted result every promoted variant should reproduce
        meta = {}
        for t in runnable:
            if not supports(t, M, N, K):
                continue
            name = task_id(t)
            try:
                c.fill_(float("nan"))
                launch(t, a8, b8, c, sa, sb)
                torch.cuda.synchronize()
                e = errors(c, ref)
                if t["mode"] == "a_imp128" and a_out is None and math.isfinite(e["max_rel_err"]):
                    a_out = c.clone()
                e["bitwise_equal_a_imp128"] = bool(torch.equal(c, a_out)) if a_out is not None else None
                checks[name] = e
                meta[name] = t
                if math.isfinite(e["max_rel_err"]) and e["max_rel_err"] < 0.05:
                    fns[name] = (lambda t=t: launch(t, a8, b8, c, sa, sb))
                else:
                    emit(dict(type="result", shape=[M, N, K], variant=variant_name(t), kernel=t["kernel"],
                              mode=t["mode"], config=cfg_name(t["cfg"]), check="FAILED", **e))
            except Exception as ex:
                emit(dict(type="result", shape=[M, N, K], variant=variant_name(t), kernel=t["kernel"],
                          mode=t["mode"], config=cfg_name(t["cfg"]), error=f"{type(ex).__name__}: {str(ex)[:400]}"))
                if "illegal" in str(ex).lower() or "unspecified launch" in str(ex).lower():
                    print("CUDA context broken; stopping", flush=True)
                    fout.close()
                    return
        print(f"[{M}x{N}x{K}] scaled_mm err {checks['scaled_mm']['max_rel_err']:.3e}, "
              f"fast err {checks['scaled_mm_fast']['max_rel_err']:.3e}; {len(fns) - 2} kernels checked", flush=True)

        # 2. sensitive accuracy check (fp32 output) on the largest-K shape
        if K == max(sh[2] for sh in shapes):
            for fast in (False, True):
                e = errors(scaled_mm(a8, b8, sa, sb, fast, torch.float32), ref)
                emit(dict(type="accuracy_fp32", shape=[M, N, K],
                          variant="scaled_mm_fast" if fast else "scaled_mm", **e))
            for t in f32_tasks:
                if not comp.get(task_id(t), {}).get("ok") or not supports(t, M, N, K):
                    continue
                c32 = torch.full((M, N), float("nan"), device=dev, dtype=torch.float32)
                try:
                    launch(t, a8, b8, c32, sa, sb)
                    torch.cuda.synchronize()
                    e = errors(c32, ref)
                except Exception as ex:
                    e = dict(error=f"{type(ex).__name__}: {str(ex)[:300]}")
                emit(dict(type="accuracy_fp32", shape=[M, N, K], variant=variant_name(t),
                          config=cfg_name(t["cfg"]), **e))
                del c32

        # 3. timing: `rounds` rounds over all entries, the order rotated (and reversed every other
        #    round) so that clock drift (power/thermal) spreads evenly; each entry's speedup is the
        #    median over rounds of scaled_mm's time in the same round over its time
        names = list(fns)
        times = {n: [] for n in names}
        for r in range(args.rounds):
            k = (r * max(1, len(names) // args.rounds)) % len(names)
            order = names[k:] + names[:k]
            if r % 2:
                order = order[::-1]
            for n in order:
                times[n].append(bench(fns[n], args.warmup_ms, args.rep_ms))
        med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else 0.5 * (sorted(xs)[len(xs) // 2 - 1] + sorted(xs)[len(xs) // 2])
        base_r, fast_r = times["scaled_mm"], times["scaled_mm_fast"]
        for n in names:
            ms = med(times[n])
            rec = dict(type="result", shape=[M, N, K])
            if n in meta:
                t = meta[n]
                rec.update(variant=variant_name(t), kernel=t["kernel"], mode=t["mode"], config=cfg_name(t["cfg"]),
                           n_regs=comp[n].get("n_regs"), n_spills=comp[n].get("n_spills"),
                           ptxas_notes=comp[n].get("ptxas_notes"))
            else:
                rec.update(variant=n, kernel="cublas", mode=n, config="-")
            rec.update(ms=ms, tflops=flops / ms / 1e9,
                       speedup_vs_scaled_mm=med([b / x for b, x in zip(base_r, times[n])]),
                       speedup_vs_scaled_mm_fast=med([b / x for b, x in zip(fast_r, times[n])]),
                       ms_rounds=[round(x, 5) for x in times[n]],
                       scaled_mm_max_rel_err=checks["scaled_mm"]["max_rel_err"],
                       scaled_mm_rel_l2_err=checks["scaled_mm"]["rel_l2_err"], **checks[n])
            emit(rec)
            results.append(rec)
        print(f"  scaled_mm {med(base_r):.4f} ms (rounds {min(base_r):.4f}..{max(base_r):.4f}), "
              f"fast {med(fast_r):.4f} ms (rounds {min(fast_r):.4f}..{max(fast_r):.4f})", flush=True)
        del a8, b8, ref, c, a_out, fns
        torch.cuda.empty_cache()
        print(f"  shape done at {time.time() - t_start:.0f} s", flush=True)

    summary = summarize(results, shapes)
    emit(dict(type="summary", **summary))
    fout.close()
    print_table(results, shapes, summary)
    print(f"total {time.time() - t_start:.0f} s; wrote {args.out}", flush=True)


def _best(results):
    """best (lowest ms) valid record per (shape, variant)"""
    best = {}
    for r in results:
        if r.get("type") != "result" or "ms" not in r or r.get("check") == "FAILED":
            continue
        k = (tuple(r["shape"]), r["variant"])
        if k not in best or r["ms"] < best[k]["ms"]:
            best[k] = r
    return best


def summarize(results, shapes):
    best = _best(results)
    variants = sorted({v for (_, v) in best})
    out = {}
    for v in variants:
        sp = [best[(tuple(s), v)]["speedup_vs_scaled_mm"] for s in shapes if (tuple(s), v) in best]
        n = len(sp)
        # best single config over all shapes
        by_cfg = {}
        for r in results:
            if r.get("variant") == v and "ms" in r and r.get("check") != "FAILED":
                by_cfg.setdefault(r["config"], {})[tuple(r["shape"])] = r["speedup_vs_scaled_mm"]
        fixed = {c: geomean(d.values()) for c, d in by_cfg.items() if len(d) == len(shapes)}
        bc = max(fixed, key=fixed.get) if fixed else None
        out[v] = dict(geomean_speedup_best_cfg_per_shape=geomean(sp), shapes=n,
                      best_fixed_config=bc, geomean_speedup_fixed=fixed.get(bc) if bc else None)
    # promoted variants vs a_imp128 (per-shape best configs)
    for kernel in ("tiled", "tma", "ws"):
        ref = f"{kernel}:a_imp128"
        for v in variants:
            ratios = []
            for s in shapes:
                k1, k2 = (tuple(s), v), (tuple(s), ref)
                if k1 in best and k2 in best:
                    ratios.append(best[k2]["ms"] / best[k1]["ms"])
            if ratios and v in out:
                out[v][f"geomean_speedup_vs_{kernel}_a_imp128"] = geomean(ratios)
    # vs the best a_imp128 over all kernels
    for v in variants:
        ratios = []
        for s in shapes:
            cands = [best[(tuple(s), f"{k}:a_imp128")]["ms"] for k in ("tiled", "tma", "ws")
                     if (tuple(s), f"{k}:a_imp128") in best]
            if cands and (tuple(s), v) in best:
                ratios.append(min(cands) / best[(tuple(s), v)]["ms"])
        if ratios:
            out[v]["geomean_speedup_vs_best_a_imp128"] = geomean(ratios)
    return dict(variants=out)


def print_table(results, shapes, summary):
    best = _best(results)
    variants = sorted({v for (_, v) in best}, key=lambda v: (v.split(":")[0] != "scaled_mm", v))
    print("\nBest config per shape: ms  (speedup vs torch._scaled_mm use_fast_accum=False)  max_rel_err")
    hdr = f"{'variant':<22}" + "".join(f"{'x'.join(map(str, s)):>24}" for s in shapes) + f"{'geomean':>9}"
    print(hdr)
    for v in variants:
        cells = []
        for s in shapes:
            r = best.get((tuple(s), v))
            cells.append(f"{r['ms']:8.4f} {r['speedup_vs_scaled_mm']:5.3f} {r['max_rel_err']:.1e}"
                         if r else f"{'-':>24}")
        g = summary["variants"].get(v, {}).get("geomean_speedup_best_cfg_per_shape", float("nan"))
        print(f"{v:<22}" + "".join(f"{c:>24}" for c in cells) + f"{g:9.3f}")
    print("\nconfig of the best per shape:")
    for v in variants:
        print(f"{v:<22}" + "".join(f"{best[(tuple(s), v)]['config'] if (tuple(s), v) in best else '-':>24}"
                                     for s in shapes))
    print("\nper-variant summary:")
    for v, d in summary["variants"].items():
        print(f"  {v:<22} " + ", ".join(f"{k}={(round(x, 3) if isinstance(x, float) else x)}"
                                        for k, x in d.items()))


# --------------------------------------------------------------------------------------------
# CPU-side checks
# --------------------------------------------------------------------------------------------
def main_interpret(args):
    """TRITON_INTERPRET=1: every mode of both kernels on tiny shapes vs float64."""
    assert INTERPRET, "run with TRITON_INTERPRET=1"
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
    shapes = [(256, 256, 384), (512, 256, 256)]
    cfgs = [(128, 128, 128, 4, 3), (128, 256, 128, 8, 3), (256, 128, 128, 8, 3)]
    bad = 0
    for (M, N, K) in shapes:
        a8, b8, sa, sb = make_inputs(M, N, K, "cpu", seed=7)
        ref = reference(a8, b8, sa, sb)
        for kernel in ("tiled", "tma", "ws"):
            for mode in MODES:
                for cfg in cfgs:
                    t = dict(kernel=kernel, mode=mode, cfg=cfg, ws=kernel == "ws",
                             flatten=kernel == "tma", out="fp32")
                    if not supports(t, M, N, K):
                        continue
                    c = torch.full((M, N), float("nan"), dtype=torch.float32)
                    t0 = time.time()
                    launch(t, a8, b8, c, sa, sb)
                    e = errors(c, ref)
                    ok = e["max_rel_err"] < 1e-5  # fp32 output, exact-ish products in numpy
                    bad += not ok
                    print(f"{'ok ' if ok else 'BAD'} {M}x{N}x{K} {kernel:5} {mode:10} {cfg_name(cfg):18} "
                          f"max_rel_err={e['max_rel_err']:.2e} ({time.time() - t0:.1f} s)", flush=True)
    print("interpreter check:", "PASSED" if bad == 0 else f"{bad} FAILED")
    return bad


def main_compile_sm90(args):
    """Compile for cuda:90 without a GPU; print registers, spills, shared memory, WS, waits."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import triton.backends.nvidia as nv
    cuobjdump = os.path.join(os.path.dirname(nv.__file__), "bin", "cuobjdump")
    target = GPUTarget("cuda", 90, 32)
    if args.only:
        tasks = [parse_task(x) for x in args.only]
    else:
        tasks = [t for t in all_tasks() if (not args.filter or any(f in task_id(t) for f in args.filter))]
    dump = args.dump_dir
    if dump:
        os.makedirs(dump, exist_ok=True)
    for t in tasks:
        kw = kernel_args(t)
        nw, ns = kw.pop("num_warps"), kw.pop("num_stages")
        fn = fp8_gemm_tiled if t["kernel"] == "tiled" else fp8_gemm_tma
        out_ty = {"bf16": "*bf16", "fp32": "*fp32"}[t["out"]]
        sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": out_ty, "sa_ptr": "*fp32",
               "sb_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        if t["kernel"] != "tiled":
            sig["NUM_PROGS"] = "i32"
        for k in kw:
            sig[k] = "constexpr"
        div = [i for i, n in enumerate(fn.arg_names) if n in ("a_ptr", "b_ptr", "c_ptr", "sa_ptr", "sb_ptr", "M", "N", "K")]
        attrs = {(i,): [["tt.divisibility", 16]] for i in div}
        t0 = time.time()
        try:
            ck = triton.compile(ASTSource(fn, sig, kw, attrs), target=target,
                                options=dict(num_warps=nw, num_stages=ns))
            res = ""
            with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                f.write(ck.asm["cubin"])
                f.flush()
                res = subprocess.run([cuobjdump, "--dump-resource-usage", f.name], capture_output=True,
                                     text=True).stdout
            m = re.search(r"REG:(\d+).*?STACK:(\d+).*?SHARED:(\d+).*?LOCAL:(\d+)", res)
            ttgir = ck.asm["ttgir"]
            wp = _wait_pattern(ck.asm["ptx"])
            pn = ptxas_notes(ck.asm["ptx"])
            print(f"{task_id(t):44} regs={m.group(1) if m else '?':>3} stack={m.group(2) if m else '?':>4} "
                  f"smem={ck.metadata.shared:>6} warps={_total_warps(ck.asm['ptx'])} "
                  f"ws={'ttg.warp_specialize' in ttgir} wgmma={wp['n_wgmma']} waits=[{wp['wgmma_waits']}] "
                  f"ptxas=[{pn['ptxas_notes']}]{' SERIALIZED' if pn['wgmma_serialized'] else ''} "
                  f"({time.time() - t0:.1f} s)", flush=True)
            if dump:
                base = os.path.join(dump, task_id(t).replace("/", "__"))
                for ext in ("ttgir", "ptx"):
                    with open(f"{base}.{ext}", "w") as f:
                        f.write(ck.asm[ext])
        except Exception as e:
            msg = str(e).strip().splitlines()
            print(f"{task_id(t):44} COMPILE FAILED: {type(e).__name__}: {(msg[-1] if msg else '')[:200]}",
                  flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "fp8_promotion_probe_h200.jsonl"))
    p.add_argument("--shapes", nargs="*", help="MxNxK ... (default: the six probe shapes)")
    p.add_argument("--filter", nargs="*", help="only tasks whose id contains one of these")
    p.add_argument("--jobs", type=int, default=max(1, min(14, (os.cpu_count() or 2) - 1)))
    p.add_argument("--warmup-ms", type=float, default=20)
    p.add_argument("--rep-ms", type=float, default=60)
    p.add_argument("--only", nargs="*", help="task ids kernel/mode/BMxBNxBK_wW_sS[_xP] instead of the sweep")
    p.add_argument("--rounds", type=int, default=1, help="interleaved timing rounds (median over them)")
    p.add_argument("--max-spills", type=int, default=64, help="skip timing configs spilling more")
    p.add_argument("--budget-s", type=float, default=360, help="stop starting new shapes after this")
    p.add_argument("--interpret-check", action="store_true")
    p.add_argument("--compile-sm90", action="store_true")
    p.add_argument("--dump-dir")
    p.add_argument("--compile-one")
    return p.parse_args()


if __name__ == "__main__":
    args = parse_args()
    if args.compile_one:
        compile_worker([dict(t, cfg=tuple(t["cfg"])) for t in json.loads(args.compile_one)])
    elif args.interpret_check:
        sys.exit(1 if main_interpret(args) else 0)
    elif args.compile_sm90:
        main_compile_sm90(args)
    else:
        main_gpu(args)
