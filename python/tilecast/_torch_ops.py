"""torch custom ops (torch.library), registered only when torch is importable:

    torch.ops.tilecast.gemm_nt(a, b, c, bias, alpha, beta, out_dtype, config) -> Tensor
    torch.ops.tilecast.gemm_nt_out(a, b, out, c, bias, alpha, beta, config) -> ()    (writes out)
    torch.ops.tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, layout, config) -> ()
    torch.ops.tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, config) -> ()
    torch.ops.tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, accumulate, config) -> ()

(the grouped ops write d: rows or groups a call does not own keep what d held, so they have no
functional form; tilecast's functions allocate d first, inside the traced graph, when given None).
Each has a fake (meta) implementation, so torch.compile traces the tilecast functions without a
graph break (each routes itself here while dynamo traces). Eager calls skip the dispatcher and call
the C++ module directly (fewer microseconds per call). Under torch.compile the config must be None
or a config string: a GemmConfig object is converted in C++, which dynamo cannot trace.
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
    # _gemm and _grouped, which import this module, at call time.

    @torch.library.custom_op("tilecast::gemm_nt", mutates_args=())
    def _gemm_nt_op(
        a: torch.Tensor,
        b: torch.Tensor,
        c: Optional[torch.Tensor],
        bias: Optional[torch.Tensor],
        alpha: float,
        beta: float,
        out_dtype: Optional[torch.dtype],
        config: str,
    ) -> torch.Tensor:
        from ._gemm import gemm_nt

        return gemm_nt(a, b, None, c, out_dtype, config or None, bias=bias, alpha=alpha, beta=beta)

    @_gemm_nt_op.register_fake
    def _gemm_nt_fake(a, b, c, bias, alpha, beta, out_dtype, config):
        dtype = out_dtype if out_dtype is not None else (c.dtype if c is not None else torch.bfloat16)
        return a.new_empty((*a.shape[:-1], b.shape[-2]), dtype=dtype)

    @torch.library.custom_op("tilecast::gemm_nt_out", mutates_args=("out",))
    def _gemm_nt_out_op(
        a: torch.Tensor,
        b: torch.Tensor,
        out: torch.Tensor,
        c: Optional[torch.Tensor],
        bias: Optional[torch.Tensor],
        alpha: float,
        beta: float,
        config: str,
    ) -> None:
        from ._gemm import gemm_nt

        gemm_nt(a, b, out, c, None, config or None, bias=bias, alpha=alpha, beta=beta)

    @_gemm_nt_out_op.register_fake
    def _gemm_nt_out_fake(a, b, out, c, bias, alpha, beta, config):
        return None

    @torch.library.custom_op("tilecast::m_grouped_bf16_gemm_nt_contiguous", mutates_args=("d",))
    def _contiguous_op(
        a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, grouped_layout: torch.Tensor, layout: str, config: str
    ) -> None:
        from ._grouped import m_grouped_bf16_gemm_nt_contiguous

        m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, layout, None, config or None)

    @_contiguous_op.register_fake
    def _contiguous_fake(a, b, d, grouped_layout, layout, config):
        return None

    @torch.library.custom_op("tilecast::m_grouped_bf16_gemm_nt_masked", mutates_args=("d",))
    def _masked_op(
        a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, masked_m: torch.Tensor, expected_m: int, config: str
    ) -> None:
        from ._grouped import m_grouped_bf16_gemm_nt_masked

        m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, None, config or None)

    @_masked_op.register_fake
    def _masked_fake(a, b, d, masked_m, expected_m, config):
        return None

    @torch.library.custom_op("tilecast::k_grouped_bf16_gemm_nt_contiguous", mutates_args=("d",))
    def _k_grouped_op(
        a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, k_sizes: torch.Tensor, accumulate: bool, config: str
    ) -> None:
        from ._grouped import k_grouped_bf16_gemm_nt_contiguous

        k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, d if accumulate else None, None, config or None)

    @_k_grouped_op.register_fake
    def _k_grouped_fake(a, b, d, k_sizes, accumulate, config):
        return None


def _traced_config(config: Any, stream: Any, where: str) -> str:
    """The config text of a traced call, which runs on torch's current stream."""
    if stream is not None:
        raise ValueError(f"tilecast.{where}: under torch.compile the call runs on torch's current stream; drop stream=")
    if isinstance(config, dict):
        from ._gemm import as_config

        config = str(as_config(config))  # C++: a graph break; pass a config string instead
    return _config_text(config)


