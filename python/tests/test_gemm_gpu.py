"""tilecast on the GPU against torch.matmul in FP32: fresh random inputs (the seed is printed),
outputs poisoned with NaN first, relative Frobenius error bounds (bf16 out 1e-2, fp32 out 1e-3, as
tests/common/include/tilecast_test/compare.hpp reasons them). Also strides, batches, C, streams,
CUDA-graph capture and replay, torch.compile, CuPy. Every test skips without torch or a GPU."""

import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)

import tilecast  # noqa: E402

BOUND = {torch.bfloat16: 1e-2, torch.float32: 1e-3}


@pytest.fixture(autouse=True)
def fresh_seed():
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    print(f"seed {seed}")
    torch.backends.cuda.matmul.allow_tf32 = False
    yield


def randn(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device="cuda", dtype=torch.float32).to(dtype)


def poisoned(*shape, dtype=torch.bfloat16):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype)


def reference(a, b, c=None):
    ref = torch.matmul(a.float(), b.float().transpose(-1, -2))
    return ref if c is None else ref + c.float()


def check(out, ref):
    assert not torch.isnan(out).any(), "an output element was not written"
    err = ((out.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    assert err <= BOUND[out.dtype], f"relative error {err:.3g} > {BOUND[out.dtype]} for {tuple(out.shape)} {out.dtype}"
    return err


SHAPES = [(128, 128, 128), (257, 384, 512), (4096, 576, 7168), (333, 1000, 2048), (1024, 2112, 7168), (64, 7168, 2048)]


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_gemm_nt_matches_torch(m, n, k, out_dtype):
    a, b = randn(m, k), randn(n, k)
    out = poisoned(m, n, dtype=out_dtype)
    assert tilecast.gemm_nt(a, b, out=out) is out
    check(out, reference(a, b))
    allocated = tilecast.gemm_nt(a, b, out_dtype=out_dtype)
    assert allocated.shape == (m, n) and allocated.dtype == out_dtype and allocated.device == a.device
    check(allocated, reference(a, b))


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_c_is_added_and_may_be_out_itself(out_dtype):
    m, n, k = 512, 768, 1024
    a, b, c = randn(m, k), randn(n, k), randn(m, n, dtype=out_dtype)
    out = poisoned(m, n, dtype=out_dtype)
    tilecast.gemm_nt(a, b, out=out, c=c)
    check(out, reference(a, b, c))
    acc = c.clone()
    tilecast.gemm_nt(a, b, out=acc, c=acc)  # D += A @ B^T
    check(acc, reference(a, b, c))


def test_batched_with_padded_rows_and_batch_gaps():
    batch, m, n, k = 4, 256, 384, 512
    a_full = randn(batch * 2, m, k + 64)  # every other batch, rows padded by 64 elements
    a = a_full[::2, :, :k]
    b = randn(batch, n, k)
    out_full = poisoned(batch, m, n + 8)
    out = out_full[:, :, :n]
    tilecast.gemm_nt(a, b, out=out)
    check(out, reference(a, b))
    assert torch.isnan(out_full[:, :, n:]).all(), "the padding of out was written"


def test_misaligned_rows_are_a_tilecast_error():
    a_full = randn(128, 129)
    with pytest.raises(tilecast.Error, match="not a multiple of 16"):
        tilecast.gemm_nt(a_full[:, :128], randn(128, 128))


def test_empty_m_returns_an_empty_output():
    out = tilecast.gemm_nt(randn(0, 256), randn(128, 256))
    assert out.shape == (0, 128)


def test_tensors_that_need_grad():
    a = randn(128, 256).requires_grad_()
    with pytest.raises(RuntimeError, match="no backward"):
        tilecast.gemm_nt(a, randn(128, 256))
    with torch.no_grad():
        b = randn(128, 256)
        check(tilecast.gemm_nt(a, b), reference(a.detach(), b))


def test_runs_on_the_current_and_on_a_given_stream():
    m, n, k = 1024, 1024, 2048
    a, b = randn(m, k), randn(n, k)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # the GEMM must wait for this on `side`, not race it
        a2 = a * 2
        out = tilecast.gemm_nt(a2, b)
    side.synchronize()
    check(out, reference(a * 2, b))
    # stream= overrides the current stream.
    out2 = poisoned(m, n)
    other = torch.cuda.Stream()
    other.wait_stream(torch.cuda.current_stream())
    tilecast.gemm_nt(a, b, out=out2, stream=other)
    other.synchronize()
    check(out2, reference(a, b))


def test_cuda_graph_capture_and_replay_with_new_inputs():
    m, n, k = 512, 1536, 2048
    a, b, out = randn(m, k), randn(n, k), poisoned(m, n)
    tilecast.prepare(a, b, out=out)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tilecast.gemm_nt(a, b, out=out)
    for _ in range(3):
        a.copy_(randn(m, k))
        b.copy_(randn(n, k))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, reference(a, b))


def test_capture_of_an_unprepared_shape_is_refused():
    a, b, out = randn(96, 160), randn(224, 160), poisoned(96, 224)  # a shape no other test uses
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(tilecast.Error, match="prepare"):
        with torch.cuda.graph(graph):
            tilecast.gemm_nt(a, b, out=out)


class Projection(torch.nn.Module):
    def __init__(self, n, k):
        super().__init__()
        self.weight = torch.nn.Parameter(randn(n, k), requires_grad=False)

    def forward(self, x):
        y = tilecast.gemm_nt(x, self.weight)
        return torch.relu(y) + 1


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_torch_compile_traces_without_graph_breaks(mode):
    model = Projection(768, 1024)
    x = randn(256, 1024)
    tilecast.prepare(x, model.weight)
    compiled = torch.compile(model, fullgraph=True, mode=mode)
    with torch.no_grad():
        for _ in range(3):  # reduce-overhead records a CUDA graph on a later call
            y = compiled(x)
        expected = torch.relu(reference(x, model.weight)) + 1
    assert y.dtype == torch.bfloat16
    assert ((y.float() - expected).norm() / expected.norm()).item() <= BOUND[torch.bfloat16]


def test_torch_compile_of_the_out_form():
    def f(a, b, out):
        tilecast.gemm_nt(a, b, out=out)
        return out * 2

    a, b, out = randn(256, 512), randn(384, 512), poisoned(256, 384, dtype=torch.float32)
    y = torch.compile(f, fullgraph=True)(a, b, out)
    check(y / 2, reference(a, b))


def test_custom_ops_are_registered():
    a, b = randn(128, 256), randn(64, 256)
    check(torch.ops.tilecast.gemm_nt(a, b, None, torch.float32, ""), reference(a, b))
    torch.library.opcheck(torch.ops.tilecast.gemm_nt.default, (a, b, None, None, ""))


def test_cupy_output_on_the_cupy_stream():
    cupy = pytest.importorskip("cupy")
    m, n, k = 256, 512, 1024
    a, b = randn(m, k), randn(n, k)  # CuPy has no bfloat16: the inputs stay torch tensors
    c = cupy.asarray(randn(m, n, dtype=torch.float32))
    out = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
    torch.cuda.synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        tilecast.gemm_nt(a, b, out=out, c=c, stream=cupy.cuda.get_current_stream())
    stream.synchronize()
    check(torch.from_dlpack(out), reference(a, b, torch.from_dlpack(c)))


def test_plan_and_warm_see_this_gpu(tmp_path):
    text = tilecast.plan(4096, 2112, 7168)
    assert text.startswith("problem 4096x2112x7168") and torch.cuda.get_device_name() in text
    kernels = tilecast.warm([(4096, 2112, 7168), dict(m=128, n=4096, k=7168, out_dtype="float32", with_c=True)],
                            progress=False)
    assert kernels and all(k["spill_bytes"] == 0 for k in kernels)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_tensors_on_another_device_than_the_current_one():
    with torch.cuda.device(1):
        a, b = randn(256, 512), randn(128, 512)
    assert torch.cuda.current_device() == 0
    out = tilecast.gemm_nt(a, b)
    assert out.device == a.device
    torch.cuda.synchronize(1)
    check(out, reference(a, b))
    assert torch.cuda.current_device() == 0
