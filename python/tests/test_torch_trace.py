"""The torch integration without a GPU: the custom ops' schemas and fake implementations, and
torch.compile tracing tilecast.gemm_nt (with its epilogue) and the grouped GEMMs with no graph
break (on meta tensors, which run the fake implementations). Skips without torch; CI's venv has
none, the GPU machine's has."""

import pytest

torch = pytest.importorskip("torch")

import tilecast  # noqa: E402


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_ops_are_registered_with_their_schemas():
    ops = torch.ops.tilecast
    assert str(ops.gemm_nt.default._schema) == (
        "tilecast::gemm_nt(Tensor a, Tensor b, Tensor? c, Tensor? bias, float alpha, float beta, "
        "ScalarType? out_dtype, str config) -> Tensor")
    assert str(ops.gemm_nt_out.default._schema) == (
        "tilecast::gemm_nt_out(Tensor a, Tensor b, Tensor(a2!) out, Tensor? c, Tensor? bias, float alpha, "
        "float beta, str config) -> ()")
    assert str(ops.m_grouped_bf16_gemm_nt_contiguous.default._schema) == (
        "tilecast::m_grouped_bf16_gemm_nt_contiguous(Tensor a, Tensor b, Tensor(a2!) d, Tensor grouped_layout, "
        "str layout, str config) -> ()")
    assert str(ops.m_grouped_bf16_gemm_nt_masked.default._schema) == (
        "tilecast::m_grouped_bf16_gemm_nt_masked(Tensor a, Tensor b, Tensor(a2!) d, Tensor masked_m, "
        "SymInt expected_m, str config) -> ()")
    assert str(ops.k_grouped_bf16_gemm_nt_contiguous.default._schema) == (
        "tilecast::k_grouped_bf16_gemm_nt_contiguous(Tensor a, Tensor b, Tensor(a2!) d, Tensor k_sizes, "
        "bool accumulate, str config) -> ()")


@pytest.mark.parametrize("shape_a, shape_b, out", [((64, 128), (32, 128), (64, 32)),
                                                   ((3, 64, 128), (3, 32, 128), (3, 64, 32))])
def test_fake_implementation_gives_shape_and_dtype(shape_a, shape_b, out):
    def op(c=None, bias=None, out_dtype=None):
        return torch.ops.tilecast.gemm_nt(meta(*shape_a), meta(*shape_b), c, bias, 1.0, 1.0, out_dtype, "")

    d = op()
    assert d.shape == out and d.dtype == torch.bfloat16
    assert op(out_dtype=torch.float32).dtype == torch.float32
    assert op(c=meta(*out, dtype=torch.float32)).dtype == torch.float32  # C's dtype
    d = op(bias=meta(out[-1], dtype=torch.float32))  # the bias's dtype is not the output's
    assert d.shape == out and d.dtype == torch.bfloat16


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


def test_compile_traces_the_epilogue_in_one_graph():
    def f(a, b, c, bias):
        return tilecast.gemm_nt(a, b, c=c, bias=bias, alpha=0.5, beta=2.0)

    args = meta(64, 128), meta(32, 128), meta(64, 32, dtype=torch.float32), meta(32)
    assert _graph_breaks(f, *args) == (1, 0)
    y = torch.compile(f, fullgraph=True, backend="eager")(*args)
    assert y.shape == (64, 32) and y.dtype == torch.float32

    def g(a, b, out, bias):
        tilecast.gemm_nt(a, b, out=out, bias=bias, alpha=-1.0)
        return out

    assert _graph_breaks(g, meta(64, 128), meta(32, 128), meta(64, 32), meta(32, dtype=torch.float32)) == (1, 0)


def test_compile_refuses_an_explicit_stream():
    def h(a, b):
        return tilecast.gemm_nt(a, b, stream=0)

    with pytest.raises(Exception, match="drop stream="):
        torch.compile(h, fullgraph=True, backend="eager")(meta(64, 128), meta(32, 128))

    def k(a, b, masked_m):
        return tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, masked_m, 8, stream=0)

    with pytest.raises(Exception, match="m_grouped_bf16_gemm_nt_masked: under torch.compile .* drop stream="):
        torch.compile(k, fullgraph=True, backend="eager")(meta(3, 64, 128), meta(3, 32, 128),
                                                          meta(3, dtype=torch.int32))


# The grouped GEMMs: one graph each, with d given (mutated in place) or allocated in the graph.

def _contiguous(a, b, d, layout_data, layout):
    d = tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout_data, layout=layout, config="block=128x128x64")
    return d * 2


def _masked(a, b, d, masked_m):
    d = tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 16, out_dtype=torch.float32)
    return d + 1


