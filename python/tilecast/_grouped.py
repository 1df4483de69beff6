"""The grouped GEMMs for mixture-of-experts layers, under DeepGEMM's BF16 names and argument orders:
the framework side (stream, allocation, torch.compile); every check of the operands is the C++
module's (python/src/grouped_bindings.cpp), the rules are include/tilecast/grouped.hpp's.

The group arrays (grouped_layout, masked_m, k_sizes) are int32 tensors on the GPU that no call
reads on the host: no call synchronises, and a CUDA graph captured after the prepare_* call replays
with new sizes written into the same array. Sizes the problem cannot mean make the kernel trap
(the CUDA error surfaces at the next synchronisation, and the process's CUDA context is lost);
tilecast.take_layout_fault_report() then names the entry. A torch d is written as gemm_nt's out is
(its version bumped; one that requires grad only under torch.no_grad()).
"""

from __future__ import annotations

import operator
from typing import Any

from . import _tilecast as _C
from . import _torch_ops
from ._frameworks import Plumbing, dtype_name
from ._gemm import ConfigLike, as_config, finish, untracked, untracked_output, wait_for_jax, written


def _run(fn: Any, a: Any, d: Any, stream: Any, tensors: tuple, *args: Any) -> Any:
    """fn(*args, stream, alloc) with a's framework's stream and allocator; returns d, written (or
    the d fn allocated when it was None). args hold untracked_output(d) in d's place."""
    plumbing = Plumbing(a, stream)
    wait_for_jax(plumbing, *tensors)
    result = fn(*args, plumbing.stream, plumbing.alloc)
    finish(plumbing)
    if d is None:
        return result
    written(d)
    return d


def m_grouped_bf16_gemm_nt_contiguous(
    a: Any,
    b: Any,
    d: Any,
    grouped_layout: Any,
    layout: str = "row_index",
    out_dtype: Any = None,
    config: ConfigLike = None,
    stream: Any = None,
) -> Any:
    """m-grouped contiguous (MoE prefill, training forward): every expert's rows in one tall a.

    d[rows of expert g] = a[rows of expert g] @ b[g]^T, for every expert g.

    a: [rows, k] bfloat16, every expert's rows one after another (last dimension contiguous).
    b: [num_groups, n, k] bfloat16, one matrix per expert.
    d: [rows, n] bfloat16 or float32, or None to allocate it (out_dtype, default bfloat16) through
       a's framework. Rows no expert owns are never written: they keep what d held (garbage when
       allocated here). Returned.
    grouped_layout: int32 on a's GPU, never read on the host, as `layout` says:
       "row_index" (default; DeepGEMM's m_indices): rows entries, grouped_layout[r] the expert of
           row r or -1 for a padding row. Each expert's run of rows starts on a multiple of 128 and
           is padded with -1 up to the next multiple; padding rows of d are left alone.
       "offsets": num_groups + 1 entries, 0 = offsets[0] <= offsets[1] <= ... <= offsets[num_groups]
           <= rows; expert g owns rows offsets[g] .. offsets[g + 1] (any size, empty allowed, no
           padding). Rows from offsets[num_groups] on are left alone. Not DeepGEMM's psum layout:
           the leading 0 is part of the array (torch.cumsum of the counts with a 0 in front).
    config, stream: as tilecast.gemm_nt's.

    Same call as DeepGEMM's m_grouped_bf16_gemm_nt_contiguous(a, b, d, m_indices). Bad arguments
    raise TypeError or ValueError before CUDA is touched, tilecast.Error for what the C++ API
    refuses. For CUDA-graph capture, call prepare_m_grouped_bf16_gemm_nt_contiguous first.
    """
    if _torch_ops.tracing(a):
        return _torch_ops.m_grouped_contiguous(a, b, d, grouped_layout, layout, out_dtype, config, stream)
    a, b, grouped_layout = untracked("m_grouped_bf16_gemm_nt_contiguous", a, b, grouped_layout)
    target = untracked_output("m_grouped_bf16_gemm_nt_contiguous", "d", d)
    return _run(_C.m_grouped_bf16_gemm_nt_contiguous, a, d, stream, (a, b, target, grouped_layout),
                a, b, target, grouped_layout, layout, dtype_name(out_dtype), as_config(config))


