"""The grouped GEMMs' argument checks on host arrays, before anything touches CUDA: NumPy arrays
and hand-made bfloat16 DLPack capsules (dlpack_capsule.py). Every bad argument raises the
exception a torch user expects (TypeError for a dtype, ValueError for a rank, shape, stride, scalar
or device) naming the function and the argument; good arguments reach the device check. Needs no
GPU and no PyTorch (CI runs it)."""

import os
import sys

import numpy as np
import pytest

import tilecast

sys.path.insert(0, os.path.dirname(__file__))
import dlpack_capsule as dl  # noqa: E402

CONTIGUOUS = "m_grouped_bf16_gemm_nt_contiguous"
MASKED = "m_grouped_bf16_gemm_nt_masked"
KGROUPED = "k_grouped_bf16_gemm_nt_contiguous"
CUDA = dict(device_type=dl.CUDA)


def bf16(*shape, **kw):
    return dl.tensor(shape, "bfloat16", **kw)


def i32(n):
    return np.zeros(n, np.int32)


def both(name):
    """The call and its prepare_* twin (which takes no stream). The arguments of each case come from
    a lambda: a capsule can be consumed only once."""
    return [getattr(tilecast, name), getattr(tilecast, "prepare_" + name)]


def where(fn):
    return "tilecast." + fn.__name__ + ": "


# m-grouped contiguous: a [rows=64, k=128], b [3 experts, n=32, k=128], d [64, 32].

@pytest.mark.parametrize("fn", both(CONTIGUOUS))
@pytest.mark.parametrize(
    "args, kw, error, message",
    [
        (lambda: (bf16(64, 128), bf16(32, 128), None, i32(64)), {}, ValueError,
         r"b must be 3-D \[num_groups, n, k\] \(one matrix per expert\), got 2-D with shape \(32, 128\)"),
        (lambda: (bf16(2, 64, 128), bf16(3, 32, 128), None, i32(64)), {}, ValueError, r"a must be 2-D \[rows, k\]"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), bf16(1, 64, 32), i32(64)), {}, ValueError, r"d must be 2-D \[rows, n\]"),
        (lambda: (np.zeros((64, 128), np.float32), bf16(3, 32, 128), None, i32(64)), {}, TypeError,
         "a must be bfloat16, got float32"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), np.zeros((64, 32), np.float16), i32(64)), {}, TypeError,
         "d must be bfloat16 or float32, got float16"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, np.zeros(64, np.int64)), {}, TypeError,
         "grouped_layout must be int32, got int64"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, np.zeros((64, 1), np.int32)), {}, ValueError,
         r"grouped_layout must be 1-D \(int32 entries\), got 2-D"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, np.zeros(128, np.int32)[::2]), {}, ValueError,
         "grouped_layout must be contiguous"),
        (lambda: (bf16(64, 128), bf16(3, 32, 96), None, i32(64)), {}, ValueError,
         r"a is \[rows=64, k=128\] but b is \[num_groups=3, n=32, k=96\]: they must agree on k"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), bf16(64, 31), i32(64)), {}, ValueError,
         r"d is \(64, 31\), expected \(rows of a, n\) = \(64, 32\)"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), bf16(63, 32), i32(64)), {}, ValueError, r"d is \(63, 32\)"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(63)), {}, ValueError,
         r"grouped_layout has 63 entries, expected 64 \(layout='row_index': one per row of a\)"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(3)), dict(layout="offsets"), ValueError,
         r"grouped_layout has 3 entries, expected 4 \(layout='offsets': num_groups \+ 1"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(64)), dict(layout="offsets"), ValueError,
         "grouped_layout has 64 entries, expected 4"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(64)), dict(layout="psum"), ValueError,
         "layout must be 'row_index' .* or 'offsets' .*, got 'psum'"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), bf16(64, 32), i32(64)), dict(out_dtype="float32"), TypeError,
         "d is bfloat16 but out_dtype is float32"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(64)), dict(out_dtype="float16"), TypeError,
         "out_dtype must be bfloat16 or float32"),
    ],
)
def test_contiguous_bad_arguments(fn, args, kw, error, message):
    with pytest.raises(error, match=message) as raised:
        fn(*args(), **kw)
    if error is not TypeError or "out_dtype must" not in message:
        assert str(raised.value).startswith(where(fn)), str(raised.value)


