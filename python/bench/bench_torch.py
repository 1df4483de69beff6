"""tilecast.gemm_nt against torch.matmul (cuBLAS) in the same process, on MISSION.md's shapes.

    python python/bench/bench_torch.py [--suite dense,m4096,m128,odd] [--iters 50] [--out results.md]

Each row times both in one loop (tilecast, torch, tilecast, ...) so that both see the same clocks:
CUDA events around each call only, a 256 MiB L2 flush before each, warm-up first, the median of
--iters. Kernels are compiled before timing (tilecast.warm). Reported: microseconds, TFLOPS, the
ratio to torch, the fraction of the roofline (989 TFLOPS dense BF16, 4.2 TB/s HBM, MISSION.md), and
the plan tilecast chose. A host-overhead row times back-to-back calls of a small cached GEMM.

Grouped GEMMs (against torch._grouped_mm and a per-expert loop) join GROUPED below once tilecast
has a grouped form; until then the suite says so and is skipped.
"""

import argparse
import json
import statistics
import sys
import time

import torch

import tilecast

PEAK_TFLOPS, HBM_TBPS = 989.0, 4.2
NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
SUITES = {
    "dense": [(8192, 8192, 8192), (4096, 4096, 4096)],
    "m4096": [(4096, n, k) for n, k in NK],
    "m128": [(128, n, k) for n, k in NK],
    "odd": [(4097, 4097, 4097), (4095, 7167, 4104), (129, 24577, 1536), (1009, 2003, 3001)],
}
GROUPED = {}  # "mgrouped": (groups, m per group, n, k) rows, once tilecast.m_grouped_gemm_nt_contiguous exists


def aligned(rows, cols, dtype=torch.bfloat16):
    """[rows, cols] with rows padded to 16 bytes (TMA's rule), as a view of a wider buffer."""
    per16 = 16 // torch.empty((), dtype=dtype).element_size()
    ld = (cols + per16 - 1) // per16 * per16
    return torch.randn(rows, ld, device="cuda", dtype=torch.float32).to(dtype)[:, :cols]


def timed(fns, iters, warmup, flush):
    """Median microseconds of each fn, interleaved, with the L2 flushed before every call."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fns]
    for _ in range(iters):
        for i, fn in enumerate(fns):
            flush.zero_()
            start, end = events[i]
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) * 1e3)
    return [statistics.median(t) for t in times]


def host_overhead(calls=2000):
    """Microseconds per call of back-to-back cached small GEMMs (host-bound)."""
    a, b = aligned(128, 128), aligned(128, 128)
    out = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
    rows = {}
    for name, fn in [("tilecast.gemm_nt", lambda: tilecast.gemm_nt(a, b, out=out)),
                     ("torch.matmul", lambda: torch.matmul(a, b.T, out=out))]:
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - t0
        torch.cuda.synchronize()
        rows[name] = elapsed / calls * 1e6
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="dense,m4096,m128,odd")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--out", default=None, help="also write the table (markdown) here")
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    shapes = []
    for name in args.suite.split(","):
        if name in GROUPED or name == "mgrouped":
            print(f"suite {name}: no grouped tilecast API yet, skipped", file=sys.stderr)
            continue
        shapes += [(name, *s) for s in SUITES[name]]

    t0 = time.time()
    warmed = tilecast.warm([s[1:] for s in shapes], progress=sys.stderr.isatty())
    compile_s = time.time() - t0
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    device = torch.cuda.get_device_name()
    lines = [
        f"# tilecast vs torch.matmul, {device}, torch {torch.__version__}, tilecast {tilecast.__version__}",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; `{' '.join(['bench_torch.py'] + (argv or sys.argv[1:]))}`; "
        f"median of {args.iters} after {args.warmup} warm-up calls, L2 flushed (256 MiB) before each call, "
        f"the two interleaved; JIT warm-up of {len(warmed)} kernels {compile_s:.1f} s",
        "",
        "| suite | m | n | k | tilecast us | torch us | tilecast TFLOPS | torch TFLOPS | ratio | roofline | plan |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []
    for suite, m, n, k in shapes:
        a, b = aligned(m, k), aligned(n, k)
        out_tc = aligned(m, n)
        out_th = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        tc_us, th_us = timed([lambda: tilecast.gemm_nt(a, b, out=out_tc), lambda: torch.matmul(a, b.T, out=out_th)],
                             args.iters, args.warmup, flush)
        err = ((out_tc.float() - out_th.float()).norm() / out_th.float().norm()).item()
        flops = 2.0 * m * n * k
        bytes_moved = 2.0 * (m * k + n * k + m * n)
        roof_us = max(flops / (PEAK_TFLOPS * 1e12), bytes_moved / (HBM_TBPS * 1e12)) * 1e6
        chosen = tilecast.plan(m, n, k, top=0).splitlines()[1].removeprefix("chosen: ")
        row = dict(suite=suite, m=m, n=n, k=k, tilecast_us=tc_us, torch_us=th_us, ratio=th_us / tc_us,
                   roofline=roof_us / tc_us, rel_err_vs_torch=err, plan=chosen)
        rows.append(row)
        lines.append(f"| {suite} | {m} | {n} | {k} | {tc_us:.1f} | {th_us:.1f} | {flops / tc_us / 1e6:.0f} | "
                     f"{flops / th_us / 1e6:.0f} | {th_us / tc_us:.3f}x | {roof_us / tc_us:.0%} | {chosen} |")
        print(lines[-1], flush=True)
        if err > 2e-2:
            print(f"  WARNING: tilecast and torch differ by {err:.3g} (relative)", file=sys.stderr)
    ratios = [r["ratio"] for r in rows]
    if ratios:
        lines += ["", f"geomean ratio (torch time / tilecast time): {statistics.geometric_mean(ratios):.3f}x "
                      f"over {len(ratios)} shapes, min {min(ratios):.3f}x"]
    overhead = host_overhead()
    lines += ["", "host time per call, 128x128x128 cached, back to back: " +
              ", ".join(f"{k} {v:.1f} us" for k, v in overhead.items())]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=device, rows=rows, host_overhead_us=overhead), f, indent=1)


if __name__ == "__main__":
    main()
