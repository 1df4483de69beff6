"""python -m tilecast.warm: compile the kernels of a list of GEMMs into the JIT disk cache.

    python -m tilecast.warm --shape 4096,2112,7168 --shape 128,7168,2048,8 --threads 16
    python -m tilecast.warm --shape 4096,576,7168 --plan      # also print each shape's plan
    python -m tilecast.warm --kind m_grouped_bf16_gemm_nt_masked --shape 256,4096,7168,32 --expected-m 20
                                       # grouped: M,N,K,NUM_GROUPS (m: rows of a; masked: max_m)

Run it as a module (`python -m`); from Python call tilecast.warm(problems, ...) instead.
"""

import argparse
import sys

import tilecast
from tilecast._jit import KINDS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tilecast.warm", description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", action="append", default=[], metavar="M,N,K[,BATCH]", help="a GEMM (repeatable)")
    p.add_argument("--out", choices=("bf16", "fp32"), default="bf16", help="output dtype")
    p.add_argument("--with-c", action="store_true", help="with the addend C")
    p.add_argument("--bias", choices=("bf16", "fp32"), default=None, help="with a bias of this dtype")
    p.add_argument("--kind", choices=KINDS, default="gemm_nt",
                   help="which call (the grouped ones take M,N,K,NUM_GROUPS)")
    p.add_argument("--layout", choices=("row_index", "offsets"), default="row_index", help="m-grouped contiguous")
    p.add_argument("--expected-m", type=int, default=None, help="m-grouped masked: the rows per expert expected")
    p.add_argument("--accumulate", action="store_true", help="k-grouped: D += A_g @ B_g^T")
    p.add_argument("--config", default=None, help="config text, e.g. block=128x256x64,cluster=2x1")
    p.add_argument("--threads", type=int, default=None, help="compile threads (default: every CPU)")
    p.add_argument("--processes", type=int, default=None, help="compile in this many processes instead of threads")
    p.add_argument("--cache-dir", default=None, help="the cache folder (default: TILECAST_CACHE_DIR or ~/.cache)")
    p.add_argument("--device", choices=("auto", "h200"), default="auto", help="plan for the current GPU or the H200 model")
    p.add_argument("--plan", action="store_true", help="print each shape's plan first")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--dry-run", action="store_true", help="only list the kernels a warm-up would compile")
    args = p.parse_args(argv)
    if not args.shape:
        p.error("give at least one --shape")
    problems = []
    for text in args.shape:
        try:
            dims = [int(x) for x in text.split(",")]
        except ValueError:
            p.error(f"--shape {text}: expected M,N,K[,BATCH]")
        if len(dims) not in (3, 4):
            p.error(f"--shape {text}: expected M,N,K[,BATCH]")
        m, n, k, *batch = dims
        q = dict(m=m, n=n, k=k, out_dtype=args.out, config=args.config, kind=args.kind)
        if args.kind == "gemm_nt":
            q.update(batch=batch[0] if batch else 1, with_c=args.with_c, bias=args.bias)
        else:
            if not batch:
                p.error(f"--shape {text}: {args.kind} wants M,N,K,NUM_GROUPS")
            q.update(num_groups=batch[0])
            q.update({"m_grouped_bf16_gemm_nt_contiguous": dict(layout=args.layout),
                      "m_grouped_bf16_gemm_nt_masked": dict(expected_m=args.expected_m or m),
                      "k_grouped_bf16_gemm_nt_contiguous": dict(accumulate=args.accumulate)}[args.kind])
        problems.append(q)
    try:
        if args.plan:
            for q in problems:
                print(tilecast.plan(**q, device=args.device))
        kernels = tilecast.warm(problems, threads=args.threads, cache_dir=args.cache_dir,
                                progress=not args.no_progress, device=args.device, dry_run=args.dry_run,
                                processes=args.processes)
    except (tilecast.Error, ValueError, TypeError) as e:
        print(f"python -m tilecast.warm: {e}", file=sys.stderr)
        return 1
    if args.dry_run:
        print("\n".join(k["name"] for k in kernels))
        return 0
    compiled = [k for k in kernels if not k["from_cache"]]
    for k in kernels:
        print(f"{'cached' if k['from_cache'] else 'compiled':8} {k['compile_seconds']:6.2f} s  regs {k['registers']:3}  "
              f"spill {k['spill_bytes']:4} B  {k['name']}")
    seconds = sum(k["compile_seconds"] for k in compiled)
    print(f"{len(kernels)} kernels: {len(compiled)} compiled in {seconds:.1f} s of NVRTC, cache {tilecast.cache_dir()}")
    return 1 if any(k["spill_bytes"] for k in kernels) else 0


if __name__ == "__main__":
    sys.exit(main())
