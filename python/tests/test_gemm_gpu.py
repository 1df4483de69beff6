"""tilecast on the GPU against torch.matmul in FP32: fresh random inputs (the seed is printed),
outputs poisoned with NaN first, relative Frobenius error bounds (bf16 out 1e-2, fp32 out 1e-3, as
tests/common/include/tilecast_test/compare.hpp reasons them). Also strides, batches, C, the
epilogue (alpha, beta, bias), streams, CUDA-graph capture and replay, torch.compile, CuPy, and the
grouped GEMMs (m-grouped contiguous with offsets and row index, masked, k-grouped written and
accumulated): rows or groups a call does not own must keep their poison, the rows of A no expert
owns hold a large value that must show nowhere, and graphs replay with new group sizes. Every test
skips without torch or a GPU."""

import importlib.util
import itertools
import os
import subprocess
import sys
import time

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


# The largest error of one element against the reference's RMS, as the C++ tests bound it
# (tests/common/src/compare.cu, an FP32 reference): the Frobenius bound alone let 128 zeroed
# elements of a 4096x576 bf16 output pass, or one of an fp32 output.
MAX_OVER_RMS = {torch.bfloat16: 0.05, torch.float32: 1e-2}


def check(out, ref):
    assert torch.isfinite(out).all(), "an output element was not written (NaN) or is infinite"
    diff = out.float() - ref
    err = (diff.norm() / ref.norm().clamp_min(1e-30)).item()
    assert err <= BOUND[out.dtype], f"relative error {err:.3g} > {BOUND[out.dtype]} for {tuple(out.shape)} {out.dtype}"
    rms = (ref.norm() / max(ref.numel(), 1) ** 0.5).clamp_min(1e-30)
    worst = (diff.abs().max() / rms).item() if diff.numel() else 0.0
    assert worst <= MAX_OVER_RMS[out.dtype], (
        f"an element off by {worst:.3g} x the reference's RMS > {MAX_OVER_RMS[out.dtype]} for {tuple(out.shape)} "
        f"{out.dtype}")
    return err


SHAPES = [(128, 128, 128), (257, 384, 512), (4096, 576, 7168), (333, 1000, 2048), (1024, 2112, 7168), (64, 7168, 2048)]


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_gemm_nt_matches_torch(m, n, k, out_dtype):
    a, b = randn(m, k), randn(n, k)
    # Kept alive: a freed FP32 reference is a block of the size an FP32 output asks for, holding the
    # right answer, which the caching allocator could hand to the output tilecast allocates.
    ref = reference(a, b)
    out = poisoned(m, n, dtype=out_dtype)
    assert tilecast.gemm_nt(a, b, out=out) is out
    check(out, ref)
    allocated = tilecast.gemm_nt(a, b, out_dtype=out_dtype)
    assert allocated.shape == (m, n) and allocated.dtype == out_dtype and allocated.device == a.device
    check(allocated, ref)


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


@pytest.mark.parametrize("k_splits", [0, 3])
def test_split_k_matches_and_is_deterministic(k_splits):
    # m = 128 with a long K: the planner splits it (k_splits 0) or the config forces 3 slices.
    m, n, k = 128, 576, 7168
    a, b = randn(m, k), randn(n, k)
    config = f"k_splits={k_splits}"
    first = tilecast.gemm_nt(a, b, config=config)
    check(first, reference(a, b))
    second = tilecast.gemm_nt(a, b, config=config)
    assert torch.equal(first, second), "split-K output differs between runs"


def test_split_k_fused_reduce_gives_the_reduce_kernels_bytes():
    # The slices summed inside the GEMM (fused_reduce=1) or by the reduce kernel (0): same order,
    # same arithmetic, the same bytes; with C, alpha, beta and a bias through either.
    m, n, k = 129, 2056, 4104  # rows of 16-byte multiples, as the TMA needs
    a, b, c, bias = randn(m, k), randn(n, k), randn(m, n), randn(n)
    outs = [tilecast.gemm_nt(a, b, c=c, bias=bias, alpha=0.5, beta=2.0,
                             config=f"k_splits=3,fused_reduce={fused}") for fused in (0, 1)]
    check(outs[1], 0.5 * reference(a, b) + 2.0 * c.float() + bias.float())
    assert torch.equal(outs[0], outs[1]), "the fused reduce differs from the reduce kernel"


