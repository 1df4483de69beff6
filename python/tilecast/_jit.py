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

KINDS = ("gemm_nt", "m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nt_masked",
         "k_grouped_bf16_gemm_nt_contiguous")
_KEYS = {"m", "n", "k", "batch", "out_dtype", "with_c", "bias", "config", "kind", "layout", "num_groups",
         "expected_m", "accumulate"}


def _problem(p: Problem) -> tuple:
    """The C++ module's problem tuple (kind, m, n, k, batch or num_groups, out_dtype, with C or
    accumulate, bias dtype, expected_m, layout, config) from (m, n, k), (m, n, k, batch) or a dict:

        gemm_nt (the default kind): m, n, k and optionally batch, out_dtype, with_c, bias (its dtype:
            "bfloat16" or "float32", as gemm_nt's bias= has), config;
        m_grouped_bf16_gemm_nt_contiguous: m (rows of a), n, k, num_groups, layout ("row_index" or
            "offsets");
        m_grouped_bf16_gemm_nt_masked: m (max_m), n, k, num_groups, expected_m;
        k_grouped_bf16_gemm_nt_contiguous: m, n, k (all groups' columns), num_groups, accumulate;
    and for each out_dtype and config (as the call takes them).
    """
    if not isinstance(p, dict):
        if len(p) not in (3, 4):
            raise ValueError(f"tilecast.warm: a problem is (m, n, k), (m, n, k, batch) or a dict, got {p!r}")
        m, n, k, *batch = (int(x) for x in p)
        return ("gemm_nt", m, n, k, batch[0] if batch else 1, "bfloat16", False, "", 0, "", as_config(None))
    unknown = set(p) - _KEYS
    if unknown:
        raise ValueError(f"tilecast.warm: unknown problem keys {sorted(unknown)}")
    kind = p.get("kind", "gemm_nt")
    if kind not in KINDS:
        raise ValueError(f"tilecast.warm: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    allowed = {"gemm_nt": {"batch", "with_c", "bias"},
               "m_grouped_bf16_gemm_nt_contiguous": {"num_groups", "layout"},
               "m_grouped_bf16_gemm_nt_masked": {"num_groups", "expected_m"},
               "k_grouped_bf16_gemm_nt_contiguous": {"num_groups", "accumulate"}}[kind]
    stray = set(p) - allowed - {"m", "n", "k", "out_dtype", "config", "kind"}
    if stray:
        raise ValueError(f"tilecast.warm: {kind} takes no {', '.join(sorted(stray))}")
    if kind != "gemm_nt" and "num_groups" not in p:
        raise ValueError(f"tilecast.warm: {kind} needs num_groups")
    if kind == "m_grouped_bf16_gemm_nt_masked" and "expected_m" not in p:
        raise ValueError(f"tilecast.warm: {kind} needs expected_m")
    bias = p.get("bias")
    return (
        kind,
        int(p["m"]),
        int(p["n"]),
        int(p["k"]),
        int(p.get("batch", 1) if kind == "gemm_nt" else p["num_groups"]),
        dtype_name(p.get("out_dtype")) or "bfloat16",
        bool(p.get("with_c", False) or p.get("accumulate", False)),
        "" if bias is None else dtype_name(bias),
        int(p.get("expected_m", 0)),
        p.get("layout", "row_index") if kind == "m_grouped_bf16_gemm_nt_contiguous" else "",
        as_config(p.get("config")),
    )


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
        out_dtype ("bfloat16"/"float32"), with_c (bool), bias (its dtype) and config (as gemm_nt
        takes it); for the grouped GEMMs dicts with kind (the function's name) and its sizes:
        dict(kind="m_grouped_bf16_gemm_nt_masked", m=max_m, n=n, k=k, num_groups=32, expected_m=20),
        dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=rows, n=n, k=k, num_groups=8, layout="offsets"),
        dict(kind="k_grouped_bf16_gemm_nt_contiguous", m=m, n=n, k=k, num_groups=4, accumulate=True).
        A grouped plan depends on sizes and hints only (never the group data), so these are exact.
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
    *,
    bias: Any = None,
    kind: str = "gemm_nt",
    num_groups: Optional[int] = None,
    layout: str = "row_index",
    expected_m: Optional[int] = None,
    accumulate: bool = False,
) -> str:
    """The plan a call runs for this problem, as tilecast-plan prints it: the chosen config, then
    the `top` next-ranked ones with predicted time, waves and L2 -> SM bytes. By default the
    problem is gemm_nt's (with_c, bias: the epilogue's dtype); kind= names a grouped GEMM, with
    warm()'s keys for its sizes: plan(8 * 4096, 4096, 7168, kind="m_grouped_bf16_gemm_nt_contiguous",
    num_groups=8, layout="offsets")."""
    problem: dict = dict(m=m, n=n, k=k, out_dtype=out_dtype, config=config, kind=kind)
    if kind == "gemm_nt":
        problem.update(batch=batch, with_c=with_c, bias=bias)
    else:
        if batch != 1 or with_c or bias is not None:
            raise ValueError(f"tilecast.plan: {kind} takes no batch, with_c or bias (num_groups, accumulate)")
        if num_groups is not None:
            problem.update(num_groups=num_groups)
        if kind == "m_grouped_bf16_gemm_nt_contiguous":
            problem.update(layout=layout)
        elif kind == "m_grouped_bf16_gemm_nt_masked" and expected_m is not None:
            problem.update(expected_m=expected_m)
        elif kind == "k_grouped_bf16_gemm_nt_contiguous":
            problem.update(accumulate=accumulate)
    return _C.plan(_problem(problem), top, device)
