"""JIT warm-up, plans and the cache folder: tilecast.warm, tilecast.plan, tilecast.cache_dir."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Iterable, List, Optional, Sequence, Union

from . import _tilecast as _C
from ._frameworks import dtype_name
from ._gemm import ConfigLike, as_config

Problem = Union[Sequence[int], dict]


def _problem(p: Problem) -> tuple:
    """(m, n, k, batch, out_dtype, with_c, config) from (m, n, k), (m, n, k, batch) or a dict with
    keys m, n, k and optionally batch, out_dtype, with_c, config."""
    if isinstance(p, dict):
        unknown = set(p) - {"m", "n", "k", "batch", "out_dtype", "with_c", "config"}
        if unknown:
            raise ValueError(f"tilecast.warm: unknown problem keys {sorted(unknown)}")
        return (
            int(p["m"]),
            int(p["n"]),
            int(p["k"]),
            int(p.get("batch", 1)),
            dtype_name(p.get("out_dtype")) or "bfloat16",
            bool(p.get("with_c", False)),
            as_config(p.get("config")),
        )
    if len(p) not in (3, 4):
        raise ValueError(f"tilecast.warm: a problem is (m, n, k), (m, n, k, batch) or a dict, got {p!r}")
    m, n, k, *batch = (int(x) for x in p)
    return (m, n, k, batch[0] if batch else 1, "bfloat16", False, as_config(None))


def cache_dir() -> str:
    """The JIT's disk cache folder in this process: TILECAST_CACHE_DIR, else
    $XDG_CACHE_HOME/tilecast, else ~/.cache/tilecast, as read when the JIT was first used."""
    return _C.jit_cache_dir()


def _use_cache_dir(folder: str) -> None:
    folder = os.path.abspath(folder)
    os.environ["TILECAST_CACHE_DIR"] = folder
    current = _C.jit_cache_dir()  # the JIT reads the variable when it is first used
    if not current or os.path.abspath(current) != folder:
        raise _C.Error(
            f"tilecast: this process's JIT already uses the cache folder {current!r}: set TILECAST_CACHE_DIR "
            f"before the first GEMM or warm-up, or run `python -m tilecast.warm --cache-dir {folder}`"
        )


class _ProgressBar:
    """[#######.............] 7/20 kernels, 4.1 s   (on stderr, redrawn in place)"""

    def __init__(self, stream: Any = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.start
        end = "\n" if done == total else ""
        self.stream.write(f"\r[{bar}] {done}/{total} kernels, {elapsed:.1f} s{end}")
        self.stream.flush()


def _build(name: str, source: str, name_expression: str, threads: int) -> dict:
    """One kernel, in a worker process of warm(processes=)."""
    return _C.build_source(name, source, name_expression, threads)


def _warm_in_processes(items: list, processes: int, device: str, bar: Optional[_ProgressBar]) -> List[dict]:
    # The parent plans (it may use the GPU for the device's facts) and hands each worker a
    # generated source: a worker compiles only, never touching CUDA. "spawn": a fork of a process
    # that has threads or a CUDA context is not safe. Each worker keeps its precompiled headers
    # across the kernels it gets.
    import concurrent.futures
    import multiprocessing

    kernels = _C.kernel_sources(items, device)
    results: List[Optional[dict]] = [None] * len(kernels)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(min(processes, len(kernels) or 1), mp_context=context) as pool:
        futures = {pool.submit(_build, *k): i for i, k in enumerate(kernels)}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            results[futures[future]] = future.result()
            if bar:
                bar(done, len(kernels))
    return results


def warm(
    problems: Iterable[Problem],
    threads: Optional[int] = None,
    cache_dir: Optional[str] = None,
    progress: bool = True,
    device: str = "auto",
    dry_run: bool = False,
    processes: Optional[int] = None,
) -> List[dict]:
    """Compiles, in parallel, every kernel the GEMMs of `problems` will launch into the JIT disk
    cache, so that their first calls spend no time in NVRTC. Needs no GPU.

    problems: (m, n, k), (m, n, k, batch), or dicts with keys m, n, k and optionally batch,
        out_dtype ("bfloat16"/"float32"), with_c (bool) and config (as gemm_nt takes it).
    threads: compile threads in this process (default: every CPU).
    cache_dir: the cache folder (sets TILECAST_CACHE_DIR; it must be set before the process's
        first GEMM or warm-up, else tilecast.Error).
    progress: a progress bar on stderr.
    device: "auto" plans for the current GPU, or for the H200 model without one; "h200" always
        for the model (to fill a cache folder on a CPU machine for an H200).
    dry_run: compile nothing; return the kernels' names only.
    processes: compile in this many worker processes instead of threads (each with its own
        NVRTC and precompiled headers). A script that uses it needs the usual multiprocessing
        guard, `if __name__ == "__main__":`.

    Returns one dict per distinct kernel: name, from_cache, compile_seconds, registers,
    spill_bytes, stack_bytes, threads, report_found.
    """
    items = [_problem(p) for p in problems]
    if dry_run:
        return [{"name": name} for name, *_ in _C.kernel_sources(items, device)]
    if cache_dir is not None:
        _use_cache_dir(cache_dir)
    bar = _ProgressBar() if progress else None
    if processes is not None and processes > 1:
        return _warm_in_processes(items, processes, device, bar)
    return _C.warm(items, threads or os.cpu_count() or 1, device, bar)


def plan(
    m: int,
    n: int,
    k: int,
    batch: int = 1,
    out_dtype: Any = None,
    with_c: bool = False,
    config: ConfigLike = None,
    top: int = 8,
    device: str = "auto",
) -> str:
    """The plan tilecast.gemm_nt runs for this problem, as tilecast-plan prints it: the chosen
    config, then the `top` next-ranked ones with predicted time, waves and L2 -> SM bytes."""
    return _C.plan(m, n, k, batch, dtype_name(out_dtype) or "bfloat16", with_c, as_config(config), top, device)
