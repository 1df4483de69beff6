"""tilecast: Hopper (SM90) BF16 GEMM kernels with thread-block-cluster TMA multicast.

    import torch, tilecast
    a = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(2112, 7168, device="cuda", dtype=torch.bfloat16)
    d = tilecast.gemm_nt(a, b)                  # d = a @ b.T, bf16, on the current stream

Any DLPack GPU tensor works (PyTorch, CuPy, JAX); PyTorch is optional (`import tilecast` needs
none) and, when installed, the functions are also torch custom ops (torch.ops.tilecast.*), so
torch.compile traces them without graph breaks.

Kernels are compiled by NVRTC on the first call of each shape and cached on disk
(TILECAST_CACHE_DIR): tilecast.warm(...) or `python -m tilecast.warm` compiles them ahead of time,
tilecast.plan(...) prints the plan a shape gets, and tilecast.prepare(...) readies one call for
CUDA-graph capture.
"""

from ._tilecast import Error, GemmConfig, __version__, format_config, parse_config
from ._gemm import gemm_nt, prepare
from ._jit import cache_dir, plan, warm
from . import _torch_ops  # registers torch.ops.tilecast.* when torch is importable

# Grouped GEMMs (m-grouped contiguous, m-grouped masked, k-grouped) join gemm_nt here, with
# DeepGEMM's names (m_grouped_gemm_nt_contiguous, m_grouped_gemm_nt_masked,
# k_grouped_gemm_nt_contiguous), once the C++ API has them: _gemm.py holds the framework plumbing
# they share, python/src/gemm_bindings.cpp the checks, _torch_ops.py the custom ops.

__all__ = [
    "Error",
    "GemmConfig",
    "__version__",
    "cache_dir",
    "format_config",
    "gemm_nt",
    "parse_config",
    "plan",
    "prepare",
    "warm",
]
