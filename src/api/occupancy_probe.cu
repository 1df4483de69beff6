#include "api/occupancy_probe.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "tilecast/types.hpp"

namespace tilecast::api {
namespace {

// Stands in for a GEMM kernel: occupancy depends on threads, shared memory, registers and the
// cluster size, not on the code. Its registers are few, so the caller asks with enough shared
// memory to hold the CTAs per SM that the GEMM's registers allow (one).
__global__ void __launch_bounds__(1024) occupancy_probe_kernel() {}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("occupancy probe: ") + what + " failed: " + cudaGetErrorString(e));
}

}  // namespace

uint32_t resident_clusters(uint32_t threads, uint32_t smem_bytes, uint32_t cluster_size) {
  static std::mutex mutex;
  static std::map<std::tuple<int, uint32_t, uint32_t, uint32_t>, uint32_t> cache;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const auto key = std::make_tuple(device, threads, smem_bytes, cluster_size);
  std::lock_guard lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

  const void* fn = reinterpret_cast<const void*>(&occupancy_probe_kernel);
  check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)),
        "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  check(cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
        "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)");
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = cluster_size;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster_size);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  check(cudaOccupancyMaxActiveClusters(&clusters, fn, &config), "cudaOccupancyMaxActiveClusters");
  cache.emplace(key, static_cast<uint32_t>(clusters));
  return static_cast<uint32_t>(clusters);
}

}  // namespace tilecast::api