@pytest.mark.parametrize("fn", both(CONTIGUOUS))
@pytest.mark.parametrize(
    "args, kw",
    [
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(64)), {}),  # row index: one entry per row
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(4)), dict(layout="offsets")),  # num_groups + 1
        (lambda: (bf16(64, 128), bf16(3, 32, 128), np.zeros((64, 32), np.float32), i32(4)), dict(layout="offsets")),
        (lambda: (bf16(64, 128, strides=(136, 1)), bf16(3, 32, 128, strides=(5000, 136, 1)), None, i32(64)), {}),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(64)), dict(config="cluster=2x1")),
    ],
)
def test_contiguous_good_arguments_reach_the_device_check(fn, args, kw):
    with pytest.raises(ValueError, match=where(fn) + "a is not on a CUDA device"):
        fn(*args(), **kw)


# m-grouped masked: a [3 experts, max_m=64, k=128], b [3, n=32, k=128], d [3, 64, 32].

@pytest.mark.parametrize("fn", both(MASKED))
@pytest.mark.parametrize(
    "args, error, message",
    [
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(3), 8), ValueError,
         r"a must be 3-D \[num_groups, max_m, k\] \(one row buffer per expert\), got 2-D"),
        (lambda: (bf16(3, 64, 128), bf16(32, 128), None, i32(3), 8), ValueError, r"b must be 3-D \[num_groups, n, k\]"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), bf16(64, 32), i32(3), 8), ValueError,
         r"d must be 3-D \[num_groups, max_m, n\]"),
        (lambda: (bf16(3, 64, 128), np.zeros((3, 32, 128), np.float32), None, i32(3), 8), TypeError,
         "b must be bfloat16, got float32"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, np.zeros(3, np.uint32), 8), TypeError,
         "masked_m must be int32, got uint32"),
        (lambda: (bf16(3, 64, 128), bf16(4, 32, 128), None, i32(3), 8), ValueError,
         r"a is \[num_groups=3, max_m=64, k=128\] but b is \[num_groups=4, n=32, k=128\]: they must agree on "
         "num_groups and k"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 64), None, i32(3), 8), ValueError, "must agree on num_groups and k"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), bf16(3, 63, 32), i32(3), 8), ValueError,
         r"d is \(3, 63, 32\), expected \(num_groups, max_m, n\) = \(3, 64, 32\)"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), bf16(2, 64, 32), i32(3), 8), ValueError, r"d is \(2, 64, 32\)"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(4), 8), ValueError,
         r"masked_m has 4 entries, expected 3 \(one row count per expert: a.shape\[0\]\)"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), 0), ValueError,
         r"expected_m is 0, not in 1..max_m = 64"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), 65), ValueError,
         r"expected_m is 65, not in 1..max_m = 64"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), 8.0), TypeError, "expected_m must be an int, got float"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), np.array([8], np.int32)), TypeError,
         "expected_m must be an int, got ndarray"),
        (lambda: (bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), None), TypeError, "expected_m must be an int"),
    ],
)
def test_masked_bad_arguments(fn, args, error, message):
    with pytest.raises(error, match=message) as raised:
        fn(*args())
    assert str(raised.value).startswith(where(fn)), str(raised.value)


@pytest.mark.parametrize("fn", both(MASKED))
@pytest.mark.parametrize("expected_m", [1, 64, np.int64(20)])
def test_masked_good_arguments_reach_the_device_check(fn, expected_m):
    with pytest.raises(ValueError, match=where(fn) + "a is not on a CUDA device"):
        fn(bf16(3, 64, 128), bf16(3, 32, 128), None, i32(3), expected_m, out_dtype="float32")


# k-grouped: a [m=64, k=128], b [n=32, k=128], d [3 groups, 64, 32].

