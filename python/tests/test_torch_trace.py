"""The torch integration without a GPU: the custom ops' schemas and fake implementations, and
torch.compile tracing tilecast.gemm_nt with no graph break (on meta tensors, which run the fake
implementations). Skips without torch; CI's venv has none, the GPU machine's has."""

import pytest

torch = pytest.importorskip("torch")

import tilecast  # noqa: E402


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_ops_are_registered_with_their_schemas():
    assert str(torch.ops.tilecast.gemm_nt.default._schema) == (
        "tilecast::gemm_nt(Tensor a, Tensor b, Tensor? c, ScalarType? out_dtype, str config) -> Tensor")
    assert "Tensor(a2!) out" in str(torch.ops.tilecast.gemm_nt_out.default._schema)


@pytest.mark.parametrize("shape_a, shape_b, out", [((64, 128), (32, 128), (64, 32)),
                                                   ((3, 64, 128), (3, 32, 128), (3, 64, 32))])
def test_fake_implementation_gives_shape_and_dtype(shape_a, shape_b, out):
    d = torch.ops.tilecast.gemm_nt(meta(*shape_a), meta(*shape_b), None, None, "")
    assert d.shape == out and d.dtype == torch.bfloat16
    d = torch.ops.tilecast.gemm_nt(meta(*shape_a), meta(*shape_b), None, torch.float32, "")
    assert d.dtype == torch.float32
    d = torch.ops.tilecast.gemm_nt(meta(*shape_a), meta(*shape_b), meta(*out, dtype=torch.float32), None, "")
    assert d.dtype == torch.float32  # C's dtype


def _graph_breaks(fn, *args):
    explained = torch._dynamo.explain(fn)(*args)
    return explained.graph_count, explained.graph_break_count


def test_compile_traces_the_functional_form_in_one_graph():
    def f(a, b):
        return tilecast.gemm_nt(a, b, out_dtype="float32", config="cluster=1x1") + 1

    assert _graph_breaks(f, meta(64, 128), meta(32, 128)) == (1, 0)
    y = torch.compile(f, fullgraph=True, backend="eager")(meta(64, 128), meta(32, 128))
    assert y.shape == (64, 32) and y.dtype == torch.float32


def test_compile_traces_the_out_form_in_one_graph():
    def g(a, b, out):
        tilecast.gemm_nt(a, b, out=out)
        return out * 2

    assert _graph_breaks(g, meta(64, 128), meta(32, 128), meta(64, 32)) == (1, 0)


def test_compile_refuses_an_explicit_stream():
    def h(a, b):
        return tilecast.gemm_nt(a, b, stream=0)

    with pytest.raises(Exception, match="drop stream="):
        torch.compile(h, fullgraph=True, backend="eager")(meta(64, 128), meta(32, 128))


def test_cpu_tensors_are_refused_eagerly_and_compiled():
    a, b = torch.zeros(64, 128, dtype=torch.bfloat16), torch.zeros(32, 128, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(a, b)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        torch.compile(lambda x, y: tilecast.gemm_nt(x, y), fullgraph=True, backend="eager")(a, b)
    with pytest.raises(TypeError, match="a must be bfloat16, got float32"):
        tilecast.gemm_nt(a.float(), b)


def test_a_tensor_that_needs_grad_is_refused_while_grad_mode_is_on():
    a = torch.zeros(64, 128, dtype=torch.bfloat16)
    w = torch.nn.Parameter(torch.zeros(32, 128, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError, match="no backward"):
        tilecast.gemm_nt(a, w)
    with torch.no_grad(), pytest.raises(ValueError, match="not on a CUDA device"):  # detached, then checked
        tilecast.gemm_nt(a, w)
