"""tilecast against torch.matmul (cuBLAS) and torch._grouped_mm in the same process, on MISSION.md's shapes.

    python python/bench/bench_torch.py [--suite dense,m4096,m128,odd,mgrouped,masked,kgrouped] [--iters 50]
                                       [--out results.md]

Each row times both in one loop (tilecast, torch, tilecast, ...) so that both see the same clocks:
CUDA events around each call only, a 256 MiB L2 flush before each, warm-up first, the median of
--iters. Kernels are compiled before timing (tilecast.warm, in parallel). Reported: microseconds, TFLOPS, the
ratio to torch, the fraction of the roofline (989 TFLOPS dense BF16, 4.2 TB/s HBM, MISSION.md), and
the plan tilecast chose. A host-overhead row times back-to-back calls of a small cached GEMM.

The grouped suites (GROUPED below: DeepGEMM's m-grouped and masked shapes, weight-gradient
k-grouped shapes) time tilecast's grouped call against torch._grouped_mm (where the installed
torch has it; else the table says so) and a per-expert loop of torch.matmul (masked: torch.bmm), in the same
interleaved loop: every expert gets the same rows (masked: every count is max_m), so all three do
the same work. m-grouped uses the offsets layout (suite mgrouped_ri: the row index); outputs are
bf16. The "vs best" ratio is to the faster of the two baselines (MISSION.md's m-grouped target).
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
GROUPED_NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
GROUPED = {  # (groups, m per group, n, k); kgrouped: (groups, m, n, k per group)
    "mgrouped": [(g, m, n, k) for g, m in ((4, 8192), (8, 4096)) for n, k in GROUPED_NK],
    "mgrouped_ri": [(g, m, n, k) for g, m in ((4, 8192), (8, 4096)) for n, k in GROUPED_NK],
    "masked": [(g, m, n, k) for g, m in ((32, 192), (6, 1024), (32, 20), (6, 20)) for n, k in ((4096, 7168), (7168, 2048))],
    "kgrouped": [(4, 4096, 7168, 4096), (8, 4096, 7168, 2048), (4, 7168, 2048, 4096), (8, 2048, 7168, 1024)],
}


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


def grouped_warm_problem(suite, groups, m, n, k):
    """The tilecast.warm problem of a grouped row (the same sizes grouped_problem gives the call)."""
    if suite in ("mgrouped", "mgrouped_ri"):
        return dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=groups * m, n=n, k=k, num_groups=groups,
                    layout="offsets" if suite == "mgrouped" else "row_index")
    if suite == "masked":
        return dict(kind="m_grouped_bf16_gemm_nt_masked", m=m, n=n, k=k, num_groups=groups, expected_m=m)
    return dict(kind="k_grouped_bf16_gemm_nt_contiguous", m=m, n=n, k=groups * k, num_groups=groups)


def grouped_problem(suite, groups, m, n, k):
    """(tilecast call, torch._grouped_mm call or None, per-expert loop, FLOPs, bytes, label, check)."""
    bf16 = torch.bfloat16
    if suite in ("mgrouped", "mgrouped_ri"):
        rows = groups * m
        a, b = aligned(rows, k), torch.randn(groups, n, k, device="cuda").to(bf16)
        ends = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * m
        if suite == "mgrouped":
            layout, data = "offsets", torch.cat([torch.zeros(1, device="cuda", dtype=torch.int32), ends])
        else:
            layout, data = "row_index", torch.arange(groups, device="cuda", dtype=torch.int32).repeat_interleave(m)
        d_tc, d_th, d_loop = (torch.empty(rows, n, device="cuda", dtype=bf16) for _ in range(3))
        tilecast.prepare_m_grouped_bf16_gemm_nt_contiguous(a, b, d_tc, data, layout)
        tc = lambda: tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d_tc, data, layout)  # noqa: E731
        bt = b.transpose(-2, -1)
        th = lambda: torch._grouped_mm(a, bt, offs=ends, out_dtype=bf16)  # noqa: E731
        loop = lambda: [torch.matmul(a[g * m:(g + 1) * m], b[g].T, out=d_loop[g * m:(g + 1) * m])  # noqa: E731
                        for g in range(groups)]
        flops, moved = 2.0 * rows * n * k, 2.0 * (rows * k + groups * n * k + rows * n)
        label = f"{groups}x{m} rows ({layout})"
    elif suite == "masked":
        a, b = torch.randn(groups, m, k, device="cuda").to(bf16), torch.randn(groups, n, k, device="cuda").to(bf16)
        masked_m = torch.full((groups,), m, device="cuda", dtype=torch.int32)
        d_tc, d_loop = (torch.empty(groups, m, n, device="cuda", dtype=bf16) for _ in range(2))
        tilecast.prepare_m_grouped_bf16_gemm_nt_masked(a, b, d_tc, masked_m, m)
        tc = lambda: tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d_tc, masked_m, m)  # noqa: E731
        bt = b.transpose(-2, -1)
        th = lambda: torch._grouped_mm(a, bt, out_dtype=bf16)  # noqa: E731
        loop = lambda: torch.bmm(a, bt, out=d_loop)  # noqa: E731
        flops, moved = 2.0 * groups * m * n * k, 2.0 * groups * (m * k + n * k + m * n)
        label = f"{groups} experts x {m} rows (masked, all full)"
    else:  # kgrouped: m, n, k per group
        total = groups * k
        a, b = aligned(m, total), aligned(n, total)
        k_sizes = torch.full((groups,), k, device="cuda", dtype=torch.int32)
        ends = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * k
        d_tc, d_loop = (torch.empty(groups, m, n, device="cuda", dtype=bf16) for _ in range(2))
        tilecast.prepare_k_grouped_bf16_gemm_nt_contiguous(a, b, d_tc, k_sizes)
        tc = lambda: tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d_tc, k_sizes)  # noqa: E731
        th = lambda: torch._grouped_mm(a, b.T, offs=ends, out_dtype=bf16)  # noqa: E731
        loop = lambda: [torch.matmul(a[:, g * k:(g + 1) * k], b[:, g * k:(g + 1) * k].T, out=d_loop[g])  # noqa: E731
                        for g in range(groups)]
        flops, moved = 2.0 * m * n * total, 2.0 * (m * total + n * total + groups * m * n)
        label = f"{groups} groups x k {k} (weight gradient)"
    if not hasattr(torch, "_grouped_mm"):
        th = None
    return tc, th, loop, flops, moved, label, (d_tc, d_loop)


def grouped_rows(grouped, args, flush, rows):
    """The grouped suites' table (markdown lines); appends their rows to `rows`."""
    have_grouped_mm = hasattr(torch, "_grouped_mm")
    lines = ["", "| suite | problem | n | k | tilecast us | _grouped_mm us | loop us | tilecast TFLOPS | "
             "vs _grouped_mm | vs loop | vs best | roofline |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = [] if have_grouped_mm else [f"torch {torch.__version__} has no torch._grouped_mm: its column is empty"]
    t0 = time.time()
    for suite, groups, m, n, k in grouped:
        tc, th, loop, flops, moved, label, (d_tc, d_loop) = grouped_problem(suite, groups, m, n, k)
        th_out = None
        if th is not None:
            try:
                th_out = th()
                torch.cuda.synchronize()
            except Exception as e:  # a form or shape this torch's _grouped_mm refuses
                notes.append(f"{suite} {label} n={n} k={k}: torch._grouped_mm failed ({str(e).splitlines()[0]})")
                th = None
        fns = [tc, loop] + ([th] if th is not None else [])
        times = timed(fns, args.iters, args.warmup, flush)
        tc_us, loop_us = times[0], times[1]
        th_us = times[2] if th is not None else None
        err = ((d_tc.float() - d_loop.float()).norm() / d_loop.float().norm()).item()
        if err > 2e-2:
            print(f"  WARNING: {suite} {label}: tilecast and the torch loop differ by {err:.3g} (relative)",
                  file=sys.stderr)
        if th_out is not None:
            th_err = ((th_out.reshape(d_loop.shape).float() - d_loop.float()).norm() / d_loop.float().norm()).item()
            if th_err > 2e-2:
                print(f"  WARNING: {suite} {label}: torch._grouped_mm and the torch loop differ by {th_err:.3g}",
                      file=sys.stderr)
        roof_us = max(flops / (PEAK_TFLOPS * 1e12), moved / (HBM_TBPS * 1e12)) * 1e6
        best = min(t for t in (th_us, loop_us) if t is not None)
        row = dict(suite=suite, groups=groups, m=m, n=n, k=k, problem=label, tilecast_us=tc_us, grouped_mm_us=th_us,
                   loop_us=loop_us, ratio_grouped_mm=th_us / tc_us if th_us else None, ratio_loop=loop_us / tc_us,
                   ratio_best=best / tc_us, roofline=roof_us / tc_us, rel_err_vs_loop=err)
        rows.append(row)
        lines.append(f"| {suite} | {label} | {n} | {k} | {tc_us:.1f} | {f'{th_us:.1f}' if th_us else '-'} | "
                     f"{loop_us:.1f} | {flops / tc_us / 1e6:.0f} | {f'{th_us / tc_us:.3f}x' if th_us else '-'} | "
                     f"{loop_us / tc_us:.3f}x | {best / tc_us:.3f}x | {roof_us / tc_us:.0%} |")
        print(lines[-1], flush=True)
        del tc, th, loop, d_tc, d_loop, th_out
    by_best = [r["ratio_best"] for r in rows if "ratio_best" in r]
    lines += ["", f"grouped: geomean ratio to the better torch baseline {statistics.geometric_mean(by_best):.3f}x over "
                  f"{len(by_best)} problems, min {min(by_best):.3f}x ({time.time() - t0:.0f} s)"]
    return lines + [f"note: {n}" for n in notes]


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
    p.add_argument("--suite", default="dense,m4096,m128,odd,mgrouped,masked,kgrouped")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--out", default=None, help="also write the table (markdown) here")
    p.add_argument("--json", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    shapes, grouped = [], []
    for name in args.suite.split(","):
        if name in GROUPED:
            grouped += [(name, *s) for s in GROUPED[name]]
        elif name in SUITES:
            shapes += [(name, *s) for s in SUITES[name]]
        else:
            p.error(f"unknown suite {name!r}: one of {', '.join([*SUITES, *GROUPED])}")

    t0 = time.time()
    warmed = tilecast.warm([s[1:] for s in shapes] + [grouped_warm_problem(*g) for g in grouped],
                           progress=sys.stderr.isatty())
    compile_s = time.time() - t0
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    device = torch.cuda.get_device_name()
    lines = [
        f"# tilecast vs torch.matmul and torch._grouped_mm, {device}, torch {torch.__version__}, tilecast {tilecast.__version__}",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; `{' '.join(['bench_torch.py'] + (argv or sys.argv[1:]))}`; "
        f"median of {args.iters} after {args.warmup} warm-up calls, L2 flushed (256 MiB) before each call, "
        f"the two interleaved; JIT warm-up of {len(warmed)} kernels {compile_s:.1f} s",
    ]
    if shapes:
        lines += ["", "| suite | m | n | k | tilecast us | torch us | tilecast TFLOPS | torch TFLOPS | ratio | roofline | plan |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
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
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        lines += ["", f"geomean ratio (torch time / tilecast time): {statistics.geometric_mean(ratios):.3f}x "
                      f"over {len(ratios)} shapes, min {min(ratios):.3f}x"]
    if grouped:
        lines += grouped_rows(grouped, args, flush, rows)
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