def _torch_dtype(out_dtype: Any, default: Any) -> Any:
    if out_dtype is None:
        return default
    return out_dtype if isinstance(out_dtype, torch.dtype) else getattr(torch, dtype_name(out_dtype))


def _check_out_dtype(out: Any, out_dtype: Any, where: str, name: str) -> None:
    """The eager call's rule for an output given with out_dtype, before dispatch: the out ops take
    no out_dtype, so it would otherwise be dropped unchecked."""
    if out is None or out_dtype is None:
        return
    want = _torch_dtype(out_dtype, None)
    if out.dtype != want:
        raise TypeError(f"tilecast.{where}: {name} is {_dtype_text(out.dtype)} but out_dtype is {_dtype_text(want)}")


def _dtype_text(dtype: Any) -> str:
    """'bfloat16', as the eager message names a dtype (comparisons only, which dynamo folds)."""
    for name in ("bfloat16", "float32"):
        if dtype == getattr(torch, name):
            return name
    return str(dtype).rpartition(".")[2]


def gemm_nt(a: Any, b: Any, out: Any, c: Any, out_dtype: Any, config: Any, stream: Any, bias: Any, alpha: float,
            beta: float) -> Any:
    """tilecast.gemm_nt as traced by torch.compile: through the custom ops."""
    config = _traced_config(config, stream, "gemm_nt")
    _check_out_dtype(out, out_dtype, "gemm_nt", "out")
    if out is None:
        return torch.ops.tilecast.gemm_nt(a, b, c, bias, float(alpha), float(beta), _torch_dtype(out_dtype, None),
                                          config)
    torch.ops.tilecast.gemm_nt_out(a, b, out, c, bias, float(alpha), float(beta), config)
    return out


def m_grouped_contiguous(a: Any, b: Any, d: Any, grouped_layout: Any, layout: str, out_dtype: Any, config: Any,
                         stream: Any) -> Any:
    """tilecast.m_grouped_bf16_gemm_nt_contiguous as traced by torch.compile."""
    config = _traced_config(config, stream, "m_grouped_bf16_gemm_nt_contiguous")
    _check_out_dtype(d, out_dtype, "m_grouped_bf16_gemm_nt_contiguous", "d")
    if d is None:
        d = a.new_empty((a.shape[0], b.shape[-2]), dtype=_torch_dtype(out_dtype, torch.bfloat16))
    torch.ops.tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, layout, config)
    return d


def m_grouped_masked(a: Any, b: Any, d: Any, masked_m: Any, expected_m: int, out_dtype: Any, config: Any,
                     stream: Any) -> Any:
    """tilecast.m_grouped_bf16_gemm_nt_masked as traced by torch.compile."""
    config = _traced_config(config, stream, "m_grouped_bf16_gemm_nt_masked")
    _check_out_dtype(d, out_dtype, "m_grouped_bf16_gemm_nt_masked", "d")
    if d is None:
        d = a.new_empty((*a.shape[:-1], b.shape[-2]), dtype=_torch_dtype(out_dtype, torch.bfloat16))
    torch.ops.tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m, config)
    return d


def k_grouped(a: Any, b: Any, d: Any, k_sizes: Any, c: Any, out_dtype: Any, config: Any, stream: Any) -> Any:
    """tilecast.k_grouped_bf16_gemm_nt_contiguous as traced by torch.compile."""
    config = _traced_config(config, stream, "k_grouped_bf16_gemm_nt_contiguous")
    _check_out_dtype(d, out_dtype, "k_grouped_bf16_gemm_nt_contiguous", "d")
    if c is not None and c is not d:
        raise ValueError("tilecast.k_grouped_bf16_gemm_nt_contiguous: c must be d itself (D[g] += A_g @ B_g^T "
                         "accumulates in place) or None")
    if d is None:
        d = a.new_empty((k_sizes.shape[0], a.shape[0], b.shape[0]), dtype=_torch_dtype(out_dtype, torch.bfloat16))
    torch.ops.tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c is not None, config)
    return d