def _kgrouped(a, b, d, k_sizes):
    d = tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c=d)
    return d.sum()


def _kgrouped_fresh(a, b, k_sizes):
    return tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, None, k_sizes, out_dtype="float32")


GROUPED = [
    (lambda a, b, d, g: _contiguous(a, b, d, g, "row_index"),
     (meta(256, 128), meta(3, 32, 128), meta(256, 32), meta(256, dtype=torch.int32)), (256, 32), torch.bfloat16),
    (lambda a, b, d, g: _contiguous(a, b, d, g, "offsets"),
     (meta(250, 128), meta(3, 32, 128), None, meta(4, dtype=torch.int32)), (250, 32), torch.bfloat16),
    (_masked, (meta(3, 64, 128), meta(3, 32, 128), None, meta(3, dtype=torch.int32)), (3, 64, 32), torch.float32),
    (_masked, (meta(3, 64, 128), meta(3, 32, 128), meta(3, 64, 32, dtype=torch.float32), meta(3, dtype=torch.int32)),
     (3, 64, 32), torch.float32),
    (_kgrouped, (meta(64, 300), meta(32, 300), meta(4, 64, 32, dtype=torch.float32), meta(4, dtype=torch.int32)),
     (), torch.float32),
    (lambda a, b, d, g: _kgrouped_fresh(a, b, g), (meta(64, 300), meta(32, 300), None, meta(4, dtype=torch.int32)),
     (4, 64, 32), torch.float32),
]


@pytest.mark.parametrize("fn, args, shape, dtype", GROUPED)
def test_compile_traces_the_grouped_gemms_in_one_graph(fn, args, shape, dtype):
    assert _graph_breaks(fn, *args) == (1, 0)
    y = torch.compile(fn, fullgraph=True, backend="eager")(*args)
    assert y.shape == shape and y.dtype == dtype


@pytest.mark.parametrize("fn, args, shape, dtype", GROUPED)
def test_grouped_gemms_trace_through_aot_autograd(fn, args, shape, dtype):
    # aot_eager functionalizes the mutating ops (the path inductor takes), still in one graph.
    y = torch.compile(fn, fullgraph=True, backend="aot_eager")(*args)
    assert y.shape == shape and y.dtype == dtype


def test_the_grouped_ops_mutate_d_only():
    ops = torch.ops.tilecast
    for op in (ops.m_grouped_bf16_gemm_nt_contiguous, ops.m_grouped_bf16_gemm_nt_masked,
               ops.k_grouped_bf16_gemm_nt_contiguous):
        schema = op.default._schema
        assert [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write] == ["d"]
        assert not schema.returns
    d = meta(3, 64, 32)
    assert ops.m_grouped_bf16_gemm_nt_masked(meta(3, 64, 128), meta(3, 32, 128), d, meta(3, dtype=torch.int32),
                                             8, "") is None


def test_compile_refuses_a_kgrouped_addend_that_is_not_d():
    def f(a, b, d, c, k_sizes):
        return tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c=c)

    with pytest.raises(Exception, match="c must be d itself"):
        torch.compile(f, fullgraph=True, backend="eager")(meta(64, 128), meta(32, 128), meta(2, 64, 32),
                                                          meta(2, 64, 32), meta(2, dtype=torch.int32))


def test_cpu_tensors_are_refused_eagerly_and_compiled():
    a, b = torch.zeros(64, 128, dtype=torch.bfloat16), torch.zeros(32, 128, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(a, b)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        torch.compile(lambda x, y: tilecast.gemm_nt(x, y), fullgraph=True, backend="eager")(a, b)
    with pytest.raises(TypeError, match="a must be bfloat16, got float32"):
        tilecast.gemm_nt(a.float(), b)


def test_grouped_cpu_tensors_are_refused_eagerly():
    a, b = torch.zeros(3, 64, 128, dtype=torch.bfloat16), torch.zeros(3, 32, 128, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="m_grouped_bf16_gemm_nt_masked: a is not on a CUDA device"):
        tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, torch.zeros(3, dtype=torch.int32), 8)
    with pytest.raises(TypeError, match="masked_m must be int32, got int64"):
        tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, torch.zeros(3, dtype=torch.int64), 8)
    with pytest.raises(TypeError, match="expected_m must be an int, got Tensor"):
        tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, torch.zeros(3, dtype=torch.int32), torch.tensor(8))
    with pytest.raises(ValueError, match=r"grouped_layout has 3 entries, expected 4 \(layout='offsets'"):
        tilecast.m_grouped_bf16_gemm_nt_contiguous(a[0], b, None, torch.zeros(3, dtype=torch.int32), "offsets")
    with pytest.raises(ValueError, match="k_grouped_bf16_gemm_nt_contiguous: a is not on a CUDA device"):
        tilecast.k_grouped_bf16_gemm_nt_contiguous(a[0], b[0], None, torch.zeros(2, dtype=torch.int32))


