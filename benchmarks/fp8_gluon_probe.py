"""Probe of a hand-written Gluon fp8 GEMM with promoted accumulation (sm_90a; GPU machine or CPU compile).

Issue 6: ckcore's fp8 e4m3 GEMM (plain Triton, persistent TMA kernels) reaches 0.869 of
``torch._scaled_mm`` with promoted (non-fast) accumulation and 0.983 with fast accumulation
(``benchmarks/fp8_promotion_probe.py``). Plain Triton gives no control over where the promotion add
sits relative to the wgmmas: ``max_num_imprecise_acc`` adds the partial right after the wgmmas, so
ptxas injects a wait and, for more than one m64 tile per warpgroup, serialises every wgmma. This
probe writes the kernel by hand in Gluon (``triton.experimental.gluon``, Hopper ``warpgroup_mma``)
to see whether explicit scheduling of the promotion closes the gap.

Problem: C[M, N] (bf16) = scale_a · scale_b · (A[M, K] @ B[K, N]); A row-major (K contiguous), B
given as b_t = B^T stored [N, K], K contiguous (layout "rcr", what ``torch._scaled_mm(a, b_t.t())``
takes), per-tensor fp32 scales read from one-element device tensors.

Design (one partition, no warp specialisation):
- persistent grid: min(#SM, #tiles) programs; program p walks tiles p, p + #programs, ... in grouped
  order (GROUP_M tile rows share their B columns in L2);
- the K loop of all of a program's tiles is one flattened stream of (tile, k-block) loads: TMA
  copies A [BM, BK] and B^T [BN, BK] into a STAGES-deep shared-memory ring, slot s guarded by
  mbarrier ready[s] (expect-bytes; the consumer waits with parity (i // STAGES) & 1). The loads
  run STAGES - 1 blocks ahead and cross tile boundaries, so the next tile's first blocks arrive
  during the current tile's epilogue;
- ``warpgroup_mma`` (fp32 accumulator, is_async; B is the K-major transposed view of the B^T
  tile) with at most one wgmma group in flight: after issuing block i the warpgroup waits until
  only block i's group is pending, then, after a CTA barrier (both warpgroups are past block
  i - 1), the ring slot of block i - 1 is refilled;
- promoted accumulation: PROMOTE_EVERY k-blocks are chained in one wgmma partial (the first with
  use_acc=False), then the partial is added into a separate fp32 total with ordinary fp32 adds.
  PROMOTE_EVERY=1 with BK=128 (or 2 with BK=64) is cuBLAS's non-fast interval (128 products per
  partial: four m64nNk32 wgmmas chained); PROMOTE_EVERY=4 with BK=128 promotes every 512 of K,
  which is less accurate than cuBLAS (a speed bound, not a candidate);
- ROUNDS chunks form a drain group. ROUNDS=1: at each promotion the warpgroup drains (wait 0) and
  adds, so its tensor-core work stops during the add. ROUNDS>=2: two partials p0 / p1 alternate
  chunk by chunk, and the add of the previous chunk's partial is placed after the first wgmma of
  the next chunk is issued (its wait leaves just that wgmma pending), so the add overlaps the
  tensor cores; only the group's last chunk drains. The drain at the end of each group is needed:
  a wgmma still in flight across the loop's back edge while the other partial is read makes ptxas
  serialise every wgmma (C7514, seen in compile-only). Three fp32 accumulators (total, p0, p1)
  live in registers: with 8 warps and a 128x128 tile each is 64 registers per thread;
- epilogue: total · scale_a · scale_b -> bf16 -> shared memory -> TMA store, whose completion is
  awaited only before the next tile's epilogue reuses the buffer.

Limits: M % BM == N % BN == 0 and K % (BK · PROMOTE_EVERY · ROUNDS) == 0, asserted on the host
(configurations that do not divide a row are reported as skipped); per-tensor scales only; no
split-K, no warp specialisation: the two warpgroups run in lockstep (a bar.sync before each
k-block's TMA issue, and Triton's shared-memory barrier analysis adds two more around the expect
and the copies), so at a drain both warpgroups add at once. A producer warp plus ping-pong
consumer warpgroups on different tiles, as cuBLAS / CUTLASS do, is the next step if the drains
cost what issue 6's gap suggests. Tiles with 128
registers of accumulator per thread (128x256 with 8 warps, 128x128 with 4 warps) spill with two
accumulators, and ROUNDS=4 spills too (compile-only reports both).

Twenty-sixth session: the next step, warp specialisation (``gl.warp_specialize``): a TMA producer
warp and two consumer warpgroups that meet only at the ring's mbarriers, each owning 64 rows of
the tile and promoting every 128 products. Measured here first (call 1 of that session, one H100,
benchmarks/results/fp8_gluon_ws_probe_h100.jsonl, 68 rows, every output within tolerance): 128x256
(two column halves per consumer) four stages 0.955 of torch._scaled_mm, three stages 0.952, 128x128
0.934 (0.942 with two k-blocks in flight per consumer), the best of four per row 0.978. That kernel
is now the gemm plugin's ``gemm_gluon_ws`` family (ck_plugin_gemm.gluon_ws); the ``ws_*`` configs
below render and compile it through ckcore (GPU mode needs ckcore installed).

Measured on one H100 (twenty-third session; benchmarks/results/fp8_gluon_probe_s23_h100.jsonl, all 68
fp8 rows, every output within tolerance): geomean 0.728 of torch._scaled_mm for _p1_r2, 0.547 for
_p1_r1, 0.512 for 128x128x64_w8_s6_p2_r2 and 0.817 for the _p4_r1 speed bound, all below the plain-Triton
kernels' 0.869: without warp specialisation the drains and the lockstep warpgroups cost more than
the promotion's placement gains. Compile-only
(Triton 3.6.0, its bundled ptxas; registers / spill bytes / shared bytes): 128x128x128_w8_s4_p1_r1
163 / 0 / 163872; _p1_r2 210 / 0 / 163872; 128x128x64_w8_s6_p2_r2 211 / 0 / 131120; _p4_r1 149 / 0;
_p1_r4 255 / 152; 128x256x128_w8_s3_p1_r1 and 128x128x128_w4_s4_p1_r1 255 / 104. No ptxas wgmma
advisory (C7514 / C7515 / C7517) for any of them.

The GPU mode checks every output against a float32 reference (a.float() @ b.float()) · sa · sb
(max |error| / max |ref| must stay under --tol, default 2e-2, a bound for the bf16 output), then
times the kernel and ``torch._scaled_mm(a, b_t.t(), scale_a, scale_b, out_dtype=bfloat16)``
(use_fast_accum=False unless --fast-accum) with CUDA events, a 256 MB L2 flush (a write) before
each run, median of --reps runs; one JSON line per (row, config).

usage: python benchmarks/fp8_gluon_probe.py compile-only [--configs NAME,...] [--dump DIR]
       python benchmarks/fp8_gluon_probe.py gpu [--rows NAME,...|all|quick] [--configs NAME,...]
                                                [--reps 20] [--tol 2e-2] [--fast-accum] > OUT.jsonl
Config names: BMxBNxBK_wW_sS_pP_rR (W warps, S stages, P = PROMOTE_EVERY, R = ROUNDS; see CONFIGS), and
ws_BMxBNxBK_sS[_n2] (the plugin's gemm_gluon_ws kernels; see WS_CONFIGS).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def disassemble(path):
    # The bundled CUDA tools, through sass_loop_loads (which imports ckcore: compile-only mode only).
    from sass_loop_loads import disassemble as dis
    return dis(path)


def tool(name):
    from sass_loop_loads import tool as find
    return find(name)

SUITE = HERE / "suites" / "gemm_fp8.jsonl"
QUICK = ("llama3-8b.o.fwd.m4096.fp8,llama3-8b.down.dgrad.m4096.fp8,llama3-8b.gate_up.fwd.m8192.fp8,"
         "llama3-8b.qkv.fwd.m1024.fp8")  # 4096^3, 4096x14336x4096, 8192x28672x4096, 1024x6144x4096

# name -> (BM, BN, BK, num_warps, STAGES, PROMOTE_EVERY, ROUNDS)
CONFIGS = {
    "128x128x128_w8_s4_p1_r1": (128, 128, 128, 8, 4, 1, 1),
    "128x128x128_w8_s4_p1_r2": (128, 128, 128, 8, 4, 1, 2),
    "128x128x128_w8_s4_p1_r4": (128, 128, 128, 8, 4, 1, 4),
    "128x128x64_w8_s6_p2_r2": (128, 128, 64, 8, 6, 2, 2),
    "128x128x128_w8_s4_p4_r1": (128, 128, 128, 8, 4, 4, 1),
    "128x256x128_w8_s3_p1_r1": (128, 256, 128, 8, 3, 1, 1),
    "128x128x128_w4_s4_p1_r1": (128, 128, 128, 4, 4, 1, 1),
}
# The plugin's warp-specialised kernels (ck_plugin_gemm.gluon_ws, family gemm_gluon_ws; rendered
# and compiled through ckcore): name -> (block_n, stages, n_split). The twenty-sixth session's first
# device call measured this kernel as written here first (with a PAIR variant: two k-blocks in flight
# per consumer, 128x128 four stages 0.942 against 0.934 without; not kept), then moved it into the
# plugin; benchmarks/results/fp8_gluon_ws_probe_h100.jsonl.
WS_CONFIGS = {
    "ws_128x128x128_s4": (128, 4, 1),
    "ws_128x128x128_s5": (128, 5, 1),
    "ws_128x256x128_s4_n2": (256, 4, 2),
    "ws_128x256x128_s3_n2": (256, 3, 2),
}
DEFAULT_CONFIGS = "128x128x128_w8_s4_p1_r1,128x128x128_w8_s4_p1_r2,128x128x128_w8_s4_p1_r4,128x128x64_w8_s6_p2_r2"
GROUP_M = 8


# --------------------------------------------------------------------------------------------
# kernel


@gluon.jit
def _tile_mn(tile, num_pid_m, num_pid_n, GROUP: gl.constexpr):
    # Grouped order: GROUP tile rows are walked column by column, so consecutive tiles of the
    # persistent stream share a B^T block column and GROUP programs reuse the same A rows.
    per_group = GROUP * num_pid_n
    first_m = (tile // per_group) * GROUP
    rows = gl.minimum(num_pid_m - first_m, GROUP)
    in_group = tile % per_group
    return first_m + in_group % rows, in_group // rows


@gluon.jit
def _fetch(n, n_loads, pid, nprog, num_k, num_pid_m, num_pid_n, a_desc, b_desc, a_ring, b_ring, ready,
           BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr, GROUP: gl.constexpr):
    # Issue load number n of this program's flattened (tile, k-block) stream into ring slot
    # n % STAGES; past the end of the stream the expect and both copies are predicated off. The
    # slot was last read by block n - STAGES, which every warpgroup has waited for before this
    # barrier (one thread issues the copies, so the other warpgroup must be past it too).
    gl.thread_barrier()
    live = n < n_loads
    tile = pid + (n // num_k) * nprog
    pm, pn = _tile_mn(tile, num_pid_m, num_pid_n, GROUP)
    k = (n % num_k) * BK
    slot = n % STAGES
    bar = ready.index(slot)
    mbarrier.expect(bar, (BM + BN) * BK, pred=live)  # fp8: one byte an element
    tma.async_copy_global_to_shared(a_desc, [pm * BM, k], bar, a_ring.index(slot), pred=live)
    tma.async_copy_global_to_shared(b_desc, [pn * BN, k], bar, b_ring.index(slot), pred=live)
    return n + 1


@gluon.jit
def _chunk_block(n, cur, prev, total, a_ring, b_ring, ready, J: gl.constexpr, R: gl.constexpr,
                 PROMOTE_EVERY: gl.constexpr, ROUNDS: gl.constexpr, STAGES: gl.constexpr):
    # Block J of chunk R of a drain group: wait for ring slot n % STAGES and chain one BK block onto
    # the partial cur (async; the chunk's first block starts it from zero). Then wait until only
    # this wgmma group is pending, which completes the previous block (its ring slot may be
    # refilled) and, at a chunk's first block, the previous chunk's partial prev, which is added
    # into total while this wgmma runs. The group's last block drains (wait 0): no wgmma is left
    # in flight across the loop's back edge (ptxas serialises every wgmma otherwise, C7514).
    slot = n % STAGES
    mbarrier.wait(ready.index(slot), (n // STAGES) & 1)
    if J == 0:
        # A fresh zero input instead of the old partial (use_acc=False ignores it anyway): the old
        # partial's registers stay free for its pending add, so no copy of them is needed.
        cur = gl.zeros_like(cur)
    cur = warpgroup_mma(a_ring.index(slot), b_ring.index(slot).permute((1, 0)), cur, use_acc=J > 0,
                        is_async=True)
    LAST: gl.constexpr = (R == ROUNDS - 1) and (J == PROMOTE_EVERY - 1)
    if R > 0 and J == 0:
        cur, prev = warpgroup_mma_wait(1, deps=(cur, prev))
        total += prev
    elif not LAST:
        cur = warpgroup_mma_wait(1, deps=(cur, ))
    if LAST:
        cur = warpgroup_mma_wait(0, deps=(cur, ))
    return cur, total


@gluon.jit
def fp8_gemm_promoted(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, M, N, K,
                      BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr,
                      PROMOTE_EVERY: gl.constexpr, ROUNDS: gl.constexpr, GROUP: gl.constexpr,
                      num_warps: gl.constexpr):
    # Accumulator layout: the warps stack along M (16 rows each, one warpgroup per m64 slab), one
    # wgmma instruction spans the whole BN (n <= 256) and k = 32 fp8 elements.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                         instr_shape=[16, BN, 32])
    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    num_pid_m = M // BM
    num_pid_n = N // BN
    num_k = K // BK
    num_tiles = num_pid_m * num_pid_n
    n_loads = ((num_tiles - pid + nprog - 1) // nprog) * num_k  # the host launches nprog <= num_tiles

    a_ring = gl.allocate_shared_memory(a_desc.dtype, [STAGES, BM, BK], a_desc.layout)
    b_ring = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BN, BK], b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, [BM, BN], c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
    fence_async_shared()

    scale = gl.load(scale_a_ptr) * gl.load(scale_b_ptr)

    # Prologue: STAGES - 1 loads in flight before the first wgmma.
    n_fetch = 0
    for _ in gl.static_range(STAGES - 1):
        n_fetch = _fetch(n_fetch, n_loads, pid, nprog, num_k, num_pid_m, num_pid_n, a_desc, b_desc, a_ring,
                         b_ring, ready, BM, BN, BK, STAGES, GROUP)
    n_use = 0
    for tile in range(pid, num_tiles, nprog):
        pm, pn = _tile_mn(tile, num_pid_m, num_pid_n, GROUP)
        total = gl.zeros([BM, BN], gl.float32, acc_layout)
        # Two partials alternate chunk by chunk (p0: even chunks, p1: odd ones); with ROUNDS = 1
        # only p0 is used and every promotion drains the warpgroup first.
        p0 = gl.zeros([BM, BN], gl.float32, acc_layout)
        p1 = gl.zeros([BM, BN], gl.float32, acc_layout)
        for _g in range(num_k // (PROMOTE_EVERY * ROUNDS)):
            for r in gl.static_range(ROUNDS):
                for j in gl.static_range(PROMOTE_EVERY):
                    if r % 2 == 0:
                        p0, total = _chunk_block(n_use, p0, p1, total, a_ring, b_ring, ready, j, r, PROMOTE_EVERY,
                                                 ROUNDS, STAGES)
                    else:
                        p1, total = _chunk_block(n_use, p1, p0, total, a_ring, b_ring, ready, j, r, PROMOTE_EVERY,
                                                 ROUNDS, STAGES)
                    n_use += 1
                    n_fetch = _fetch(n_fetch, n_loads, pid, nprog, num_k, num_pid_m, num_pid_n, a_desc, b_desc,
                                     a_ring, b_ring, ready, BM, BN, BK, STAGES, GROUP)
            if (ROUNDS - 1) % 2 == 0:  # the group's last partial, drained by its last block
                total += p0
            else:
                total += p1

        # Epilogue: the previous tile's TMA store must have read c_smem before it is rewritten.
        out = (total * scale).to(c_desc.dtype)
        tma.store_wait(0)
        gl.thread_barrier()
        c_smem.store(out)
        fence_async_shared()
        gl.thread_barrier()
        tma.async_copy_shared_to_global(c_desc, [pm * BM, pn * BN], c_smem)
    tma.store_wait(0)
    for s in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(s))


# --------------------------------------------------------------------------------------------
# host side


def ws_key(cfg):
    """The plugin's gemm_gluon_ws key of a WS_CONFIGS name: per-tensor scales, e4m3, bf16 out."""
    from ck_plugin_gemm.gluon_ws import GluonWsGemmKey
    bn, stages, split = WS_CONFIGS[cfg]
    return GluonWsGemmKey(dtype="fp8e4m3", layout="rcr", block_m=128, block_n=bn, block_k=128, num_warps=4,
                          num_stages=stages, n_split=split, epilogue="sten")