@pytest.mark.parametrize("fn", both(KGROUPED))
@pytest.mark.parametrize(
    "args, kw, error, message",
    [
        (lambda: (bf16(2, 64, 128), bf16(32, 128), None, i32(3)), {}, ValueError,
         r"a must be 2-D \[m, k\] \(the groups' columns side by side\), got 3-D"),
        (lambda: (bf16(64, 128), bf16(3, 32, 128), None, i32(3)), {}, ValueError, r"b must be 2-D \[n, k\]"),
        (lambda: (bf16(64, 128), bf16(32, 128), bf16(64, 32), i32(3)), {}, ValueError,
         r"d must be 3-D \[num_groups, m, n\]"),
        (lambda: (bf16(64, 128), bf16(32, 128), None, np.zeros(3, np.float32)), {}, TypeError,
         "k_sizes must be int32, got float32"),
        (lambda: (bf16(64, 128), bf16(32, 128), None, np.zeros((3, 1), np.int32)), {}, ValueError, "k_sizes must be 1-D"),
        (lambda: (bf16(64, 128), bf16(32, 100), None, i32(3)), {}, ValueError,
         r"a is \[m=64, k=128\] but b is \[n=32, k=100\]: they must agree on k"),
        (lambda: (bf16(64, 128), bf16(32, 128), bf16(3, 64, 33), i32(3)), {}, ValueError,
         r"d is \(3, 64, 33\), expected \(num_groups, m, n\) = \(3, 64, 32\)"),
        (lambda: (bf16(64, 128), bf16(32, 128), bf16(3, 64, 32), i32(4)), {}, ValueError,
         r"k_sizes has 4 entries, expected 3 \(one k size per group: d.shape\[0\]\)"),
        (lambda: (bf16(64, 128), bf16(32, 128), np.zeros((3, 64, 32), np.float32), i32(3)),
         dict(c=np.zeros((3, 64, 32), np.float32)), ValueError,
         r"c must be d itself \(D\[g\] \+= A_g @ B_g\^T accumulates in place\) or None; copy c into d first"),
        (lambda: (bf16(64, 128), bf16(32, 128), None, i32(3)), dict(c=np.zeros((3, 64, 32), np.float32)), ValueError,
         "c must be d itself .* or None: pass d"),
        (lambda: (bf16(64, 128), bf16(32, 128), None, i32(3)), dict(c=np.zeros((64, 32), np.float32)), ValueError,
         r"c must be 3-D \[num_groups, m, n\], d itself"),
        (lambda: (bf16(64, 128), bf16(32, 128), np.zeros((3, 64, 32), np.float32), i32(3)), dict(out_dtype="bfloat16"),
         TypeError, "d is float32 but out_dtype is bfloat16"),
    ],
)
def test_kgrouped_bad_arguments(fn, args, kw, error, message):
    with pytest.raises(error, match=message) as raised:
        fn(*args(), **kw)
    assert str(raised.value).startswith(where(fn)), str(raised.value)


def test_kgrouped_c_may_be_d_itself():
    d = np.zeros((3, 64, 32), np.float32)
    for fn in both(KGROUPED):
        with pytest.raises(ValueError, match=where(fn) + "a is not on a CUDA device"):
            fn(bf16(64, 128), bf16(32, 128), d, i32(3), c=d)
    # A view of the same memory with the same shape and strides is d itself too.
    with pytest.raises(ValueError, match="a is not on a CUDA device"):
        tilecast.k_grouped_bf16_gemm_nt_contiguous(bf16(64, 128), bf16(32, 128), d, i32(3), c=d[:])
    with pytest.raises(ValueError, match="c must be d itself"):  # the same buffer, other columns
        tilecast.k_grouped_bf16_gemm_nt_contiguous(bf16(64, 128), bf16(16, 128), d[:, :, :16], i32(3),
                                                   c=d[:, :, 16:])


@pytest.mark.parametrize("fn", both(KGROUPED))
def test_kgrouped_good_arguments_reach_the_device_check(fn):
    # d is allocated as [len(k_sizes), m, n]; any k at least the sizes' sum (unknown here) passes.
    with pytest.raises(ValueError, match=where(fn) + "a is not on a CUDA device"):
        fn(bf16(64, 100), bf16(32, 100), None, i32(7), out_dtype="float32")


# Devices: every operand and group array on one CUDA device. The "CUDA" capsules point at host
# memory, but each call stops at the device check, before anything reads them.

GROUP_CALLS = [
    (CONTIGUOUS, "grouped_layout", lambda g: (bf16(64, 128, **CUDA), bf16(3, 32, 128, **CUDA), bf16(64, 32, **CUDA), g(64))),
    (MASKED, "masked_m", lambda g: (bf16(3, 64, 128, **CUDA), bf16(3, 32, 128, **CUDA), bf16(3, 64, 32, **CUDA), g(3), 8)),
    (KGROUPED, "k_sizes", lambda g: (bf16(64, 128, **CUDA), bf16(32, 128, **CUDA), bf16(3, 64, 32, **CUDA), g(3))),
]


@pytest.mark.parametrize("name, array, make", GROUP_CALLS)
def test_group_arrays_must_be_on_the_operands_device(name, array, make):
    for fn in both(name):
        with pytest.raises(ValueError, match=where(fn) + array + r" is not on a CUDA device \(it is in cpu memory\)"):
            fn(*make(i32))
        on_gpu1 = lambda n: dl.tensor((n,), "int32", device_type=dl.CUDA, device_id=1)  # noqa: E731
        with pytest.raises(ValueError, match=where(fn) + array + " is on cuda:1 but a is on cuda:0"):
            fn(*make(on_gpu1))
        pinned = lambda n: dl.tensor((n,), "int32", device_type=dl.CUDA_HOST)  # noqa: E731
        with pytest.raises(ValueError, match=array + r" is not on a CUDA device \(it is in pinned host memory\)"):
            fn(*make(pinned))


