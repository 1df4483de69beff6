"""torch custom ops (torch.library), registered only when torch is importable:

    torch.ops.tilecast.gemm_nt(a, b, c, out_dtype, config) -> Tensor
    torch.ops.tilecast.gemm_nt_out(a, b, out, c, config) -> ()      (writes out)

Each has a fake (meta) implementation, so torch.compile traces tilecast.gemm_nt without a graph
break (tilecast.gemm_nt routes itself here while dynamo traces). Eager calls skip the dispatcher
and call the C++ module directly (fewer microseconds per call). Under torch.compile the config
must be None or a config string: a GemmConfig object is converted in C++, which dynamo cannot
trace.
"""

# No `from __future__ import annotations` here: torch.library reads the ops' schemas from the
# annotations, which must be real types.
from typing import Any, Optional

from ._frameworks import dtype_name

try:
    import torch
except ImportError:  # torch is optional
    torch = None


def tracing(a: Any) -> bool:
    """Whether dynamo is tracing this call (so it must go through the custom op)."""
    return torch is not None and isinstance(a, torch.Tensor) and torch.compiler.is_compiling()


def _config_text(config: Any) -> str:
    if config is None:
        return ""
    if isinstance(config, str):
        return config
    return str(config)  # a GemmConfig: its text, from C++ (dynamo breaks the graph there)


if torch is not None:
    # The ops' bodies run eagerly (dynamo sees only the fake implementations), so they may import
    # _gemm, which imports this module, at call time.

    @torch.library.custom_op("tilecast::gemm_nt", mutates_args=())
    def _gemm_nt_op(
        a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor], out_dtype: Optional[torch.dtype], config: str
    ) -> torch.Tensor:
        from ._gemm import gemm_nt

        return gemm_nt(a, b, None, c, out_dtype, config or None)

    @_gemm_nt_op.register_fake
    def _gemm_nt_fake(a, b, c, out_dtype, config):
        dtype = out_dtype if out_dtype is not None else (c.dtype if c is not None else torch.bfloat16)
        return a.new_empty((*a.shape[:-1], b.shape[-2]), dtype=dtype)

    @torch.library.custom_op("tilecast::gemm_nt_out", mutates_args=("out",))
    def _gemm_nt_out_op(
        a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, c: Optional[torch.Tensor], config: str
    ) -> None:
        from ._gemm import gemm_nt

        gemm_nt(a, b, out, c, None, config or None)

    @_gemm_nt_out_op.register_fake
    def _gemm_nt_out_fake(a, b, out, c, config):
        return None


def gemm_nt(a: Any, b: Any, out: Any, c: Any, out_dtype: Any, config: Any, stream: Any) -> Any:
    """tilecast.gemm_nt as traced by torch.compile: through the custom ops."""
    if stream is not None:
        raise ValueError("tilecast.gemm_nt: under torch.compile the call runs on torch's current stream; drop stream=")
    if isinstance(config, dict):
        from ._gemm import as_config

        config = str(as_config(config))  # C++: a graph break; pass a config string instead
    if out is None:
        if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
            out_dtype = getattr(torch, dtype_name(out_dtype))
        return torch.ops.tilecast.gemm_nt(a, b, c, out_dtype, _config_text(config))
    torch.ops.tilecast.gemm_nt_out(a, b, out, c, _config_text(config))
    return out
