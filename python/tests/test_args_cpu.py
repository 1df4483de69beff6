"""What tilecast checks before it touches CUDA, on host arrays: NumPy's own, and bfloat16 DLPack
capsules made by hand (dlpack_capsule.py). Needs no GPU and no PyTorch (CI runs it)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tilecast

sys.path.insert(0, os.path.dirname(__file__))
import dlpack_capsule as dl  # noqa: E402


def bf16(*shape, **kw):
    return dl.tensor(shape, "bfloat16", **kw)


def test_import_needs_no_torch():
    # As if torch were not installed: `import torch` raises ImportError.
    code = "import sys; sys.modules['torch'] = None; import tilecast; print(tilecast._torch_ops.torch is None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def test_error_is_a_runtime_error_carrying_the_cpp_message():
    assert issubclass(tilecast.Error, RuntimeError)
    with pytest.raises(tilecast.Error, match="block wants BMxBNxBK"):
        tilecast.parse_config("block=1x2")


@pytest.mark.parametrize(
    "a, b, message",
    [
        (np.zeros((64, 128), np.float32), np.zeros((32, 128), np.float32), "a must be bfloat16, got float32"),
        (bf16(64, 128), np.zeros((32, 128), np.float64), "b must be bfloat16, got float64"),
        (bf16(64, 128), np.zeros((32, 128), np.int16), "b must be bfloat16, got int16"),
    ],
)
def test_wrong_dtype_is_a_type_error(a, b, message):
    with pytest.raises(TypeError, match=message):
        tilecast.gemm_nt(a, b)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (np.zeros(5, np.float32), bf16(32, 128), r"a must be 2-D or 3-D \(a batch\), got 1-D with shape \(5,\)"),
        (np.zeros((1, 2, 3, 4), np.float32), bf16(32, 128), "got 4-D"),
        (bf16(64, 128), bf16(2, 32, 128), "b is 3-D but a is 2-D"),
    ],
)
def test_wrong_rank_is_a_value_error(a, b, message):
    with pytest.raises(ValueError, match=message):
        tilecast.gemm_nt(a, b)


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(a=bf16(64, 128), b=bf16(32, 96)), r"a is \[m=64, k=128\] but b is \[n=32, k=96\]: they must agree on k"),
        (dict(a=bf16(2, 64, 128), b=bf16(3, 32, 128)), "must agree on k and batch"),
        (dict(a=bf16(64, 128), b=bf16(32, 128), out=bf16(64, 31)), r"out is \[m=64, n=31\], expected \[m=64, n=32\]"),
        (dict(a=bf16(64, 128), b=bf16(32, 128), c=bf16(63, 32)), r"c is \[m=63, n=32\], expected \[m=64, n=32\]"),
        (dict(a=bf16(2, 64, 128), b=bf16(2, 32, 128), out=bf16(1, 64, 32)), r"out is \[batch=1, m=64, n=32\]"),
    ],
)
def test_shape_mismatch_is_a_value_error(args, message):
    with pytest.raises(ValueError, match=message):
        tilecast.gemm_nt(**args)


def test_strides_matrix_view_cannot_express_are_value_errors():
    with pytest.raises(ValueError, match="contiguous in its last dimension"):
        tilecast.gemm_nt(bf16(64, 128, strides=(1, 64)), bf16(32, 128))  # a transposed view
    with pytest.raises(ValueError, match="row stride 0"):
        tilecast.gemm_nt(bf16(64, 128, strides=(0, 1)), bf16(32, 128))  # broadcast rows
    with pytest.raises(ValueError, match="batch stride 0"):
        tilecast.gemm_nt(bf16(2, 64, 128, strides=(0, 128, 1)), bf16(2, 32, 128))


def test_padded_rows_and_batches_pass_the_checks():
    # Row stride 136 and batch stride 9000 elements are fine for the checks; the call then fails
    # only at the device check (host memory).
    a = bf16(2, 64, 128, strides=(9000, 136, 1))
    with pytest.raises(ValueError, match="not on a CUDA device"):
        tilecast.gemm_nt(a, bf16(2, 32, 128))


def test_a_single_row_is_never_refused_for_its_stride():
    # One row's stride addresses nothing: a [1, n] view of padded rows with n * 2 bytes not a
    # multiple of 16 (k = 51 here; b's rows padded to 56 elements, as TMA needs) passes every check
    # of the binding. The call then fails only where it needs the GPU: without one, making the
    # device current; with one, A in host memory, never A's row stride ("pad the rows").
    cuda = dict(device_type=dl.CUDA)
    a = bf16(1, 51, strides=(64, 1), **cuda)
    with pytest.raises(tilecast.Error, match=r"^tilecast: (cudaSetDevice\(0\) failed|A is not in device memory)"):
        tilecast.gemm_nt(a, bf16(32, 51, strides=(56, 1), **cuda), out=bf16(1, 32, **cuda))
    # A NumPy [1, 51] view of a wider row (out, float32) reaches the device check.
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(bf16(1, 128), bf16(51, 128), out=np.zeros((1, 64), np.float32)[:, :51])


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(out=np.zeros((64, 32), np.int32)), "out must be bfloat16 or float32, got int32"),
        (dict(out=bf16(64, 32), out_dtype="float32"), "out is bfloat16 but out_dtype is float32"),
        (dict(c=dl.tensor((64, 32), "float32"), out_dtype="bfloat16"), "c is float32 but the output is bfloat16"),
        (dict(out_dtype="int8"), "out_dtype must be bfloat16 or float32"),
    ],
)
def test_output_dtype_rules_are_type_errors(args, message):
    with pytest.raises(TypeError, match=message):
        tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), **args)


@pytest.mark.parametrize("fn", ["gemm_nt", "prepare"])
@pytest.mark.parametrize("out", [object(), [[0.0] * 32] * 64, "out"])
def test_an_output_that_is_no_array_is_a_type_error(fn, out):
    with pytest.raises(TypeError, match=f"tilecast.{fn}: out must be an array .*, got {type(out).__name__}$"):
        getattr(tilecast, fn)(bf16(64, 128), bf16(32, 128), out=out)


@pytest.mark.parametrize("device_type, where", [(dl.CPU, "cpu"), (dl.CUDA_HOST, "pinned host")])
def test_host_tensors_are_refused_before_cuda_is_touched(device_type, where):
    a = bf16(64, 128, device_type=device_type)
    with pytest.raises(ValueError, match=f"a is not on a CUDA device \\(it is in {where}"):
        tilecast.gemm_nt(a, bf16(32, 128, device_type=device_type))
    with pytest.raises(ValueError, match="tilecast.prepare: a is not on a CUDA device"):
        tilecast.prepare(bf16(64, 128, device_type=device_type), bf16(32, 128, device_type=device_type))


@pytest.mark.parametrize(
    "kw, error, message",
    [
        (dict(bias=np.zeros(32, np.int32)), TypeError, "bias must be bfloat16 or float32, got int32"),
        (dict(bias=np.zeros(32, np.float64)), TypeError, "bias must be bfloat16 or float32, got float64"),
        (dict(bias=np.zeros((1, 32), np.float32)), ValueError, r"bias must be 1-D .*, got 2-D with shape \(1, 32\)"),
        (dict(bias=np.zeros(64, np.float32)[::2]), ValueError, "bias must be contiguous"),
        (dict(bias=np.zeros(31, np.float32)), ValueError, "bias has 31 elements, expected n = 32"),
        (dict(beta=0.0), ValueError, "beta is 0 but there is no c: beta scales c"),
        (dict(beta=2.5, alpha=3.0), ValueError, r"beta is 2.5 but there is no c: beta scales c \(give c, or leave"),
    ],
)
@pytest.mark.parametrize("fn", ["gemm_nt", "prepare"])
def test_epilogue_arguments_are_checked(fn, kw, error, message):
    with pytest.raises(error, match=f"tilecast.{fn}: {message}"):
        getattr(tilecast, fn)(bf16(64, 128), bf16(32, 128), **kw)


@pytest.mark.parametrize(
    "kw",
    [
        dict(bias=np.zeros(32, np.float32)),  # fp32 bias, bf16 out
        dict(bias=bf16(32), out_dtype="float32"),  # bf16 bias, fp32 out
        dict(c=bf16(64, 32), alpha=0.5, beta=0.0),  # beta 0: c is not read, but still checked
        dict(c=dl.tensor((64, 32), "float32"), beta=-1.5, bias=bf16(32)),
        dict(bias=bf16(1, strides=(7,)), b=bf16(1, 128)),  # a length-1 vector's stride is never used
    ],
)
def test_good_epilogues_reach_the_device_check(kw):
    b = kw.pop("b", None) or bf16(32, 128)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(bf16(64, 128), b, **kw)


def test_epilogue_shape_checks_run_before_the_bias_length():
    with pytest.raises(ValueError, match=r"c is \[m=64, n=31\], expected \[m=64, n=32\]"):
        tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), c=bf16(64, 31), bias=np.zeros(31, np.float32))


def test_bias_must_be_on_the_operands_device():
    cuda = dict(device_type=dl.CUDA)
    with pytest.raises(ValueError, match=r"tilecast.gemm_nt: bias is not on a CUDA device \(it is in cpu memory\)"):
        tilecast.gemm_nt(bf16(64, 128, **cuda), bf16(32, 128, **cuda), out=bf16(64, 32, **cuda),
                         bias=np.zeros(32, np.float32))
    with pytest.raises(ValueError, match="bias is on cuda:1 but a is on cuda:0"):
        tilecast.gemm_nt(bf16(64, 128, **cuda), bf16(32, 128, **cuda), out=bf16(64, 32, **cuda),
                         bias=dl.tensor((32,), "float32", device_type=dl.CUDA, device_id=1))


EMPTY = [  # (a, b, out) shapes with m = 0, n = 0 or batch = 0
    ((0, 128), (32, 128), (0, 32)),
    ((64, 128), (0, 128), (64, 0)),
    ((0, 64, 128), (0, 32, 128), (0, 64, 32)),
]


@pytest.mark.parametrize("a, b, out", EMPTY)
@pytest.mark.parametrize("fn", ["gemm_nt", "prepare"])
def test_an_empty_problem_still_gets_its_config_checked(fn, a, b, out):
    # "CUDA" capsules of host memory: an empty call returns before anything touches CUDA.
    cuda = dict(device_type=dl.CUDA)
    call = getattr(tilecast, fn)
    with pytest.raises(tilecast.Error, match=r"^tilecast: config: block_m 96 is not 64, 128 or 192"):
        call(bf16(*a, **cuda), bf16(*b, **cuda), out=bf16(*out, **cuda), config="block_m=96")
    empty = bf16(*out, **cuda)
    result = call(bf16(*a, **cuda), bf16(*b, **cuda), out=empty, config="block_m=128")
    assert result is (empty if fn == "gemm_nt" else None)


@pytest.mark.parametrize("a, b, out", EMPTY + [((64, 0), (32, 0), (64, 32))])  # and k = 0
def test_empty_arrays_reach_the_device_check(a, b, out):
    # NumPy reports 0 for every stride of an empty array (the capsules here too); an empty view's
    # strides address nothing.
    def like_numpy(shape):
        return bf16(*shape, strides=(0,) * len(shape) if 0 in shape else None)

    zeros = np.zeros(out, np.float32)
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.gemm_nt(like_numpy(a), like_numpy(b), out=zeros, c=zeros)


def test_a_refused_config_allocates_nothing():
    # Capsules have no framework to allocate with: the config's error comes first.
    cuda = dict(device_type=dl.CUDA)
    with pytest.raises(tilecast.Error, match="config: cluster 3x1 is not one of"):
        tilecast.gemm_nt(bf16(64, 128, **cuda), bf16(32, 128, **cuda), config="cluster=3x1")
    with pytest.raises(TypeError, match="cannot allocate the output for a PyCapsule"):
        tilecast.gemm_nt(bf16(64, 128, **cuda), bf16(32, 128, **cuda), config="cluster=2x1")


def test_numpy_arrays_are_not_cuda_tensors():
    a = np.zeros((64, 128), np.float32)
    with pytest.raises(TypeError, match="bfloat16"):  # NumPy has no bfloat16: the dtype check fires first
        tilecast.gemm_nt(a, a)


def test_config_forms():
    text = "block=128x256x64,stages=4,cluster=2x1,multicast_a=0"
    c = tilecast.parse_config(text)
    assert (c.block_m, c.block_n, c.block_k, c.stages, c.cluster_m, c.cluster_n, c.multicast_a) == (
        128, 256, 64, 4, 2, 1, 0)
    assert tilecast.GemmConfig(text) == c
    assert tilecast.parse_config(tilecast.format_config(c)) == c
    assert tilecast.GemmConfig(block_m=128, block_n=256, block_k=64, stages=4, cluster_m=2, cluster_n=1,
                               multicast_a=0) == c
    assert eval("tilecast." + repr(c).partition(".")[2]) == c
    assert str(tilecast.GemmConfig()) == ""
    fused = tilecast.GemmConfig(k_splits=3, fused_reduce=1)
    assert (fused.k_splits, fused.fused_reduce) == (3, 1)
    assert str(fused) == "k_splits=3,fused_reduce=1"
    in_cluster = tilecast.GemmConfig(k_splits=8, cluster_reduce=1)
    assert (in_cluster.k_splits, in_cluster.cluster_reduce) == (8, 1)
    assert str(in_cluster) == "k_splits=8,cluster_reduce=1"
    assert tilecast.GemmConfig("k_splits=8,cluster_reduce=1") == in_cluster
    split = tilecast.GemmConfig(block_m=192, block_n=176, split_columns=1)
    assert split.split_columns == 1
    assert tilecast.GemmConfig(str(split)) == split
    turns = tilecast.GemmConfig(block_m=128, block_n=128, pingpong=1)
    assert turns.pingpong == 1 and str(turns) == "block_m=128,block_n=128,pingpong=1"
    assert tilecast.GemmConfig(str(turns)) == turns
    serpentine = tilecast.GemmConfig(k_serpentine=1)
    assert serpentine.k_serpentine == 1 and str(serpentine) == "k_serpentine=1"
    assert tilecast.GemmConfig(str(serpentine)) == serpentine
    assert tilecast.parse_config(str(fused)) == fused
    with pytest.raises(TypeError):
        tilecast.GemmConfig(block=128)  # not a field
    with pytest.raises(tilecast.Error, match="frobnicate"):
        tilecast.parse_config("frobnicate=1")
    with pytest.raises(TypeError, match="config must be a str, a dict or a tilecast.GemmConfig"):
        tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), config=42)
    # A config in any form reaches the device check (it is parsed first).
    for config in (text, dict(block_m=128, cluster_m=2), c):
        with pytest.raises(ValueError, match="not on a CUDA device"):
            tilecast.gemm_nt(bf16(64, 128), bf16(32, 128), config=config)


def test_config_equality_with_other_types():
    # Against anything but a GemmConfig, == is False and != True, not a TypeError.
    config = tilecast.GemmConfig()
    assert (config == None) is False and (config != None) is True  # noqa: E711
    assert config != "" and config != 0 and config not in [None, "block_m=128"]
    assert config == tilecast.GemmConfig() and not (config != tilecast.GemmConfig())
    assert config != tilecast.GemmConfig(block_m=128)


def test_plan_prints_the_chosen_config():
    text = tilecast.plan(4096, 576, 7168, device="h200", top=3)
    assert text.startswith("problem 4096x576x7168 batch 1, out bf16")
    assert "chosen: " in text and "(model)" in text
    assert "+C" in tilecast.plan(256, 256, 256, with_c=True, out_dtype="float32", device="h200")
    assert "cluster 1x1" in tilecast.plan(4096, 4096, 4096, config="cluster=1x1", device="h200")
    with pytest.raises(ValueError, match="1 <= m, n, k, batch"):
        tilecast.plan(0, 1, 1, device="h200")
    with pytest.raises(tilecast.Error, match="device must be"):
        tilecast.plan(1, 1, 1, device="h100")
    assert "+C +bias bf16" in tilecast.plan(256, 256, 256, with_c=True, bias="bfloat16", device="h200")


def test_plan_of_the_grouped_gemms():
    text = tilecast.plan(8 * 4096, 4096, 7168, kind="m_grouped_bf16_gemm_nt_contiguous", num_groups=8,
                         layout="offsets", device="h200", top=2)
    assert text.startswith("problem m_grouped_bf16_gemm_nt_contiguous 32768x4096x7168 num_groups 8 layout offsets, "
                           "out bf16")
    assert "chosen: " in text
    text = tilecast.plan(1024, 4096, 7168, kind="m_grouped_bf16_gemm_nt_masked", num_groups=32, expected_m=32,
                         device="h200", top=0)
    assert "num_groups 32 expected_m 32" in text and "chosen: " in text
    text = tilecast.plan(4096, 7168, 16384, kind="k_grouped_bf16_gemm_nt_contiguous", num_groups=4, accumulate=True,
                         out_dtype="float32", device="h200", top=0)
    assert "num_groups 4, out fp32 accumulate" in text
    with pytest.raises(ValueError, match="m_grouped_bf16_gemm_nt_masked needs expected_m"):
        tilecast.plan(64, 64, 64, kind="m_grouped_bf16_gemm_nt_masked", num_groups=2, device="h200")
    with pytest.raises(ValueError, match=r"expected_m 65 is not in 1..max_m = 64"):
        tilecast.plan(64, 64, 64, kind="m_grouped_bf16_gemm_nt_masked", num_groups=2, expected_m=65, device="h200")
    with pytest.raises(ValueError, match="takes no batch, with_c or bias"):
        tilecast.plan(64, 64, 64, kind="k_grouped_bf16_gemm_nt_contiguous", num_groups=2, bias="float32")
    with pytest.raises(ValueError, match="1 <= m, n, k, num_groups < 2"):
        tilecast.plan(64, 64, 64, kind="k_grouped_bf16_gemm_nt_contiguous", num_groups=0, device="h200")


def test_warm_lists_the_grouped_kernels():
    problems = [
        dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=4096, n=512, k=1024, num_groups=8, layout="offsets"),
        dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=4096, n=512, k=1024, num_groups=8),
        dict(kind="m_grouped_bf16_gemm_nt_masked", m=256, n=4096, k=7168, num_groups=8, expected_m=32),
        dict(kind="k_grouped_bf16_gemm_nt_contiguous", m=4096, n=7168, k=8192, num_groups=4, accumulate=True,
             out_dtype="float32"),
    ]
    names = [k["name"] for k in tilecast.warm(problems, device="h200", dry_run=True)]
    assert len(names) == 4, names
    assert names[0].endswith("m-grouped offsets static") and names[1].endswith("m-grouped row-index static")
    assert "masked" in names[2]
    assert " fp32 +C k-grouped" in names[3]  # accumulating reads D as C


def test_warm_lists_the_split_k_reduce_kernel():
    # A split plan summed by the reduce kernel launches two kernels: warm compiles both.
    split = dict(m=256, n=1024, k=16384, config="k_splits=8,fused_reduce=0")
    names = [k["name"] for k in tilecast.warm([split], device="h200", dry_run=True)]
    assert names[0].endswith("split-K") and names[1] == "split-K reduce bf16", names
    fused = dict(split, config="k_splits=8,fused_reduce=1")
    assert not any("reduce" in k["name"] for k in tilecast.warm([fused], device="h200", dry_run=True))


def _warm_cli(*args, cache):
    cmd = [sys.executable, "-m", "tilecast.warm", "--device", "h200", "--threads", "1", "--cache-dir", cache, *args]
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_warm_compiles_into_the_cache_folder_then_hits(tmp_path):
    # NVRTC from the installed module: the device headers are embedded, CCCL comes from the toolkit.
    first = _warm_cli("--shape", "256,256,256", "--no-progress", cache=str(tmp_path))
    assert first.returncode == 0, first.stderr
    assert "1 kernels: 1 compiled" in first.stdout
    assert list((tmp_path / "v1").glob("*.tcjit"))
    second = _warm_cli("--shape", "256,256,256", "--plan", cache=str(tmp_path))
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("problem 256x256x256")
    assert "cached" in second.stdout and "1 kernels: 0 compiled" in second.stdout
    assert "[" in second.stderr and "1/1 kernels" in second.stderr  # the progress bar


PROGRESS_ON_A_CLOSED_STDERR = """
import io, sys, tilecast
closed = io.StringIO()
closed.close()
sys.stderr = closed  # the progress bar's writes raise ValueError
try:
    tilecast.warm([(256, 256, 256)], device="h200", threads=1, cache_dir=sys.argv[1])
