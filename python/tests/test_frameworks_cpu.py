"""The framework side of a call (tilecast/_frameworks.py, _gemm.py, _grouped.py) without a GPU,
JAX or PyTorch: stand-ins for their arrays and modules, and for the C++ module where a call must get
past it. The real frameworks' tests are test_torch_trace.py (CPU torch) and test_gemm_gpu.py."""

import os
import sys
import types

import numpy as np
import pytest

import tilecast
from tilecast import _frameworks, _gemm, _grouped

sys.path.insert(0, os.path.dirname(__file__))
import dlpack_capsule as dl  # noqa: E402


def bf16(*shape, **kw):
    return dl.tensor(shape, "bfloat16", **kw)


class FakeTensor:
    """Stands for torch.Tensor."""

    def __init__(self, requires_grad=False):
        self.requires_grad = requires_grad
        self.detached_from = None

    def detach(self):
        detached = FakeTensor()
        detached.detached_from = self
        return detached

    def is_inference(self):
        return False


class VllmParameter(FakeTensor):
    """A torch.Tensor subclass defined outside torch."""


VllmParameter.__module__ = "vllm.model_executor.parameter"


@pytest.fixture
def fake_torch(monkeypatch):
    """torch as sys.modules holds it once imported: grad mode on, version bumps recorded."""
    torch = types.ModuleType("torch")
    torch.Tensor = FakeTensor
    torch.grad_enabled = True
    torch.is_grad_enabled = lambda: torch.grad_enabled
    torch.bumped = []
    torch.autograd = types.SimpleNamespace(graph=types.SimpleNamespace(increment_version=torch.bumped.append))
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


class FakeC:
    """The C++ module's calls that a test gets past: each records its arguments."""

    def __init__(self, result="allocated"):
        self.calls = []
        self.result = result

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            return self.result if name != "stream_synchronize" else None

        return call


@pytest.fixture
def fake_c(monkeypatch):
    c = FakeC()
    monkeypatch.setattr(_gemm, "_C", c)
    monkeypatch.setattr(_grouped, "_C", c)
    return c


def test_torch_subclasses_defined_outside_torch_are_torch_tensors(fake_torch):
    assert _frameworks.framework(VllmParameter()) == "torch"
    assert _frameworks.framework(FakeTensor()) == "torch"
    assert _frameworks.framework(np.zeros(1)) == "numpy"
    # So they get torch's grad guard (and stream and allocator).
    with pytest.raises(RuntimeError, match="tilecast.gemm_nt has no backward"):
        tilecast.gemm_nt(bf16(64, 128), VllmParameter(requires_grad=True))


def test_torch_is_asked_only_once_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    assert _frameworks.framework(VllmParameter()) == "vllm"
    monkeypatch.delitem(sys.modules, "torch")
    assert _frameworks.framework(np.zeros(1)) == "numpy"
    assert "torch" not in sys.modules


def test_an_output_that_requires_grad_is_refused_while_grad_mode_is_on(fake_torch, fake_c):
    for call in (lambda out: tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), out=out),
                 lambda out: tilecast.prepare(bf16(64, 128), bf16(32, 128), out=out)):
        with pytest.raises(RuntimeError, match="tilecast.(gemm_nt|prepare): out requires grad, and autograd cannot "
                                               "see tilecast writing it"):
            call(FakeTensor(requires_grad=True))
    masked = (bf16(3, 64, 128), bf16(3, 32, 128))
    with pytest.raises(RuntimeError, match="tilecast.m_grouped_bf16_gemm_nt_masked: d requires grad"):
        tilecast.m_grouped_bf16_gemm_nt_masked(*masked, FakeTensor(requires_grad=True), np.zeros(3, np.int32), 8)
    assert not fake_c.calls and not fake_torch.bumped


