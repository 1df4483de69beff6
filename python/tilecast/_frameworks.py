"""What tilecast needs from the caller's array framework: its current stream and an allocator.

A call runs on the stream the caller's framework would use next (torch: the current stream of
the tensor's device; CuPy: its current stream), so it orders with the caller's own work without
a synchronization. Frameworks that expose no stream (JAX, others) get the legacy default stream
and a synchronous call: see `Plumbing.synchronous`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

_DTYPE_NAMES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float32": "float32", "fp32": "float32"}


def dtype_name(dtype: Any) -> Optional[str]:
    """'bfloat16' or 'float32' for a dtype given as a string, torch.dtype, NumPy/CuPy/JAX dtype."""
    if dtype is None:
        return None
    text = dtype if isinstance(dtype, str) else getattr(dtype, "__name__", None) or str(dtype)
    name = _DTYPE_NAMES.get(text.rsplit(".", 1)[-1].lower())
    if name is None:
        raise TypeError(f"tilecast: out_dtype must be bfloat16 or float32, got {dtype!r}")
    return name


def framework(x: Any) -> str:
    """The top-level package of an array's type: 'torch', 'cupy', 'jax', 'jaxlib', 'numpy', ...; 'torch'
    for every torch.Tensor, subclasses defined elsewhere (vLLM's, a test's) too."""
    # A torch tensor exists only once torch is imported: asking sys.modules imports nothing.
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, getattr(torch, "Tensor", ())):
        return "torch"
    return type(x).__module__.partition(".")[0]


def stream_handle(stream: Any) -> int:
    """A cudaStream_t as an int, from an int, a torch.cuda.Stream or a CuPy stream."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(f"tilecast: stream must be an int handle, a torch.cuda.Stream or a CuPy stream, got {stream!r}")


class Plumbing:
    """The stream, allocator and synchronization one call uses, chosen from its first operand.
    A synchronous call waits for `stream` on `device` (-1: the current one) after its GEMM."""

    __slots__ = ("stream", "alloc", "synchronous", "device")

    def __init__(self, a: Any, stream: Any):
        fw = framework(a)
        self.synchronous = False
        self.device = -1
        if fw == "torch":
            self.alloc = _torch_alloc(a, stream)
            default = _torch_stream(a)
        elif fw == "cupy":
            self.alloc = _cupy_alloc(a, stream)
            default = _cupy_stream
        elif fw in ("jax", "jaxlib"):
            # JAX cannot be told about our stream: the call waits for its inputs, runs on the legacy
            # default stream and returns once the GEMM is done.
            self.alloc = _jax_alloc(a)
            default = lambda: 0  # noqa: E731
            self.synchronous = stream is None
            # The legacy default stream is per device, and the call makes a's device current only
            # while it runs: the wait names it.
            self.device = _dlpack_device_id(a)
        else:
            self.alloc = _no_alloc(a)
            default = lambda: 0  # noqa: E731
        self.stream = stream_handle(stream) if stream is not None else default()


def _torch_stream(a: Any) -> Callable[[], int]:
    def current() -> int:
        import torch

        return torch.cuda.current_stream(a.device).cuda_stream if a.is_cuda else 0

    return current


def _torch_alloc(a: Any, stream: Any) -> Callable[[tuple, str], Any]:
    def alloc(shape: tuple, dtype: str) -> Any:
        import torch

        if stream is None:
            return torch.empty(shape, dtype=getattr(torch, dtype), device=a.device)
        # The GEMM writes the block on `stream`, so the caching allocator must count it as that
        # stream's: a block of the current stream may still be read there by its previous tensor,
        # and once this one is freed it would go to the current stream's next tensor while the
        # GEMM may still be writing it.
        with torch.cuda.stream(_torch_stream_object(stream, a.device)):
            return torch.empty(shape, dtype=getattr(torch, dtype), device=a.device)

    return alloc


def _torch_stream_object(stream: Any, device: Any) -> Any:
    """`stream` (a torch.cuda.Stream, a CuPy stream or a handle) as a torch.cuda.Stream of `device`."""
    import torch

    if isinstance(stream, torch.cuda.Stream):
        return stream
    handle = stream_handle(stream)
    if handle == 0:  # the legacy default stream: torch's default stream
        return torch.cuda.default_stream(device)
    return torch.cuda.ExternalStream(handle, device=device)


def _cupy_stream() -> int:
    import cupy

    return cupy.cuda.get_current_stream().ptr


def _cupy_alloc(a: Any, stream: Any) -> Callable[[tuple, str], Any]:
    def alloc(shape: tuple, dtype: str) -> Any:
        import cupy

        try:
            dt = cupy.dtype(dtype)
        except TypeError:
            raise TypeError(f"tilecast: CuPy has no {dtype} dtype here; pass out= (e.g. a torch tensor)") from None
        with cupy.cuda.Device(a.device.id):
            if stream is None:
                return cupy.empty(shape, dtype=dt)
            # CuPy's memory pool keeps blocks per stream, as torch's caching allocator does: the
            # block goes to the stream the GEMM writes it on (see _torch_alloc).
            with _cupy_stream_object(stream):
                return cupy.empty(shape, dtype=dt)

    return alloc


def _cupy_stream_object(stream: Any) -> Any:
    """`stream` (a CuPy stream, a torch.cuda.Stream or a handle) as a CuPy stream of the current device."""
    import cupy

    if isinstance(stream, (cupy.cuda.Stream, cupy.cuda.ExternalStream)):
        return stream
    handle = stream_handle(stream)
    if handle == 0:
        return cupy.cuda.Stream.null
    return cupy.cuda.ExternalStream(handle)


def _dlpack_device_id(a: Any) -> int:
    """The device ordinal `a` reports through DLPack (what the C++ module runs the call on); -1
    where it reports none."""
    try:
        return int(a.__dlpack_device__()[1])
    except (AttributeError, TypeError, IndexError):
        return -1


def _jax_alloc(a: Any) -> Callable[[tuple, str], Any]:
    def alloc(shape: tuple, dtype: str) -> Any:
        import jax
        import jax.numpy as jnp

        # A fresh buffer nobody else holds, written once through DLPack before it is returned.
        out = jnp.empty(shape, dtype=getattr(jnp, dtype), device=next(iter(a.devices())))
        return jax.block_until_ready(out)

    return alloc


def _no_alloc(a: Any) -> Callable[[tuple, str], Any]:
    def alloc(shape: tuple, dtype: str) -> Any:
        raise TypeError(
            f"tilecast: cannot allocate the output for a {type(a).__name__}: pass it (out=, or d for the grouped GEMMs)"
        )

    return alloc