def test_split_k_captured_after_prepare_on_a_fresh_stream():
    # torch.cuda.graph captures on a stream of its own: prepare() readies the workspace it takes.
    m, n, k = 65, 1000, 4104
    a, b, c, out = randn(m, k), randn(n, k), randn(m, n), poisoned(m, n)
    tilecast.prepare(a, b, out=out, c=c, config="k_splits=3")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tilecast.gemm_nt(a, b, out=out, c=c, config="k_splits=3")
    for _ in range(3):
        a.copy_(randn(m, k))
        c.copy_(randn(m, n))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, reference(a, b, c))


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
    check(torch.ops.tilecast.gemm_nt(a, b, None, None, 1.0, 1.0, torch.float32, ""), reference(a, b))
    torch.library.opcheck(torch.ops.tilecast.gemm_nt.default, (a, b, None, None, 1.0, 1.0, None, ""))
    bias = randn(64, dtype=torch.float32)
    check(torch.ops.tilecast.gemm_nt(a, b, None, bias, 2.0, 1.0, torch.float32, ""), 2 * reference(a, b) + bias)


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
    text = tilecast.plan(1024, 4096, 7168, kind="m_grouped_bf16_gemm_nt_masked", num_groups=32, expected_m=32)
    assert text.startswith("problem m_grouped_bf16_gemm_nt_masked") and torch.cuda.get_device_name() in text


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


# The epilogue: out = alpha * A @ B^T + beta * C + bias (bias[n], bf16 or fp32, on every row).

def epilogue_reference(a, b, alpha=1.0, beta=1.0, c=None, bias=None):
    ref = alpha * reference(a, b)
    if c is not None:
        ref = ref + beta * c.float()
    return ref if bias is None else ref + bias.float()


EPILOGUES = [  # m, n, k, out dtype, with C, alpha, beta, bias dtype (None: no bias)
    (512, 768, 1024, torch.float32, True, 0.5, 2.0, torch.float32),
    (512, 768, 1024, torch.bfloat16, True, -1.0, 0.25, torch.bfloat16),
    (333, 1000, 2048, torch.bfloat16, False, 1.5, 1.0, torch.float32),
    (257, 384, 512, torch.float32, False, 1.0, 1.0, torch.bfloat16),
    (4096, 576, 7168, torch.bfloat16, True, 1.0, 1.0, torch.bfloat16),
    (128, 4096, 7168, torch.float32, False, 2.0, 1.0, None),
]


@pytest.mark.parametrize("m, n, k, out_dtype, with_c, alpha, beta, bias_dtype", EPILOGUES)
def test_epilogue_matches_torch(m, n, k, out_dtype, with_c, alpha, beta, bias_dtype):
    a, b = randn(m, k), randn(n, k)
    c = randn(m, n, dtype=out_dtype) if with_c else None
    bias = randn(n, dtype=bias_dtype) * 4 if bias_dtype else None
    out = poisoned(m, n, dtype=out_dtype)
    assert tilecast.gemm_nt(a, b, out=out, c=c, bias=bias, alpha=alpha, beta=beta) is out
    check(out, epilogue_reference(a, b, alpha, beta, c, bias))


