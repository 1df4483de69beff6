# Type stubs of the C++ extension module (python/src/*.cpp). The public functions are the
# wrappers in tilecast/__init__.py; these are what they call.
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
    ) -> None: ...
    @overload
    def __init__(self, text: str) -> None: ...
    def __eq__(self, other: object) -> bool: ...

def parse_config(text: str) -> GemmConfig: ...
def format_config(config: GemmConfig) -> str: ...
def gemm_nt(
    a: Any,
    b: Any,
    out: Any,
    c: Any,
    out_dtype: Optional[str],
    config: GemmConfig,
    stream: int,
    alloc: Callable[[tuple, str], Any],
) -> Any: ...
def prepare(
    a: Any, b: Any, out: Any, c: Any, out_dtype: Optional[str], config: GemmConfig, alloc: Callable[[tuple, str], Any]
) -> Any: ...
def stream_synchronize(stream: int) -> None: ...
def warm(
    problems: list[tuple[int, int, int, int, str, bool, GemmConfig]],
    threads: int,
    device: str,
    progress: Optional[Callable[[int, int], None]],
) -> list[dict]: ...
def kernel_sources(
    problems: list[tuple[int, int, int, int, str, bool, GemmConfig]], device: str
) -> list[tuple[str, str, str, int]]: ...
def build_source(name: str, source: str, name_expression: str, threads: int) -> dict: ...
def plan(
    m: int, n: int, k: int, batch: int, out_dtype: str, with_c: bool, config: GemmConfig, top: int, device: str
) -> str: ...
def jit_cache_dir() -> str: ...
