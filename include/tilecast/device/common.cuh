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

// T when kFirst, else F: cuda::std::conditional_t without <cuda/std/type_traits>, whose parsing
// cost NVRTC 0.8-1.0 s per kernel (bench/results/2026-12-01-nvrtc-pch.md).
template <bool kFirst, class T, class F>
struct PickType {
  using type = T;
};
template <class T, class F>
struct PickType<false, T, F> {
  using type = F;
};
template <bool kFirst, class T, class F>
using pick_type = typename PickType<kFirst, T, F>::type;

}  // namespace tilecast