def test_a_tensor_that_needs_grad_is_refused_while_grad_mode_is_on():
    a = torch.zeros(64, 128, dtype=torch.bfloat16)
    w = torch.nn.Parameter(torch.zeros(32, 128, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError, match="no backward"):
        tilecast.gemm_nt(a, w)
    with torch.no_grad(), pytest.raises(ValueError, match="not on a CUDA device"):  # detached, then checked
        tilecast.gemm_nt(a, w)
    with pytest.raises(RuntimeError, match="tilecast.gemm_nt has no backward"):
        tilecast.gemm_nt(a, a[:32], bias=torch.zeros(32, requires_grad=True))
    experts = torch.nn.Parameter(torch.zeros(2, 32, 128, dtype=torch.bfloat16))
    with pytest.raises(RuntimeError, match="tilecast.m_grouped_bf16_gemm_nt_contiguous has no backward"):
        tilecast.m_grouped_bf16_gemm_nt_contiguous(a, experts, None, torch.zeros(64, dtype=torch.int32))


def test_an_output_that_requires_grad_is_refused_while_grad_mode_is_on():
    # Autograd cannot see tilecast writing it: as torch's out= functions, refused under grad mode.
    a, b = torch.zeros(64, 128, dtype=torch.bfloat16), torch.zeros(32, 128, dtype=torch.bfloat16)
    out = torch.zeros(64, 32, dtype=torch.bfloat16, requires_grad=True)
    with pytest.raises(RuntimeError, match="tilecast.gemm_nt: out requires grad, and autograd cannot see"):
        tilecast.gemm_nt(a, b, out=out)
    with pytest.raises(RuntimeError, match="tilecast.prepare: out requires grad"):
        tilecast.prepare(a, b, out=out)
    with torch.no_grad(), pytest.raises(ValueError, match="a is not on a CUDA device"):  # detached, then checked
        tilecast.gemm_nt(a, b, out=out)
    d = torch.zeros(3, 64, 32, requires_grad=True)
    with pytest.raises(RuntimeError, match="tilecast.m_grouped_bf16_gemm_nt_masked: d requires grad"):
        tilecast.m_grouped_bf16_gemm_nt_masked(torch.zeros(3, 64, 128, dtype=torch.bfloat16),
                                               torch.zeros(3, 32, 128, dtype=torch.bfloat16), d,
                                               torch.zeros(3, dtype=torch.int32), 8)


class _Parameter(torch.Tensor):
    """A torch.Tensor subclass defined outside torch, as vLLM's parameters are."""


def test_tensor_subclasses_defined_outside_torch_are_torch_tensors():
    a = torch.zeros(64, 128, dtype=torch.bfloat16)
    w = torch.zeros(32, 128, dtype=torch.bfloat16).as_subclass(_Parameter).requires_grad_()
    assert type(w).__module__ == __name__  # not torch's
    with pytest.raises(RuntimeError, match="tilecast.gemm_nt has no backward"):  # torch's grad guard
        tilecast.gemm_nt(a, w)
    with torch.no_grad(), pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(a.as_subclass(_Parameter), w)


def test_compile_checks_out_dtype_against_a_given_output():
    # The out ops take no out_dtype: the traced call checks it as the eager one does.
    def f(a, b, out):
        return tilecast.gemm_nt(a, b, out=out, out_dtype=torch.float32)

    with pytest.raises(Exception, match="tilecast.gemm_nt: out is bfloat16 but out_dtype is float32"):
        torch.compile(f, fullgraph=True, backend="eager")(meta(64, 128), meta(32, 128), meta(64, 32))

    def g(a, b, d, masked_m):
        return tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 8, out_dtype="bfloat16")

    with pytest.raises(Exception, match="m_grouped_bf16_gemm_nt_masked: d is float32 but out_dtype is bfloat16"):
        torch.compile(g, fullgraph=True, backend="eager")(meta(3, 64, 128), meta(3, 32, 128),
                                                          meta(3, 64, 32, dtype=torch.float32),
                                                          meta(3, dtype=torch.int32))

    def h(a, b, out):  # an out_dtype that agrees traces as before
        tilecast.gemm_nt(a, b, out=out, out_dtype="float32")
        return out

    assert _graph_breaks(h, meta(64, 128), meta(32, 128), meta(64, 32, dtype=torch.float32)) == (1, 0)