def test_beta_zero_never_reads_c():
    m, n, k = 512, 768, 1024
    a, b, bias = randn(m, k), randn(n, k), randn(n, dtype=torch.float32)
    c = poisoned(m, n, dtype=torch.float32)  # NaN: any read of it would show
    out = poisoned(m, n, dtype=torch.float32)
    tilecast.gemm_nt(a, b, out=out, c=c, beta=0.0, alpha=0.5, bias=bias)
    check(out, epilogue_reference(a, b, alpha=0.5, bias=bias))


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_epilogue_in_place_and_batched(out_dtype):
    m, n, k = 512, 768, 1024
    a, b, c = randn(m, k), randn(n, k), randn(m, n, dtype=out_dtype)
    acc = c.clone()
    tilecast.gemm_nt(a, b, out=acc, c=acc, alpha=2.0, beta=-1.0)  # D = 2 A @ B^T - D
    check(acc, epilogue_reference(a, b, 2.0, -1.0, c))
    batch = 3
    a3, b3, bias = randn(batch, 256, 512), randn(batch, 384, 512), randn(384, dtype=torch.bfloat16)
    out = tilecast.gemm_nt(a3, b3, bias=bias, out_dtype=out_dtype)  # the bias on every batch
    check(out, epilogue_reference(a3, b3, bias=bias))


def test_epilogue_under_cuda_graph_with_new_bias():
    m, n, k = 512, 1536, 2048
    a, b, c = randn(m, k), randn(n, k), randn(m, n, dtype=torch.float32)
    bias, out = randn(n, dtype=torch.float32), poisoned(m, n, dtype=torch.float32)
    tilecast.prepare(a, b, out=out, c=c, bias=bias, alpha=0.75, beta=0.5)
    graph = captured(lambda: tilecast.gemm_nt(a, b, out=out, c=c, bias=bias, alpha=0.75, beta=0.5))
    for _ in range(2):
        bias.copy_(randn(n, dtype=torch.float32))
        c.copy_(randn(m, n, dtype=torch.float32))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, epilogue_reference(a, b, 0.75, 0.5, c, bias))


def test_torch_compile_of_the_epilogue():
    def f(a, b, bias):
        return torch.relu(tilecast.gemm_nt(a, b, bias=bias, alpha=0.5, out_dtype=torch.float32)) + 1

    a, b, bias = randn(256, 512), randn(384, 512), randn(384, dtype=torch.bfloat16)
    y = torch.compile(f, fullgraph=True)(a, b, bias)
    expected = torch.relu(epilogue_reference(a, b, alpha=0.5, bias=bias)) + 1
    assert ((y - expected).norm() / expected.norm()).item() <= BOUND[torch.float32]