except ValueError as e:
    print("raised:", e)
"""


def test_an_exception_from_the_progress_callback_is_raised_after_warm(tmp_path):
    # The callback runs on warm's compile threads: its exception must come back as the call's, not
    # end the process (std::terminate).
    run = subprocess.run([sys.executable, "-c", PROGRESS_ON_A_CLOSED_STDERR, str(tmp_path)], capture_output=True,
                         text=True, env=dict(os.environ, CUDA_CACHE_DISABLE="1"), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == "raised: I/O operation on closed file\n", run.stdout + run.stderr
    assert list((tmp_path / "v1").glob("*.tcjit")), "the kernel was not compiled"


def test_warm_in_processes_fills_the_same_cache(tmp_path):
    shapes = ("--shape", "256,256,256", "--shape", "4096,576,7168", "--no-progress")
    listed = _warm_cli(*shapes, "--dry-run", cache=str(tmp_path))
    assert listed.returncode == 0 and len(listed.stdout.split("\n")) == 3, listed.stdout  # two names
    first = _warm_cli(*shapes, "--processes", "2", cache=str(tmp_path))
    assert first.returncode == 0, first.stderr
    assert "2 kernels: 2 compiled" in first.stdout
    again = _warm_cli(*shapes, cache=str(tmp_path))  # threads now: every kernel is a disk hit
    assert "2 kernels: 0 compiled" in again.stdout, again.stdout


def test_warm_cli_refuses_bad_shapes(tmp_path):
    bad = _warm_cli("--shape", "1,2", cache=str(tmp_path))
    assert bad.returncode == 2 and "expected M,N,K[,BATCH]" in bad.stderr
    bad = _warm_cli("--kind", "m_grouped_bf16_gemm_nt_masked", "--shape", "64,64,64", cache=str(tmp_path))
    assert bad.returncode == 2 and "wants M,N,K,NUM_GROUPS" in bad.stderr


def test_warm_cli_compiles_a_grouped_kernel(tmp_path):
    run = _warm_cli("--kind", "k_grouped_bf16_gemm_nt_contiguous", "--shape", "128,128,1000,3", "--accumulate",
                    "--out", "fp32", "--plan", "--no-progress", cache=str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("problem k_grouped_bf16_gemm_nt_contiguous 128x128x1000 num_groups 3, out fp32 "
                                 "accumulate"), run.stdout
    assert "fp32 +C k-grouped" in run.stdout and "1 kernels: 1 compiled" in run.stdout
    assert list((tmp_path / "v1").glob("*.tcjit"))


def test_warm_problem_forms_are_checked():
    with pytest.raises(ValueError, match="unknown problem keys"):
        tilecast.warm([dict(m=1, n=1, k=1, bogus=2)], device="h200")
    with pytest.raises(ValueError, match=r"a problem is \(m, n, k\)"):
        tilecast.warm([(1, 2)], device="h200")
    grouped = dict(m=64, n=64, k=64, num_groups=2)
    bad = [
        (dict(kind="m_grouped_gemm", **grouped), "kind must be one of gemm_nt, m_grouped_bf16_gemm_nt_contiguous"),
        (dict(kind="m_grouped_bf16_gemm_nt_contiguous", m=64, n=64, k=64), "needs num_groups"),
        (dict(kind="m_grouped_bf16_gemm_nt_masked", **grouped), "needs expected_m"),
        (dict(kind="m_grouped_bf16_gemm_nt_contiguous", bias="float32", **grouped), "takes no bias"),
        (dict(kind="m_grouped_bf16_gemm_nt_masked", expected_m=8, accumulate=True, **grouped), "takes no accumulate"),
        (dict(kind="k_grouped_bf16_gemm_nt_contiguous", batch=2, **grouped), "takes no batch"),
        (dict(m=64, n=64, k=64, num_groups=2), "gemm_nt takes no num_groups"),
        (dict(kind="m_grouped_bf16_gemm_nt_contiguous", layout="psum", **grouped), "layout must be 'row_index' or"),
    ]
    for problem, message in bad:
        with pytest.raises(ValueError, match=message):
            tilecast.warm([problem], device="h200", dry_run=True)
    with pytest.raises(TypeError, match="out_dtype must be bfloat16 or float32"):
        tilecast.warm([dict(m=64, n=64, k=64, bias="int8")], device="h200", dry_run=True)


def test_cache_folder_cannot_change_once_the_jit_is_up(tmp_path):
    current = tilecast.cache_dir()  # starts this process's JIT
    other = tmp_path / "elsewhere"
    if current and os.path.abspath(current) == str(other):
        pytest.skip("the JIT already uses this folder")
    with pytest.raises(tilecast.Error, match="already uses the cache folder"):
        tilecast.warm([(128, 128, 128)], cache_dir=str(other), device="h200")