def ws_instance(cfg):
    """(registry, instance) of a WS_CONFIGS name (ws_key)."""
    from ckcore import Registry
    reg = Registry("sm_90", interpret=False)
    return reg, reg.add("gemm_gluon_ws", ws_key(cfg))


def ws_kernel(cfg):
    """The Gluon function of a WS_CONFIGS name, rendered by ckcore, and its launch options."""
    from ckcore.compiler.triton_driver import exec_source
    reg, inst = ws_instance(cfg)
    job = reg.job(inst)
    return getattr(exec_source(job.name, job.source), job.name), dict(job.options)


def cfg_constexprs(cfg):
    bm, bn, bk, warps, stages, promote, rounds = CONFIGS[cfg]
    return dict(BM=bm, BN=bn, BK=bk, STAGES=stages, PROMOTE_EVERY=promote, ROUNDS=rounds, GROUP=GROUP_M,
                num_warps=warps)


def blocks(cfg):
    """The A, B^T and C TMA block shapes of a config (the WS configs: the plugin's, whose A and C
    move in halves of 64 rows, one per consumer warpgroup, and C in column halves with n_split 2)."""
    if cfg in WS_CONFIGS:
        from ck_plugin_gemm.gluon_ws import _layouts
        return [list(block) for _, block, _ in _layouts(ws_key(cfg)).values()]
    ce = cfg_constexprs(cfg)
    return [ce["BM"], ce["BK"]], [ce["BN"], ce["BK"]], [ce["BM"], ce["BN"]]


