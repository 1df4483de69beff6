// Launching a JIT kernel with cuLaunchKernelEx on the caller's stream, with thread-block-cluster
// dimensions, and the cluster occupancy query the planner uses.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "jit/kernel.hpp"

namespace tilecast::jit {

struct LaunchConfig {
  dim3 grid;     // in CTAs; each dimension a multiple of the cluster's
  dim3 block;    // threads per CTA
  dim3 cluster;  // CTAs per cluster; (1,1,1) launches without the cluster attribute
  uint32_t dynamic_smem_bytes = 0;
  cudaStream_t stream = nullptr;  // the caller's stream (same handle as a driver CUstream); 0 is
                                  // the legacy default stream, cudaStreamPerThread the per-thread one
  // Programmatic stream serialization: the kernel may start before the previous one on the stream
  // has finished, once that one's CTAs have all run griddepcontrol.launch_dependents; the kernel
  // itself must wait (griddepcontrol.wait) before it reads what the previous one wrote.
  bool after_previous_programmatically = false;
};

// The hardware's largest cluster with "non-portable cluster size allowed" (8 is portable).
inline constexpr uint32_t kMaxClusterCtas = 16;

// Throws tilecast::Error when cfg cannot launch: a zero dimension, more than 1024 threads per CTA,
// a grid dimension that is not a multiple of the cluster's, a cluster over kMaxClusterCtas.
// Pure, so it is testable without a GPU; launch() calls it first.
void validate_launch(const LaunchConfig& cfg);

// Launches `kernel` with arguments `args` (an array of pointers to each kernel parameter, as
// cuLaunchKernelEx takes them). Raises the function's dynamic-smem attribute when needed. Throws
// tilecast::Error naming the grid, block, cluster and smem when the driver refuses.
void launch(const Kernel& kernel, const LaunchConfig& cfg, void** args);

// The same with the arguments themselves; each must have exactly its kernel parameter's type.
template <class... Args>
void launch_kernel(const Kernel& kernel, const LaunchConfig& cfg, const Args&... args) {
  void* pointers[] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
  launch(kernel, cfg, pointers);
}

// How many clusters of `cluster_size` CTAs (a 1-D cluster along x) of `block` threads and
// `dynamic_smem_bytes` each can be resident on the device at once (cuOccupancyMaxActiveClusters).
int max_active_clusters(const Kernel& kernel, uint32_t cluster_size, dim3 block,
                        uint32_t dynamic_smem_bytes);

}  // namespace tilecast::jit
