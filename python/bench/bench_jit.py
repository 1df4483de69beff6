"""NVRTC time of a JIT warm-up: N distinct GEMM kernels (DeepGEMM's shapes and more, planned for
the current GPU, or the H200 model without one) compiled into a fresh cache folder.

    CUDA_CACHE_DISABLE=1 python python/bench/bench_jit.py --kernels 60 [--processes]
    TILECAST_JIT_PCH=0 ...                                  # without precompiled headers

Prints one line: kernels, threads or processes, wall time, and per-kernel NVRTC seconds. Set
CUDA_CACHE_DISABLE=1 on a machine with a GPU driver: its compute cache would answer repeated
compiles without running ptxas.
"""

import argparse
import os
import tempfile
import time

import tilecast

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048),
      (4096, 4096), (4097, 4097), (2003, 3001)]
MS = (4096, 128, 1024, 256, 8192, 64, 2048, 512, 4097, 1009, 32)
EPILOGUES = (("bfloat16", False), ("float32", True), ("float32", False), ("bfloat16", True))


def problems_for(kernels: int) -> list:
    """Problems, in a fixed order, until they need `kernels` distinct kernels (the H200 model has
    60 among these)."""
    chosen, names = [], set()
    for m in MS:
        for out, with_c in EPILOGUES:
            for n, k in NK:
                p = dict(m=m, n=n, k=k, out_dtype=out, with_c=with_c)
                new = {x["name"] for x in tilecast.warm([p], dry_run=True)} - names
                if new and len(names) < kernels:
                    chosen.append(p)
                    names |= new
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", type=int, default=60)
    parser.add_argument("--processes", action="store_true", help="one worker process per CPU instead of threads")
    args = parser.parse_args()
    problems = problems_for(args.kernels)
    cpus = os.cpu_count() or 1
    parallel = dict(processes=cpus) if args.processes else dict(threads=cpus)
    t0 = time.time()
    kernels = tilecast.warm(problems, cache_dir=tempfile.mkdtemp(prefix="tilecast-bench-jit-"), progress=False,
                            **parallel)
    wall = time.time() - t0
    each = sorted(k["compile_seconds"] for k in kernels)
    mode = "processes" if args.processes else "threads"
    print(f"warm-up of {len(kernels)} kernels, {cpus} {mode}, PCH {os.environ.get('TILECAST_JIT_PCH', '1')}: "
          f"{wall:.1f} s wall; NVRTC per kernel min {each[0]:.2f} median {each[len(each) // 2]:.2f} "
          f"max {each[-1]:.2f} s")


if __name__ == "__main__":
    main()