def smem_layouts(cfg):
    a_blk, b_blk, c_blk = blocks(cfg)
    a_l = gl.NVMMASharedLayout.get_default_for(a_blk, gl.float8e4nv)
    b_l = gl.NVMMASharedLayout.get_default_for(b_blk, gl.float8e4nv)
    c_l = gl.NVMMASharedLayout.get_default_for(c_blk, gl.bfloat16)
    return a_l, b_l, c_l


def fits(cfg, M, N, K):
    if cfg in WS_CONFIGS:
        return M % 128 == 0 and N % WS_CONFIGS[cfg][0] == 0 and K % 128 == 0
    bm, bn, bk, _, _, promote, rounds = CONFIGS[cfg]
    return M % bm == 0 and N % bn == 0 and K % (bk * promote * rounds) == 0


def gluon_runner(a, b_t, sa, sb, c, cfg, num_sms):
    """A closure that computes c = sa * sb * (a @ b_t.t()) in bf16 with the Gluon kernel; the TMA
    descriptors are built once here, so a timed call is just the launch."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    M, K = a.shape
    N = b_t.shape[0]
    assert fits(cfg, M, N, K), f"{cfg}: M, N, K = {M}, {N}, {K} are not tile multiples"
    assert a.is_contiguous() and b_t.is_contiguous() and c.is_contiguous() and c.shape == (M, N)
    a_l, b_l, c_l = smem_layouts(cfg)
    a_blk, b_blk, c_blk = blocks(cfg)
    a_desc = TensorDescriptor.from_tensor(a, a_blk, a_l)
    b_desc = TensorDescriptor.from_tensor(b_t, b_blk, b_l)
    c_desc = TensorDescriptor.from_tensor(c, c_blk, c_l)
    if cfg in WS_CONFIGS:
        kernel, opts = ws_kernel(cfg)
        grid = (min(num_sms, (M // 128) * (N // WS_CONFIGS[cfg][0])), )
        return lambda: kernel[grid](a_desc, b_desc, c_desc, M, N, K, sa, sb, 1.0, 0.0, **opts)
    ce = cfg_constexprs(cfg)
    grid = (min(num_sms, (M // ce["BM"]) * (N // ce["BN"])), )
    return lambda: fp8_gemm_promoted[grid](a_desc, b_desc, c_desc, sa, sb, M, N, K, **ce)


# --------------------------------------------------------------------------------------------
# compile-only mode (CPU, sm_90a)


def _desc_sig(dtype, block, layout):
    # The signature string the JIT builds for a Gluon host TensorDescriptor argument.
    return f"tensordesc<{dtype}{list(block)},{layout!r}>"


def compile_sm90(cfg):
    """(cubin bytes, ptx text, shared bytes) of a config compiled for sm_90a on the CPU (the WS
    configs through ckcore's compiler driver, as the registry builds them)."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    if cfg in WS_CONFIGS:
        from ckcore.compiler import get_compiler
        reg, inst = ws_instance(cfg)
        files = get_compiler().compile(reg.job(inst))
        return files["kernel.cubin"], files["kernel.ptx"].decode(), json.loads(files["kernel.json"])["shared"]
    ce = cfg_constexprs(cfg)
    a_l, b_l, c_l = smem_layouts(cfg)
    a_blk, b_blk, c_blk = blocks(cfg)
    sig = {"a_desc": _desc_sig("fp8e4nv", a_blk, a_l),
           "b_desc": _desc_sig("fp8e4nv", b_blk, b_l),
           "c_desc": _desc_sig("bf16", c_blk, c_l),
           "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    for k in ce:
        sig[k] = "constexpr"
    names = fp8_gemm_promoted.arg_names
    attrs = {(names.index(k), ): [["tt.divisibility", 16]] for k in ("scale_a_ptr", "scale_b_ptr", "M", "N", "K")}
    src = GluonASTSource(fp8_gemm_promoted, sig, ce, attrs)
    ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=ce["num_warps"]))
    return ck.asm["cubin"], ck.asm["ptx"], ck.metadata.shared