@pytest.mark.parametrize("name, array, make", GROUP_CALLS)
def test_an_output_on_another_device_is_refused(name, array, make):
    args = list(make(lambda n: dl.tensor((n,), "int32", **CUDA)))
    shape = {CONTIGUOUS: (64, 32), MASKED: (3, 64, 32), KGROUPED: (3, 64, 32)}[name]
    args[2] = bf16(*shape, device_type=dl.CUDA, device_id=1)
    with pytest.raises(ValueError, match=where(getattr(tilecast, name)) + "d is on cuda:1 but a is on cuda:0"):
        getattr(tilecast, name)(*args)


@pytest.mark.parametrize("name, array, make", GROUP_CALLS)
def test_an_output_is_allocated_only_after_every_check(name, array, make):
    # Capsules have no framework to allocate with: with every check passed, the allocator's error.
    args = list(make(lambda n: dl.tensor((n,), "int32", **CUDA)))
    args[2] = None
    with pytest.raises(TypeError, match="cannot allocate the output for a PyCapsule: pass it"):
        getattr(tilecast, name)(*args)


@pytest.mark.parametrize("name, array, make", GROUP_CALLS)
def test_what_passes_every_python_check_reaches_the_cpp_api(name, array, make):
    # Host memory labelled CUDA passes the Python checks. The C++ side then raises tilecast.Error
    # with its own message: on a machine without a GPU it cannot make the device current; with one,
    # the C++ API's validation finds the operands are not in device memory (nothing is launched).
    args = make(lambda n: dl.tensor((n,), "int32", **CUDA))
    with pytest.raises(tilecast.Error, match=r"^tilecast: (cudaSetDevice\(0\) failed|.*A is not in device memory)"):
        getattr(tilecast, name)(*args)


@pytest.mark.parametrize("name, array, make", GROUP_CALLS)
def test_an_output_that_is_no_array_is_a_type_error(name, array, make):
    for fn in both(name):
        args = list(make(i32))
        args[2] = object()
        with pytest.raises(TypeError, match=where(fn) + "d must be an array .*, got object$"):
            fn(*args)


CUDA_I32 = lambda n: dl.tensor((n,), "int32", **CUDA)  # noqa: E731

EMPTY_CALLS = [  # no rows, no columns, no expert or no group; "CUDA" capsules of host memory
    (CONTIGUOUS, lambda: (bf16(0, 128, **CUDA), bf16(3, 32, 128, **CUDA), bf16(0, 32, **CUDA), CUDA_I32(4)),
     dict(layout="offsets")),
    (CONTIGUOUS, lambda: (bf16(64, 128, **CUDA), bf16(3, 0, 128, **CUDA), bf16(64, 0, **CUDA), CUDA_I32(64)), {}),
    (MASKED, lambda: (bf16(3, 0, 128, **CUDA), bf16(3, 32, 128, **CUDA), bf16(3, 0, 32, **CUDA), CUDA_I32(3), 1), {}),
    (MASKED, lambda: (bf16(0, 64, 128, **CUDA), bf16(0, 32, 128, **CUDA), bf16(0, 64, 32, **CUDA), CUDA_I32(0), 8),
     {}),
    (KGROUPED, lambda: (bf16(64, 128, **CUDA), bf16(32, 128, **CUDA), bf16(0, 64, 32, **CUDA), CUDA_I32(0)), {}),
]


@pytest.mark.parametrize("name, args, kw", EMPTY_CALLS)
def test_an_empty_grouped_problem_still_gets_its_config_checked(name, args, kw):
    for fn in both(name):
        with pytest.raises(tilecast.Error, match=r"^tilecast: config: block_m 96 is not 64, 128 or 192"):
            fn(*args(), config="block_m=96", **kw)
        given = args()
        result = fn(*given, config="block_m=128", **kw)
        assert result is (given[2] if fn.__name__ == name else None)


def test_the_functions_are_exported_with_docstrings():
    for name in (CONTIGUOUS, MASKED, KGROUPED):
        for fn in both(name):
            assert fn.__name__ in tilecast.__all__
            assert fn.__doc__ and len(fn.__doc__) > 200
    assert tilecast.take_layout_fault_report.__doc__