def captured(call):
    """A CUDA graph of call() (prepared before)."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph


# Grouped GEMMs. D is poisoned with NaN; A's rows that no expert owns hold UNOWNED, so that a
# row-mapping error shows either as a huge error in an owned row or as a written unowned row.

UNOWNED = 1.0e4


def int32(values):
    return torch.tensor(list(values), dtype=torch.int32, device="cuda")


def offsets_of(sizes):
    """(offsets [G + 1] on the GPU, the (first, end) rows of each expert)."""
    ends = list(itertools.accumulate(sizes))
    return int32([0, *ends]), list(zip([0, *ends[:-1]], ends))


def row_index_of(sizes, spare_runs=0):
    """(row index on the GPU, spans, rows): each expert's run starts on a multiple of 128 and is
    padded with -1; `spare_runs` runs of padding follow."""
    index, spans = [], []
    for g, s in enumerate(sizes):
        spans.append((len(index), len(index) + s))
        run = -(-s // 128) * 128
        index += [g] * s + [-1] * (run - s)
    index += [-1] * (128 * spare_runs)
    return int32(index), spans, len(index)


def contiguous_inputs(rows, groups, n, k, spans):
    a, b = randn(rows, k), randn(groups, n, k)
    owned = torch.zeros(rows, dtype=torch.bool, device="cuda")
    for s, e in spans:
        owned[s:e] = True
    a[~owned] = UNOWNED
    return a, b, owned


def check_contiguous(d, a, b, spans, owned):
    outs = [d[s:e] for s, e in spans if e > s]
    refs = [reference(a[s:e], b[g]) for g, (s, e) in enumerate(spans) if e > s]
    if outs:
        check(torch.cat(outs), torch.cat(refs))
    assert torch.isnan(d[~owned]).all(), "a row no expert owns was written"


CONTIGUOUS = [  # layout, expert sizes, spare rows (offsets) or padding runs (row index) at the end, n, k
    ("offsets", [300, 0, 129, 640], 67, 512, 1024),
    ("offsets", [1, 2, 3, 1000, 0, 250, 77, 8], 0, 384, 768),
    ("offsets", [1024, 1024, 1024, 1024], 0, 2112, 7168),
    ("row_index", [200, 0, 128, 37], 1, 512, 1024),
    ("row_index", [640, 129, 1, 384], 0, 2112, 7168),
]


@pytest.mark.parametrize("layout, sizes, spare, n, k", CONTIGUOUS)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_m_grouped_contiguous_matches_torch(layout, sizes, spare, n, k, out_dtype):
    if layout == "offsets":
        data, spans = offsets_of(sizes)
        rows = sum(sizes) + spare
    else:
        data, spans, rows = row_index_of(sizes, spare)
    a, b, owned = contiguous_inputs(rows, len(sizes), n, k, spans)
    d = poisoned(rows, n, dtype=out_dtype)
    assert tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d, data, layout=layout) is d
    check_contiguous(d, a, b, spans, owned)
    # d allocated: the owned rows are the same.
    fresh = tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, None, data, layout, out_dtype=out_dtype)
    assert fresh.shape == (rows, n) and fresh.dtype == out_dtype
    check(fresh[owned], d[owned].float())


def test_m_grouped_contiguous_graph_replays_with_new_offsets():
    groups, n, k, rows = 4, 512, 1024, 1000
    sizes = [250, 250, 250, 250]
    data, spans = offsets_of(sizes)
    a, b, d = randn(rows, k), randn(groups, n, k), poisoned(rows, n)
    tilecast.prepare_m_grouped_bf16_gemm_nt_contiguous(a, b, d, data, "offsets")
    graph = captured(lambda: tilecast.m_grouped_bf16_gemm_nt_contiguous(a, b, d, data, "offsets"))
    for sizes in ([250, 250, 250, 250], [0, 999, 0, 1], [0, 0, 0, 0], [17, 0, 400, 300]):
        new, spans = offsets_of(sizes)
        data.copy_(new)
        a.copy_(randn(rows, k))
        owned = torch.zeros(rows, dtype=torch.bool, device="cuda")
        for s, e in spans:
            owned[s:e] = True
        a[~owned] = UNOWNED
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_contiguous(d, a, b, spans, owned)


def masked_inputs(groups, max_m, n, k, counts):
    a, b = randn(groups, max_m, k), randn(groups, n, k)
    owned = torch.arange(max_m, device="cuda")[None, :] < counts.to("cuda")[:, None]  # [groups, max_m]
    a[~owned] = UNOWNED
    return a, b, owned


def check_masked(d, a, b, owned):
    check(d[owned], reference(a, b)[owned])
    assert torch.isnan(d[~owned]).all(), "a row past its expert's count was written"


MASKED = [  # experts, max_m, n, k, expected_m
    (6, 192, 512, 768, 96),
    (8, 256, 4096, 7168, 32),
    (32, 64, 1024, 512, 20),
]


@pytest.mark.parametrize("groups, max_m, n, k, expected_m", MASKED)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_m_grouped_masked_matches_torch(groups, max_m, n, k, expected_m, out_dtype):
    counts = torch.randint(0, max_m + 1, (groups,), dtype=torch.int32)
    counts[0], counts[1] = 0, max_m  # an empty and a full expert
    a, b, owned = masked_inputs(groups, max_m, n, k, counts)
    masked_m = counts.cuda()
    d = poisoned(groups, max_m, n, dtype=out_dtype)
    assert tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m) is d
    check_masked(d, a, b, owned)


def test_m_grouped_masked_graph_replays_with_new_counts():
    groups, max_m, n, k, expected_m = 8, 128, 1024, 2048, 32
    a, b = randn(groups, max_m, k), randn(groups, n, k)
    masked_m = int32([expected_m] * groups)
    d = poisoned(groups, max_m, n)
    tilecast.prepare_m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m)
    graph = captured(lambda: tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m))
    random = torch.randint(0, max_m + 1, (groups,), dtype=torch.int32).tolist()
    for counts in ([0] * groups, [max_m] * groups, [1] + [0] * (groups - 1), random, [expected_m] * groups):
        counts = torch.tensor(counts, dtype=torch.int32)
        fresh, _, owned = masked_inputs(groups, max_m, n, k, counts)
        a.copy_(fresh)
        masked_m.copy_(counts)
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked(d, a, b, owned)


def test_m_grouped_masked_on_a_side_stream():
    groups, max_m, n, k = 4, 128, 512, 1024
    counts = torch.tensor([128, 3, 0, 77], dtype=torch.int32)
    a, b, owned = masked_inputs(groups, max_m, n, k, counts)
    masked_m, d = counts.cuda(), poisoned(groups, max_m, n)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # the GEMM must wait for this on `side`, not race it
        a2 = a * 2
        tilecast.m_grouped_bf16_gemm_nt_masked(a2, b, d, masked_m, 64)
    side.synchronize()
    check_masked(d, a * 2, b, owned)


def kgrouped_reference(a, b, sizes, m, n):
    refs, start = [], 0
    for s in sizes:
        refs.append(reference(a[:, start:start + s], b[:, start:start + s]) if s else
                    torch.zeros(m, n, device="cuda"))
        start += s
    return torch.stack(refs)


KGROUPED = [  # group sizes (multiples of 8, none of 64 but two; 0 allowed), k of A and B (columns past
    # the sizes' sum hold NaN), m, n
    ([104, 0, 256, 40], 400, 256, 384),
    ([4096, 1000, 3000], 8096, 512, 1024),
    ([64] * 8, 512, 2112, 576),
]


@pytest.mark.parametrize("sizes, k, m, n", KGROUPED)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_k_grouped_matches_torch(sizes, k, m, n, out_dtype):
    a, b = randn(m, k), randn(n, k)
    a[:, sum(sizes):] = float("nan")  # past every group: must never reach the products
    b[:, sum(sizes):] = float("nan")
    k_sizes, groups = int32(sizes), len(sizes)
    ref = kgrouped_reference(a, b, sizes, m, n)
    d = poisoned(groups, m, n, dtype=out_dtype)
    assert tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes) is d
    check(d, ref)
    for g, s in enumerate(sizes):
        if s == 0:
            assert (d[g] == 0).all(), "a group of K = 0 must give D[g] = 0"
    # Accumulating: D[g] += A_g @ B_g^T; a group of K = 0 leaves D[g] as it was.
    c = randn(groups, m, n, dtype=out_dtype)
    acc = c.clone()
    assert tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, acc, k_sizes, c=acc) is acc
    check(acc, ref + c.float())
    for g, s in enumerate(sizes):
        if s == 0:
            assert torch.equal(acc[g], c[g])
    fresh = tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, None, k_sizes, out_dtype=out_dtype)
    assert fresh.shape == (groups, m, n) and fresh.dtype == out_dtype
    check(fresh, ref)


def test_k_grouped_graph_replays_with_new_sizes():
    m, n, k, groups = 256, 512, 2048, 4
    a, b = randn(m, k), randn(n, k)
    k_sizes = int32([512] * groups)
    d = poisoned(groups, m, n, dtype=torch.float32)
    tilecast.prepare_k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c=d)
    graph = captured(lambda: tilecast.k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c=d))
    for sizes in ([512] * groups, [2048, 0, 0, 0], [8, 1000, 0, 776], [0] * groups):
        c = randn(groups, m, n, dtype=torch.float32)
        d.copy_(c)
        k_sizes.copy_(torch.tensor(sizes, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        check(d, kgrouped_reference(a, b, sizes, m, n) + c)


def test_grouped_capture_of_an_unprepared_shape_is_refused():
    a, b, masked_m = randn(3, 96, 160), randn(3, 224, 160), int32([1, 2, 3])  # shapes no other test uses
    d = poisoned(3, 96, 224)
    with pytest.raises(tilecast.Error, match="prepare"):
        captured(lambda: tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 3))


def test_torch_compile_of_grouped_gemms():
    groups, n, k = 4, 512, 1024
    sizes = [100, 300, 0, 112]
    offsets, spans = offsets_of(sizes)
    x, w = randn(sum(sizes), k), randn(groups, n, k)

    def moe(x, w, offsets):
        y = tilecast.m_grouped_bf16_gemm_nt_contiguous(x, w, None, offsets, layout="offsets")
        return torch.relu(y) * 2

    y = torch.compile(moe, fullgraph=True)(x, w, offsets)
    expected = torch.relu(torch.cat([reference(x[s:e], w[g]) for g, (s, e) in enumerate(spans) if e > s])) * 2
    assert ((y.float() - expected).norm() / expected.norm()).item() <= BOUND[torch.bfloat16]

    # Masked under CUDA graphs (reduce-overhead), prepared first.
    max_m, expected_m = 64, 16
    counts = torch.tensor([16, 0, 64, 5], dtype=torch.int32)
    a, b, owned = masked_inputs(groups, max_m, n, k, counts)
    masked_m = counts.cuda()
    tilecast.prepare_m_grouped_bf16_gemm_nt_masked(a, b, None, masked_m, expected_m, out_dtype=torch.float32)

    def decode(a, b, masked_m):
        return tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, masked_m, expected_m, out_dtype=torch.float32) * 3

    compiled = torch.compile(decode, fullgraph=True, mode="reduce-overhead")
    for _ in range(3):  # reduce-overhead records a CUDA graph on a later call
        out = compiled(a, b, masked_m)
    check(out[owned] / 3, reference(a, b)[owned])


def test_grouped_custom_ops():
    groups, max_m, n, k = 4, 64, 256, 512
    counts = torch.tensor([64, 1, 0, 30], dtype=torch.int32)
    a, b, owned = masked_inputs(groups, max_m, n, k, counts)
    d = poisoned(groups, max_m, n)
    torch.ops.tilecast.m_grouped_bf16_gemm_nt_masked(a, b, d, counts.cuda(), 32, "")
    check_masked(d, a, b, owned)
    # opcheck compares runs on copies of d: zeros, since NaN never compares equal.
    torch.library.opcheck(torch.ops.tilecast.m_grouped_bf16_gemm_nt_masked.default,
                          (a, b, torch.zeros(groups, max_m, n, device="cuda", dtype=torch.bfloat16), counts.cuda(),
                           32, ""))


FAULT = """
import torch, tilecast
a = torch.randn(3, 100, 256, device="cuda").bfloat16()
b = torch.randn(3, 128, 256, device="cuda").bfloat16()
masked_m = torch.tensor([5, 100, 101], dtype=torch.int32, device="cuda")  # 101 > max_m = 100
tilecast.m_grouped_bf16_gemm_nt_masked(a, b, None, masked_m, 32)
try:
    torch.cuda.synchronize()
    print("no CUDA error", flush=True)