def sass_stats(cubin):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        res, sass = disassemble(f.name)
    m = re.search(r"REG:(\d+).*?STACK:(\d+).*?SHARED:(\d+).*?LOCAL:(\d+)", res)
    ops = re.findall(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)", sass, re.M)
    count = lambda pred: sum(1 for op, _ in ops if pred(op))  # noqa: E731
    return {"regs": int(m.group(1)) if m else None, "stack": int(m.group(2)) if m else None,
            "local": int(m.group(4)) if m else None,
            "gmma": count(lambda op: op in ("QGMMA", "HGMMA", "WGMMA")),  # QGMMA: the fp8 form
            "warpgroup_wait": sum(1 for op, sfx in ops if op == "WARPGROUP" and "DEPBAR" in sfx)
            + count(lambda op: op == "WARPGROUPDEPBAR"),
            "utmaldg": count(lambda op: op == "UTMALDG"), "utmastg": count(lambda op: op == "UTMASTG"),
            "syncs": count(lambda op: op == "SYNCS"), "bar": count(lambda op: op == "BAR"),
            "fadd": count(lambda op: op == "FADD"), "sass_lines": len(ops)}, sass


def ptxas_notes(ptx):
    # ptxas's wgmma advisories (C7514 / C7515: wgmmas serialised; C7517: injected wait).
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([tool("ptxas"), "-arch=sm_90a", "-v", p, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
    text = r.stdout + r.stderr
    notes = sorted(set(re.findall(r"\b(C75\d\d)\b", text)))
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    return notes, (int(spill.group(1)), int(spill.group(2))) if spill else None, text


def main_compile(args):
    ok = 0
    for cfg in args.configs.split(","):
        t0 = time.time()
        try:
            cubin, ptx, shared = compile_sm90(cfg)
        except Exception as e:  # a probe: report and go on
            msg = str(e).strip().splitlines()
            print(json.dumps({"config": cfg, "compiled": False, "error": f"{type(e).__name__}: "
                              f"{' | '.join(msg[-4:])[:600]}"}), flush=True)
            continue
        st, sass = sass_stats(cubin)
        notes, spill, ptxas_text = ptxas_notes(ptx)
        tgt = re.search(r"^\.target\s+(\S+)", ptx, re.M)
        rec = {"config": cfg, "compiled": True, "ptx_target": tgt.group(1) if tgt else None,
               "ptxas_spill_bytes": spill, "shared_bytes": shared, **st, "ptxas_wgmma_notes": notes,
               "compile_s": round(time.time() - t0, 1)}
        print(json.dumps(rec), flush=True)
        ok += 1
        if args.dump:
            os.makedirs(args.dump, exist_ok=True)
            Path(args.dump, f"{cfg}.ptx").write_text(ptx)
            Path(args.dump, f"{cfg}.sass").write_text(sass)
            Path(args.dump, f"{cfg}.ptxas.txt").write_text(ptxas_text)
    return 0 if ok else 1


# --------------------------------------------------------------------------------------------
# GPU mode


def suite_rows(spec):
    rows = [json.loads(line) for line in SUITE.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("dtype") == "fp8e4m3" and r.get("layout") == "rcr"]
    if spec == "all":
        return rows
    want = (QUICK if spec == "quick" else spec).split(",")
    by_name = {r["name"]: r for r in rows}
    missing = [w for w in want if w not in by_name]
    assert not missing, f"rows not in {SUITE}: {missing}"
    return [by_name[w] for w in want]


def main_gpu(args):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    num_sms = props.multi_processor_count
    flush_buf = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev)
    configs = args.configs.split(",")
    print(json.dumps({"env": {"device": props.name, "sms": num_sms, "torch": torch.__version__,
                              "triton": triton.__version__, "configs": configs, "reps": args.reps,
                              "fast_accum_baseline": args.fast_accum, "tol": args.tol}}), flush=True)

    def time_us(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ts = []
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(args.reps):
            flush_buf.fill_(1)  # 256 MB write: evicts A, B and C from L2 (50 MB)
            torch.cuda._sleep(50_000)  # keeps the GPU busy while the host enqueues the launch
            st.record()
            fn()
            en.record()
            torch.cuda.synchronize()
            ts.append(st.elapsed_time(en) * 1e3)
        return statistics.median(ts)

    bad = 0
    for row in suite_rows(args.rows):
        M, N, K = row["M"], row["N"], row["K"]
        torch.manual_seed(0)
        a = (torch.randn(M, K, device=dev) * 0.5).to(torch.float8_e4m3fn)
        b_t = (torch.randn(N, K, device=dev) * 0.5).to(torch.float8_e4m3fn)  # B^T, K contiguous
        sa = torch.tensor([0.75], device=dev, dtype=torch.float32)
        sb = torch.tensor([1.25], device=dev, dtype=torch.float32)
        ref = (a.float() @ b_t.float().t()) * (sa * sb)
        ref_max = ref.abs().max().item()
        base = lambda: torch._scaled_mm(a, b_t.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,  # noqa: E731
                                        use_fast_accum=args.fast_accum)
        base_err = ((base().float() - ref).abs().max().item()) / ref_max
        t_base = time_us(base)
        flops = 2.0 * M * N * K
        for cfg in configs:
            rec = {"row": row["name"], "M": M, "N": N, "K": K, "config": cfg, "scaled_mm_us": round(t_base, 2),
                   "scaled_mm_tflops": round(flops / t_base / 1e6, 1), "scaled_mm_rel_err": base_err}
            if not fits(cfg, M, N, K):
                rec["skipped"] = "shape is not a tile multiple for this config"
                print(json.dumps(rec), flush=True)
                continue
            c = torch.full((M, N), float("nan"), device=dev, dtype=torch.bfloat16)
            try:
                run = gluon_runner(a, b_t, sa, sb, c, cfg, num_sms)
                run()
                torch.cuda.synchronize()
            except Exception as e:  # a probe: record and go on
                rec["error"] = f"{type(e).__name__}: {str(e)[-400:]}"
                print(json.dumps(rec), flush=True)
                bad += 1
                continue
            err = ((c.float() - ref).abs().max().item()) / ref_max  # NaN if any output was not written
            rec["rel_err"] = err
            rec["ok"] = bool(err <= args.tol)
            if not rec["ok"]:
                bad += 1
                print(json.dumps(rec), flush=True)
                continue
            t = time_us(run)
            rec.update(gluon_us=round(t, 2), gluon_tflops=round(flops / t / 1e6, 1), ratio=round(t_base / t, 3))
            print(json.dumps(rec), flush=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    pc = sub.add_parser("compile-only", help="compile for sm_90a on the CPU and report resources")
    pc.add_argument("--configs", default=",".join([*CONFIGS, *WS_CONFIGS]))
    pc.add_argument("--dump", default=None, help="write ptx / sass / ptxas -v output here")
    pg = sub.add_parser("gpu", help="check and time against torch._scaled_mm (H100 / H200)")
    pg.add_argument("--rows", default="all", help="'all' (every fp8 row of the suite), 'quick' or NAME,...")
    pg.add_argument("--configs", default=DEFAULT_CONFIGS)
    pg.add_argument("--reps", type=int, default=20)
    pg.add_argument("--tol", type=float, default=2e-2)
    pg.add_argument("--fast-accum", action="store_true", help="baseline with use_fast_accum=True")
    args = ap.parse_args()
    return main_compile(args) if args.mode == "compile-only" else main_gpu(args)


if __name__ == "__main__":
    sys.exit(main())
