// Portable basics for the header-only device code.
//
// Everything under include/tilecast/device/ is included three ways: by NVRTC when a kernel is
// JIT-compiled, by nvcc, and by the host C++ compiler (the scheduler and the pipeline arithmetic
// run in the CPU simulator). So these headers include only CCCL's cuda/std headers, which work in
// all three, and mark shared logic TC_HOST_DEVICE.
#pragma once

#include <cuda/std/cstdint>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TC_HOST_DEVICE __host__ __device__
#define TC_DEVICE __device__
#define TC_FORCEINLINE __forceinline__
#else
#define TC_HOST_DEVICE
#define TC_DEVICE
#define TC_FORCEINLINE inline
#endif

namespace tilecast {

using cuda::std::int32_t;
using cuda::std::int64_t;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::uint8_t;

TC_HOST_DEVICE constexpr uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

}  // namespace tilecast