except Exception as e:
    print("CUDA error:", type(e).__name__, flush=True)
print("report:", tilecast.take_layout_fault_report(), flush=True)
"""


def test_group_data_the_problem_cannot_mean_traps_and_is_reported():
    # In a child process: the trap ends its CUDA context.
    run = subprocess.run([sys.executable, "-c", FAULT], capture_output=True, text=True, timeout=300)
    assert "CUDA error:" in run.stdout, run.stdout + run.stderr
    assert "report: m-grouped masked: masked_m[2] = 101 is outside [0, max_m = 100]" in run.stdout, run.stdout
    assert tilecast.take_layout_fault_report() is None  # nothing trapped in this process


# The Python binding's own rules: outputs and autograd, streams of allocated outputs, tensor
# subclasses, single rows, empty problems, JAX on another device.

def test_a_write_into_out_is_seen_by_autograd():
    # tilecast bumps the version of what it writes, as torch's in-place ops do: a backward that
    # saved the old values raises instead of using the new ones.
    a, b = randn(128, 256), randn(64, 256)
    out, w = torch.zeros(128, 64, device="cuda"), torch.ones(64, device="cuda", requires_grad=True)
    loss = (out * w).sum()  # saves out for w's gradient
    version = out._version
    tilecast.gemm_nt(a, b, out=out)
    assert out._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    d = torch.zeros(2, 64, 64, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    loss = (d * w).sum()
    tilecast.m_grouped_bf16_gemm_nt_masked(randn(2, 64, 256), randn(2, 64, 256), d, int32([64, 5]), 32)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_an_output_that_requires_grad_is_written_only_under_no_grad():
    a, b = randn(128, 256), randn(64, 256)
    p = torch.zeros(128, 64, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="tilecast.gemm_nt: out requires grad"):
        tilecast.gemm_nt(a, b, out=p)
    version = p._version
    with torch.no_grad():
        assert tilecast.gemm_nt(a, b, out=p) is p
    assert p._version > version
    check(p.detach(), reference(a, b))


def _stream_of_block(t):
    """The stream the caching allocator counts t's block as: its segment's."""
    p = t.data_ptr()
    for segment in torch.cuda.memory_snapshot():
        if segment["address"] <= p < segment["address"] + segment["total_size"]:
            return segment["stream"]
    raise AssertionError("no segment of the caching allocator holds the tensor")


def test_an_output_allocated_for_a_given_stream_is_that_streams():
    # The GEMM writes it on `stream`: a block of the current stream could be handed to the current
    # stream's next tensor once freed, while the GEMM still writes it.
    a, b = randn(256, 512), randn(384, 512)
    masked_a, masked_b, masked_m = randn(2, 64, 512), randn(2, 384, 512), int32([64, 3])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    for stream in (side, side.cuda_stream):  # a torch stream, a handle
        out = tilecast.gemm_nt(a, b, stream=stream)
        assert _stream_of_block(out) == side.cuda_stream
        side.synchronize()
        check(out, reference(a, b))
    d = tilecast.m_grouped_bf16_gemm_nt_masked(masked_a, masked_b, None, masked_m, 32, stream=side)
    assert _stream_of_block(d) == side.cuda_stream
    side.synchronize()
    assert _stream_of_block(tilecast.gemm_nt(a, b)) == torch.cuda.current_stream().cuda_stream


class _Parameter(torch.Tensor):
    """A torch.Tensor subclass defined outside torch, as vLLM's parameters are."""


