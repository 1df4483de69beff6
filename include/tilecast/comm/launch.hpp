// Launching kernels that contain a grid sync. All their CTAs must be resident at once, or the
// early ones wait forever for the late ones (the DeepGEMM grid-sync hang when another stream's
// kernel held an SM: sglang #30399). Two defences, both here:
//   launch_cooperative  the runtime's cooperative launch, which guarantees co-residency (and
//                       refuses a grid that can never fit);
//   require_coresident  for plain launches: refuse, with an error that gives the numbers, a grid
//                       larger than the GPU can hold at once.
// Neither protects a plain launch from a kernel on another stream that occupies SMs at run time;
// the cooperative launch does, and the device-side timeout turns whatever is left into a
// diagnostic rather than a hang.
#pragma once

#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

namespace tilecast::comm {

// How many CTAs of `kernel` with this block size and dynamic shared memory fit on `device` at once.
int max_coresident_ctas(const void* kernel, int block_threads, size_t dynamic_smem, int device);

// Throws tilecast::Error if `grid` CTAs cannot all be resident at once.
void require_coresident(const void* kernel, int grid, int block_threads, size_t dynamic_smem,
                        int device, const char* what);

// A cooperative launch after the co-residency check; errors become tilecast::Error.
template <typename... Params, typename... Args>
void launch_cooperative(void (*kernel)(Params...), int grid, int block_threads, size_t dynamic_smem,
                        cudaStream_t stream, const char* what, Args&&... args) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  require_coresident(reinterpret_cast<const void*>(kernel), grid, block_threads, dynamic_smem, device, what);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(static_cast<unsigned>(block_threads));
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (e != cudaSuccess) {
    throw Error(std::string("cooperative launch of ") + what + " (" + std::to_string(grid) +
                " CTAs) failed: " + cudaGetErrorString(e));
  }
}

}  // namespace tilecast::comm