def test_a_written_output_has_its_version_bumped(fake_torch, fake_c):
    # Under no_grad an output that requires grad is written through a detached alias (which shares
    # its version counter); either way the caller's tensor is returned and its version bumped.
    fake_torch.grad_enabled = False
    for out in (FakeTensor(), FakeTensor(requires_grad=True)):
        fake_torch.bumped.clear()
        fake_c.calls.clear()
        assert tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), out=out) is out
        (name, args), = fake_c.calls
        written = args[2]
        assert name == "gemm_nt" and (written is out or written.detached_from is out)
        assert fake_torch.bumped == [out]
    d = FakeTensor()
    fake_torch.bumped.clear()
    assert tilecast.k_grouped_bf16_gemm_nt_contiguous(bf16(64, 128), bf16(32, 128), d, np.zeros(3, np.int32),
                                                      c=d) is d
    assert fake_torch.bumped == [d]
    # An output the call allocates is nobody else's: nothing to bump.
    fake_torch.bumped.clear()
    assert tilecast.gemm_nt(bf16(64, 128), bf16(32, 128)) == "allocated"
    assert fake_torch.bumped == []


class FakeJaxArray:
    """A JAX array on cuda:1, as DLPack reports it."""

    def __dlpack_device__(self):
        return (2, 1)


FakeJaxArray.__module__ = "jaxlib.xla_extension"


def test_a_synchronous_call_waits_on_its_operands_device(monkeypatch, fake_c):
    # JAX arrays run on the legacy default stream, which is per device, and the call returns once
    # the GEMM is done: the wait must name the operands' device, not the current one.
    jax = types.ModuleType("jax")
    jax.block_until_ready = lambda xs: xs
    monkeypatch.setitem(sys.modules, "jax", jax)
    a, b, out = FakeJaxArray(), FakeJaxArray(), FakeJaxArray()
    tilecast.gemm_nt(a, b, out=out)
    assert fake_c.calls[-1] == ("stream_synchronize", (0, 1))
    tilecast.m_grouped_bf16_gemm_nt_masked(a, b, out, FakeJaxArray(), 8)
    assert fake_c.calls[-1] == ("stream_synchronize", (0, 1))
    tilecast.gemm_nt(a, b, out=out, stream=0)  # a stream given: the caller orders, no wait
    assert fake_c.calls[-1][0] == "gemm_nt"


class FakeCupyArray:
    """Stands for cupy.ndarray."""

    device = types.SimpleNamespace(id=0)


FakeCupyArray.__module__ = "cupy._core.core"


@pytest.fixture
def fake_cupy(monkeypatch):
    """cupy with streams as contexts, and an `empty` that records the stream it allocated under."""
    cupy = types.ModuleType("cupy")

    class Stream:
        current = []

        def __init__(self, ptr):
            self.ptr = ptr

        def __enter__(self):
            Stream.current.append(self)
            return self

        def __exit__(self, *exc):
            Stream.current.pop()

    class Device:
        def __init__(self, index):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    Stream.null = Stream(0)
    cupy.cuda = types.SimpleNamespace(Stream=Stream, ExternalStream=Stream, Device=Device,
                                      get_current_stream=lambda: Stream.current[-1] if Stream.current else Stream.null)
    cupy.dtype = np.dtype
    cupy.allocated_on = []
    cupy.empty = lambda shape, dtype: cupy.allocated_on.append(cupy.cuda.get_current_stream().ptr)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    return cupy


def test_a_cupy_output_is_allocated_on_the_stream_the_gemm_writes_it_on(fake_cupy):
    # CuPy's pool keeps blocks per stream: a block of the current stream, freed early, would go to
    # that stream's next array while the GEMM still writes it on the given one.
    a = FakeCupyArray()
    side = fake_cupy.cuda.Stream(1234)
    for stream, expected in ((None, 0), (side, 1234), (5678, 5678), (0, 0)):
        plumbing = _frameworks.Plumbing(a, stream)
        plumbing.alloc((2, 3), "float32")
        assert fake_cupy.allocated_on[-1] == expected, stream
        assert plumbing.stream == expected
    with side:  # no stream given: the current one, for the allocation and the call alike
        plumbing = _frameworks.Plumbing(a, None)
        plumbing.alloc((2, 3), "float32")
        assert (fake_cupy.allocated_on[-1], plumbing.stream) == (1234, 1234)