def test_tensor_subclasses_run_on_torchs_current_stream():
    m, n, k = 1024, 1024, 2048
    a, b = randn(m, k).as_subclass(_Parameter), randn(n, k).as_subclass(_Parameter)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # the GEMM must wait for this on `side`, not race it
        a2 = a * 2
        out = tilecast.gemm_nt(a2, b)  # allocated through torch
    side.synchronize()
    check(out.as_subclass(torch.Tensor), reference(a2.as_subclass(torch.Tensor), b.as_subclass(torch.Tensor)))


def test_a_single_row_of_padded_rows():
    # One row's stride addresses nothing: a [1, n] view of padded rows (a vocabulary's logits,
    # n * 2 bytes no multiple of 16) and a [1, k] one (k % 8 != 0; b's rows padded, as TMA needs).
    n, k = 50257, 1001
    a, b = randn(1, 1008)[:, :k], randn(n, 1008)[:, :k]
    out_full = poisoned(1, 50264)
    out = out_full[:, :n]
    assert tilecast.gemm_nt(a, b, out=out) is out
    check(out, reference(a, b))
    assert torch.isnan(out_full[:, n:]).all(), "the padding of out was written"
    check(tilecast.gemm_nt(a, b, out_dtype=torch.float32), reference(a, b))  # a packed [1, n] fp32 row
    # A batch of single rows: [batch, 1, n] with padded batches.
    a, b = randn(4, 1, 1008)[..., :k], randn(4, 999, 1008)[..., :k]
    out_full = poisoned(4, 1, 1000)
    out = out_full[..., :999]
    tilecast.gemm_nt(a, b, out=out)
    check(out, reference(a, b))
    assert torch.isnan(out_full[..., 999:]).all(), "the padding of out was written"


