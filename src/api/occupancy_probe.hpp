// The occupancy probe: how many clusters of a given size a persistent launch keeps resident, asked
// of the CUDA runtime with an empty kernel of the GEMM's threads and shared memory instead of a
// compiled GEMM kernel, so that planning needs no JIT.
#pragma once

#include <cstdint>

namespace tilecast::api {

// cudaOccupancyMaxActiveClusters for a kernel of `threads` threads and `smem_bytes` of dynamic
// shared memory per CTA, in 1-D clusters of `cluster_size` CTAs, on the current device. Cached
// per (device, threads, shared memory, cluster size). Throws tilecast::Error on a CUDA error.
uint32_t resident_clusters(uint32_t threads, uint32_t smem_bytes, uint32_t cluster_size);

}  // namespace tilecast::api