def m_grouped_bf16_gemm_nt_masked(
    a: Any,
    b: Any,
    d: Any,
    masked_m: Any,
    expected_m: int,
    out_dtype: Any = None,
    config: ConfigLike = None,
    stream: Any = None,
) -> Any:
    """m-grouped masked (MoE decode, under CUDA graphs): one fixed-size row buffer per expert.

    d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]^T, for every expert g.

    a: [num_groups, max_m, k] bfloat16.
    b: [num_groups, n, k] bfloat16.
    d: [num_groups, max_m, n] bfloat16 or float32, or None to allocate it (out_dtype). Rows
       masked_m[g] .. max_m of d[g] are never written. Returned.
    masked_m: num_groups int32 on a's GPU, never read on the host, 0 <= masked_m[g] <= max_m.
    expected_m: 1 <= expected_m <= max_m, the rows per expert the plan is made for; a call or a graph
       replay with other counts runs the same plan. A call with a new expected_m plans (and may
       compile) again.
    config, stream: as tilecast.gemm_nt's.

    Same call as DeepGEMM's m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m). For
    CUDA-graph capture (and replay with new counts in masked_m), call
    prepare_m_grouped_bf16_gemm_nt_masked first.
    """
    if _torch_ops.tracing(a):
        return _torch_ops.m_grouped_masked(a, b, d, masked_m, expected_m, out_dtype, config, stream)
    a, b, masked_m = untracked("m_grouped_bf16_gemm_nt_masked", a, b, masked_m)
    target = untracked_output("m_grouped_bf16_gemm_nt_masked", "d", d)
    return _run(_C.m_grouped_bf16_gemm_nt_masked, a, d, stream, (a, b, target, masked_m),
                a, b, target, masked_m, _int(expected_m, "m_grouped_bf16_gemm_nt_masked"), dtype_name(out_dtype),
                as_config(config))


def k_grouped_bf16_gemm_nt_contiguous(
    a: Any,
    b: Any,
    d: Any,
    k_sizes: Any,
    c: Any = None,
    out_dtype: Any = None,
    config: ConfigLike = None,
    stream: Any = None,
) -> Any:
    """k-grouped contiguous (MoE weight gradients): the groups side by side along k.

    d[g] = a[:, K_g] @ b[:, K_g]^T, or with c = d: d[g] += a[:, K_g] @ b[:, K_g]^T, where K_g are the
    k_sizes[g] columns after the groups before g.

    a: [m, k] bfloat16, b: [n, k] bfloat16 (k = the sum of the groups' sizes, or more: columns past
       the sum are not read).
    d: [num_groups, m, n] bfloat16 or float32, or None to allocate it (out_dtype; num_groups =
       len(k_sizes)). A group of size 0 gets d[g] = 0 (unchanged when accumulating). Returned.
    k_sizes: num_groups int32 on a's GPU, never read on the host, each >= 0 and a multiple of 8
       (each group starts on a 16-byte column, as TMA loads need; the kernel traps on others and
       take_layout_fault_report() names the entry), their sum <= k. No multiple of 64 needed: a
       group's last partial 64-column step is computed exactly.
    c: None, or d itself to accumulate (no other addend).
    config, stream: as tilecast.gemm_nt's.

    DeepGEMM's k-grouped BF16 call is the TN layout (a and b [k, m] and [k, n]) with a host list ks
    beside ks_tensor; this one is NT (k contiguous, as every tilecast operand) and needs only the
    device array. For CUDA-graph capture, call prepare_k_grouped_bf16_gemm_nt_contiguous first.
    """
    if _torch_ops.tracing(a):
        return _torch_ops.k_grouped(a, b, d, k_sizes, c, out_dtype, config, stream)
    a, b, k_sizes = untracked("k_grouped_bf16_gemm_nt_contiguous", a, b, k_sizes)
    target, c = _accumulated("k_grouped_bf16_gemm_nt_contiguous", d, c)
    return _run(_C.k_grouped_bf16_gemm_nt_contiguous, a, d, stream, (a, b, target, k_sizes),
                a, b, target, k_sizes, c, dtype_name(out_dtype), as_config(config))