def test_an_empty_problem_still_gets_its_config_checked():
    a, b = randn(0, 256), randn(128, 256)
    with pytest.raises(tilecast.Error, match="config: block_m 96 is not 64, 128 or 192"):
        tilecast.gemm_nt(a, b, config="block_m=96")
    assert tilecast.gemm_nt(a, b, config="block_m=128").shape == (0, 128)
    with pytest.raises(tilecast.Error, match="config: block_m 96 is not 64, 128 or 192"):
        tilecast.m_grouped_bf16_gemm_nt_masked(randn(4, 0, 256), randn(4, 128, 256), None, int32([0] * 4), 1,
                                               config="block_m=96")


JAX_ON_GPU1 = """
import os
os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
import jax, jax.numpy as jnp, torch, tilecast
try:
    gpu1 = jax.devices("gpu")[1]
except (RuntimeError, IndexError) as e:
    print("no second JAX GPU:", e, flush=True)
    raise SystemExit(0)
a = jax.device_put(jnp.ones((8192, 8192), jnp.bfloat16), gpu1)
b = jax.device_put(jnp.ones((8192, 8192), jnp.bfloat16), gpu1)
jax.block_until_ready((a, b))
assert torch.cuda.current_device() == 0
d = tilecast.gemm_nt(a, b)  # synchronous: returns once the GEMM on cuda:1's default stream is done
print("done:", torch.cuda.default_stream(1).query(), flush=True)
print("d[0, 0]:", float(d[0, 0]), flush=True)
"""


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_a_jax_call_on_another_device_returns_once_its_gemm_is_done():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("needs JAX")
    run = subprocess.run([sys.executable, "-c", JAX_ON_GPU1], capture_output=True, text=True, timeout=300)
    if run.stdout.startswith("no second JAX GPU"):
        pytest.skip(run.stdout.strip())
    assert "done: True" in run.stdout, run.stdout + run.stderr
    assert "d[0, 0]: 8192.0" in run.stdout, run.stdout + run.stderr


