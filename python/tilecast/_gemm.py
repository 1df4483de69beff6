"""tilecast.gemm_nt and tilecast.prepare (with the epilogue: alpha, beta, c, bias): the framework
side (stream, allocation, torch.compile); every check of the operands is the C++ module's
(python/src/gemm_bindings.cpp). The grouped forms (_grouped.py) share the helpers here."""

from __future__ import annotations

from typing import Any, Optional, Union

from . import _tilecast as _C
from . import _torch_ops
from ._frameworks import Plumbing, dtype_name, framework

ConfigLike = Union[None, str, dict, _C.GemmConfig]

_DEFAULT_CONFIG = _C.GemmConfig()


def as_config(config: ConfigLike) -> _C.GemmConfig:
    """A GemmConfig from None (the planner's choice), a config string, a dict of GemmConfig's
    keyword arguments, or a GemmConfig."""
    if config is None:
        return _DEFAULT_CONFIG
    if isinstance(config, _C.GemmConfig):
        return config
    if isinstance(config, str):
        return _C.parse_config(config)
    if isinstance(config, dict):
        return _C.GemmConfig(**config)
    raise TypeError(f"tilecast: config must be a str, a dict or a tilecast.GemmConfig, got {type(config).__name__}")


def _untracked(x: Any, where: str = "gemm_nt") -> Any:
    """The tensor itself, detached where autograd would otherwise refuse to export it: tilecast has
    no backward, so a tensor that needs a gradient is an error while grad mode is on."""
    if x is None or framework(x) != "torch" or not x.requires_grad:
        return x
    import torch

    if torch.is_grad_enabled():
        raise RuntimeError(
            f"tilecast.{where} has no backward: call it under torch.no_grad() or pass tensors that do not require grad"
        )
    return x.detach()


def untracked(where: str, *xs: Any) -> tuple:
    """_untracked of each argument (None stays None)."""
    return tuple(_untracked(x, where) for x in xs)


def untracked_output(where: str, name: str, out: Any) -> Any:
    """The output the call writes (out, or d), detached for the write: autograd never sees it, so
    one that requires grad is an error while grad mode is on, as for torch's out= functions."""
    if out is None or framework(out) != "torch" or not out.requires_grad:
        return out
    import torch

    if torch.is_grad_enabled():
        raise RuntimeError(
            f"tilecast.{where}: {name} requires grad, and autograd cannot see tilecast writing it (tilecast has no "
            f"backward): call it under torch.no_grad() or pass a {name} that does not require grad"
        )
    return out.detach()  # shares the version counter: written() bumps the caller's tensor's


def written(out: Any) -> None:
    """Bumps the version counter of a torch tensor the call wrote in place, as torch's in-place ops
    do: a backward that saved it then raises instead of using the new values."""
    if out is None or framework(out) != "torch" or out.is_inference():  # inference tensors have none
        return
    import torch

    bump = getattr(torch.autograd.graph, "increment_version", None)
    if bump is None:  # older torch
        torch._C._increment_version(out)
    else:
        bump(out)


def wait_for_jax(plumbing: Plumbing, *xs: Any) -> None:
    """JAX has no stream to order with: wait for the inputs before a synchronous call."""
    if plumbing.synchronous:
        import jax

        jax.block_until_ready([x for x in xs if x is not None])


def finish(plumbing: Plumbing) -> None:
    """A synchronous call (JAX) returns once its GEMM is done: waits for its stream on its device."""
    if plumbing.synchronous:
        _C.stream_synchronize(plumbing.stream, plumbing.device)


