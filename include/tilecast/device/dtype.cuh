// Element types of GEMM operands and outputs, shared by the public API, the planner and the
// kernels (so this header includes nothing: the public types.hpp includes it too).
#pragma once

namespace tilecast {

enum class DType : unsigned { kBF16 = 0, kFP32 = 1 };

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__host__ __device__
#endif
constexpr unsigned dtype_bytes(DType t) { return t == DType::kBF16 ? 2u : 4u; }

}  // namespace tilecast