def prepare_m_grouped_bf16_gemm_nt_contiguous(
    a: Any, b: Any, d: Any, grouped_layout: Any, layout: str = "row_index", out_dtype: Any = None,
    config: ConfigLike = None,
) -> None:
    """Plans, compiles and loads what m_grouped_bf16_gemm_nt_contiguous with these arguments needs,
    launching nothing (d may be None: a scratch output is allocated). After it the same call may be
    captured into a CUDA graph, and the graph replayed with a new layout in the same array."""
    a, b, grouped_layout = untracked("prepare_m_grouped_bf16_gemm_nt_contiguous", a, b, grouped_layout)
    d = untracked_output("prepare_m_grouped_bf16_gemm_nt_contiguous", "d", d)
    _C.prepare_m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, layout, dtype_name(out_dtype),
                                                 as_config(config), Plumbing(a, None).alloc)


def prepare_m_grouped_bf16_gemm_nt_masked(
    a: Any, b: Any, d: Any, masked_m: Any, expected_m: int, out_dtype: Any = None, config: ConfigLike = None
) -> None:
    """Plans, compiles and loads what m_grouped_bf16_gemm_nt_masked with these arguments needs,
    launching nothing. After it the same call may be captured into a CUDA graph, and the graph
    replayed with new counts written into masked_m."""
    a, b, masked_m = untracked("prepare_m_grouped_bf16_gemm_nt_masked", a, b, masked_m)
    d = untracked_output("prepare_m_grouped_bf16_gemm_nt_masked", "d", d)
    _C.prepare_m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, _int(expected_m, "prepare_m_grouped_bf16_gemm_nt_masked"),
                                             dtype_name(out_dtype), as_config(config), Plumbing(a, None).alloc)


def prepare_k_grouped_bf16_gemm_nt_contiguous(
    a: Any, b: Any, d: Any, k_sizes: Any, c: Any = None, out_dtype: Any = None, config: ConfigLike = None
) -> None:
    """Plans, compiles and loads what k_grouped_bf16_gemm_nt_contiguous with these arguments needs,
    launching nothing. After it the same call may be captured into a CUDA graph, and the graph
    replayed with new sizes written into k_sizes."""
    a, b, k_sizes = untracked("prepare_k_grouped_bf16_gemm_nt_contiguous", a, b, k_sizes)
    d, c = _accumulated("prepare_k_grouped_bf16_gemm_nt_contiguous", d, c)
    _C.prepare_k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c, dtype_name(out_dtype), as_config(config),
                                                 Plumbing(a, None).alloc)


def _accumulated(where: str, d: Any, c: Any) -> tuple:
    """untracked_output of k-grouped's d and of c, which the call writes too (it must be d itself)."""
    target = untracked_output(where, "d", d)
    return target, target if c is d and d is not None else untracked_output(where, "c", c)


def _int(x: Any, where: str) -> int:
    """expected_m as an int: a Python or NumPy integer, never a tensor (its contents would have to
    be read from the GPU, which these calls never do)."""
    if not hasattr(x, "__dlpack__") and not isinstance(x, bool):
        try:
            return operator.index(x)
        except TypeError:
            pass
    raise TypeError(f"tilecast.{where}: expected_m must be an int, got {type(x).__name__}")
