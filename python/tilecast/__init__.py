"""tilecast: Hopper (SM90) BF16 GEMM kernels with thread-block-cluster TMA multicast.

    import torch, tilecast
    a = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2112, 7168, device="cuda", dtype=torch.bfloat16)
    d = tilecast.gemm_nt(a, b)                  # d = a @ b.T, bf16, on the current stream
    bias = torch.randn(2112, device="cuda")     # fp32 or bf16, one value per column
    e = tilecast.gemm_nt(a, b, c=d, alpha=0.5, beta=2.0, bias=bias)   # e = 0.5 a @ b.T + 2 d + bias

MoE grouped GEMMs, under DeepGEMM's BF16 names (group arrays are int32 GPU tensors, never read on
the host): m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout, layout="row_index" or
"offsets"), m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m) and
k_grouped_bf16_gemm_nt_contiguous(a, b, d, k_sizes, c=None), each with a prepare_* call for
CUDA-graph capture; take_layout_fault_report() says which entry of a group array made a kernel trap.

Any DLPack GPU tensor works (PyTorch, CuPy, JAX); PyTorch is optional (`import tilecast` needs
none) and, when installed, the functions are also torch custom ops (torch.ops.tilecast.*), so
torch.compile traces them without graph breaks.

Kernels are compiled by NVRTC on the first call of each shape and cached on disk
(TILECAST_CACHE_DIR): tilecast.warm(...) or `python -m tilecast.warm` compiles them ahead of time,
tilecast.plan(...) prints the plan a shape gets, and tilecast.prepare(...) readies one call for
CUDA-graph capture.
"""

from ._tilecast import (
    Error,
    GemmConfig,
    __version__,
    format_config,
    parse_config,
    take_layout_fault_report,
    take_wait_timeout_report,
)
from ._gemm import gemm_nt, prepare
from ._grouped import (
    k_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nt_contiguous,
    m_grouped_bf16_gemm_nt_masked,
    prepare_k_grouped_bf16_gemm_nt_contiguous,
    prepare_m_grouped_bf16_gemm_nt_contiguous,
    prepare_m_grouped_bf16_gemm_nt_masked,
)
from ._jit import cache_dir, plan, warm
from . import _torch_ops  # registers torch.ops.tilecast.* when torch is importable

__all__ = [
    "Error",
    "GemmConfig",
    "__version__",
    "cache_dir",
    "format_config",
    "gemm_nt",
    "k_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nt_masked",
    "parse_config",
    "plan",
    "prepare",
    "prepare_k_grouped_bf16_gemm_nt_contiguous",
    "prepare_m_grouped_bf16_gemm_nt_contiguous",
    "prepare_m_grouped_bf16_gemm_nt_masked",
    "take_layout_fault_report",
    "take_wait_timeout_report",
    "warm",
]