def _name(dtype):
    return str(dtype).removeprefix("torch.")


def _row_index_rows(sizes, spare_runs):
    return sum(-(-s // 128) * 128 for s in sizes) + 128 * spare_runs


@pytest.fixture(scope="module", autouse=True)
def warm_the_parametrized_kernels():
    """Compiles the kernels of the parametrized cases above in parallel, on every core, before the
    first test: each would otherwise compile on its first call, one after another. A failure here
    is only printed: the test whose kernel it is then fails on its own."""
    dtypes = (torch.bfloat16, torch.float32)
    problems = [dict(m=m, n=n, k=k, out_dtype=_name(o)) for m, n, k in SHAPES for o in dtypes]
    problems += [dict(m=m, n=n, k=k, out_dtype=_name(o), with_c=with_c and beta != 0,
                      bias=_name(bias) if bias else None)
                 for m, n, k, o, with_c, alpha, beta, bias in EPILOGUES]
    for layout, sizes, spare, n, k in CONTIGUOUS:
        rows = sum(sizes) + spare if layout == "offsets" else _row_index_rows(sizes, spare)
        problems += [dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=rows, n=n, k=k, num_groups=len(sizes),
                          layout=layout, out_dtype=_name(o)) for o in dtypes]
    problems += [dict(kind="m_grouped_bf16_gemm_nt_masked", m=max_m, n=n, k=k, num_groups=groups,
                      expected_m=expected_m, out_dtype=_name(o))
                 for groups, max_m, n, k, expected_m in MASKED for o in dtypes]
    problems += [dict(kind="k_grouped_bf16_gemm_nt_contiguous", m=m, n=n, k=k, num_groups=len(sizes),
                      accumulate=acc, out_dtype=_name(o))
                 for sizes, k, m, n in KGROUPED for o in dtypes for acc in (False, True)]
    t0 = time.time()
    try:
        kernels = tilecast.warm(problems, progress=False)
        compiled = sum(not k["from_cache"] for k in kernels)
        print(f"warm-up: {len(problems)} problems, {len(kernels)} kernels, {compiled} compiled, "
              f"{time.time() - t0:.1f} s")
    except (tilecast.Error, ValueError) as e:
        print(f"warm-up failed ({e}); each test compiles its own kernels")
    yield
