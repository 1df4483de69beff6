# Type stubs of the C++ extension module (python/src/*.cpp). The public functions are the
# wrappers of tilecast/_gemm.py, _grouped.py and _jit.py (exported by __init__.py); these are what
# they call.
from typing import Any, Callable, Optional, overload

__version__: str

class Error(RuntimeError):
    """What the C++ API refuses (alignment, overlap, a bad config) and JIT or CUDA failures."""

class GemmConfig:
    block_m: int
    block_n: int
    block_k: int
    stages: int
    cluster_m: int
    cluster_n: int
    multicast_a: int
    multicast_b: int
    swizzle: int
    max_sms: int
    companion: int
    k_splits: int
    swap_ab: int
    fused_reduce: int
    cluster_reduce: int
    split_columns: int
    pingpong: int
    k_serpentine: int
    @overload
    def __init__(
        self,
        *,
        block_m: int = 0,
        block_n: int = 0,
        block_k: int = 0,
        stages: int = 0,
        cluster_m: int = 0,
        cluster_n: int = 0,
        multicast_a: int = -1,
        multicast_b: int = -1,
        swizzle: int = 0,
        max_sms: int = 0,
        companion: int = -1,
        k_splits: int = 0,
        swap_ab: int = -1,
        fused_reduce: int = -1,
        cluster_reduce: int = -1,
        split_columns: int = -1,
        pingpong: int = -1,
        k_serpentine: int = -1,
    ) -> None: ...
    @overload
    def __init__(self, text: str) -> None: ...
    def __eq__(self, other: object) -> bool: ...

def parse_config(text: str) -> GemmConfig: ...
def format_config(config: GemmConfig) -> str: ...
Alloc = Callable[[tuple, str], Any]

def gemm_nt(
    a: Any,
    b: Any,
    out: Any,
    c: Any,
    bias: Any,
    alpha: float,
    beta: float,
    out_dtype: Optional[str],
    config: GemmConfig,
    stream: int,
    alloc: Alloc,
) -> Any: ...
def prepare(
    a: Any,
    b: Any,
    out: Any,
    c: Any,
    bias: Any,
    alpha: float,
    beta: float,
    out_dtype: Optional[str],
    config: GemmConfig,
    alloc: Alloc,
) -> Any: ...
def m_grouped_bf16_gemm_nt_contiguous(
    a: Any,
    b: Any,
    d: Any,
    grouped_layout: Any,
    layout: str,
    out_dtype: Optional[str],
    config: GemmConfig,
    stream: int,
    alloc: Alloc,
) -> Any: ...
def prepare_m_grouped_bf16_gemm_nt_contiguous(
    a: Any, b: Any, d: Any, grouped_layout: Any, layout: str, out_dtype: Optional[str], config: GemmConfig, alloc: Alloc
) -> Any: ...
def m_grouped_bf16_gemm_nt_masked(
    a: Any,
    b: Any,
    d: Any,
    masked_m: Any,
    expected_m: int,
    out_dtype: Optional[str],
    config: GemmConfig,
    stream: int,
    alloc: Alloc,
) -> Any: ...
def prepare_m_grouped_bf16_gemm_nt_masked(
    a: Any, b: Any, d: Any, masked_m: Any, expected_m: int, out_dtype: Optional[str], config: GemmConfig, alloc: Alloc
) -> Any: ...
def k_grouped_bf16_gemm_nt_contiguous(
    a: Any,
    b: Any,
    d: Any,
    k_sizes: Any,
    c: Any,
    out_dtype: Optional[str],
    config: GemmConfig,
    stream: int,
    alloc: Alloc,
) -> Any: ...
def prepare_k_grouped_bf16_gemm_nt_contiguous(
    a: Any, b: Any, d: Any, k_sizes: Any, c: Any, out_dtype: Optional[str], config: GemmConfig, alloc: Alloc
) -> Any: ...
def stream_synchronize(stream: int, device: int = -1) -> None: ...
def take_layout_fault_report() -> Optional[str]: ...
def take_wait_timeout_report() -> Optional[str]: ...
# (kind, m, n, k, batch or num_groups, out dtype, with C or accumulate, bias dtype or "", expected_m,
# layout, config): tilecast/_jit.py's _problem makes them.
Problem = tuple[str, int, int, int, int, str, bool, str, int, str, GemmConfig]

def warm(
    problems: list[Problem],
    threads: int,
    device: str,
    progress: Optional[Callable[[int, int], None]],
) -> list[dict]: ...
def kernel_sources(problems: list[Problem], device: str) -> list[tuple[str, str, str, int]]: ...
def build_source(name: str, source: str, name_expression: str, threads: int) -> dict: ...
def plan(problem: Problem, top: int, device: str) -> str: ...
def jit_cache_dir() -> str: ...