def gemm_nt(
    a: Any,
    b: Any,
    out: Any = None,
    c: Any = None,
    out_dtype: Any = None,
    config: ConfigLike = None,
    stream: Any = None,
    *,
    bias: Any = None,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> Any:
    """out = alpha * (a @ b^T) + beta * c + bias, DeepGEMM's NT layout, on the caller's current stream.

    a:   [m, k] or [batch, m, k], bfloat16, last dimension contiguous (any row/batch stride).
    b:   [n, k] or [batch, n, k], bfloat16 (B is given as [n, k]: D = A @ B.T).
    out: [m, n] or [batch, m, n], bfloat16 or float32; allocated through a's framework when None
         (torch.empty on a's device for torch tensors, on `stream` when given). Returned. A torch
         out gets its version counter bumped, as by torch's in-place ops; one that requires grad
         is written only under torch.no_grad() (autograd cannot see the write).
    c:   optional addend of out's shape and dtype; c may be out itself (D += A @ B^T).
    out_dtype: bfloat16 (default; c's dtype when c is given) or float32 when out is None (a string,
         torch.dtype, ...).
    config: None (the planner's choice), a config string ("block=128x256x64,cluster=2x1"), a dict
         of GemmConfig keyword arguments, or a tilecast.GemmConfig.
    stream: a cudaStream_t (int), torch.cuda.Stream or CuPy stream; default: torch's current
         stream of a's device, CuPy's current stream, else the legacy default stream (JAX: the
         call then waits for the GEMM to finish).
    bias: optional [n] vector, bfloat16 or float32 (either, whatever out's dtype), added to every
         row (and batch) of out.
    alpha: scales a @ b^T (default 1).
    beta: scales c (default 1; torch.addmm's and cuBLAS's meaning). beta = 0 never reads c, which
         may then hold NaN. Without c, beta must stay 1.
    The epilogue runs in FP32 and rounds once into out's dtype. DeepGEMM's bf16_gemm_nt(a, b, d, c)
    takes its arguments in the same positional order.

    Raises TypeError (a dtype, an out that is no array), ValueError (a rank, shape, stride, beta
    without c, or a tensor not on a CUDA device) before anything touches CUDA, and tilecast.Error
    for a bad config (an empty problem's too), for what the C++ API refuses (16-byte alignment of
    rows and of bias, overlap) and for JIT or CUDA failures. The first call of a shape compiles its
    kernels (seconds; see tilecast.warm).
    """
    if _torch_ops.tracing(a):
        return _torch_ops.gemm_nt(a, b, out, c, out_dtype, config, stream, bias, alpha, beta)
    a, b, c, bias = untracked("gemm_nt", a, b, c, bias)
    target = untracked_output("gemm_nt", "out", out)
    plumbing = Plumbing(a, stream)
    wait_for_jax(plumbing, a, b, c, bias, target)
    result = _C.gemm_nt(a, b, target, c, bias, float(alpha), float(beta), dtype_name(out_dtype), as_config(config),
                        plumbing.stream, plumbing.alloc)
    finish(plumbing)
    if out is None:
        return result
    written(out)
    return out


def prepare(
    a: Any,
    b: Any,
    out: Any = None,
    c: Any = None,
    out_dtype: Any = None,
    config: ConfigLike = None,
    *,
    bias: Any = None,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> None:
    """Plans, compiles (or loads from the disk cache) and loads every kernel gemm_nt with these
    arguments needs, launching nothing. After it, the same call (same shapes, dtypes, epilogue and
    config) may be captured into a CUDA graph (torch.cuda.graph, torch.compile(mode="reduce-overhead")):
    a capture must not compile, and an unprepared call under capture raises tilecast.Error.
    Inputs and out may be the tensors the graph will use, or any others of the same shapes whose
    rows start at the same offsets in 128-byte lines (the plan weighs it: a column slice of a wider
    tensor, prepare with the same slice).
    """
    a, b, c, bias = untracked("prepare", a, b, c, bias)
    out = untracked_output("prepare", "out", out)
    plumbing = Plumbing(a, None)
    _C.prepare(a, b, out, c, bias, float(alpha), float(beta), dtype_name(out_dtype), as_config(config),
               plumbing.alloc)
