#include "jit/launch.hpp"

#include <sstream>
#include <string>

#include "driver/driver.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

std::string dims(const dim3& d) {
  std::ostringstream s;
  s << "(" << d.x << "," << d.y << "," << d.z << ")";
  return s.str();
}

std::string describe(const LaunchConfig& cfg) {
  return "grid " + dims(cfg.grid) + ", block " + dims(cfg.block) + ", cluster " +
         dims(cfg.cluster) + ", " + std::to_string(cfg.dynamic_smem_bytes) + " B dynamic smem";
}

bool has_cluster(const dim3& c) { return c.x * c.y * c.z > 1; }

CUlaunchAttribute cluster_attribute(const dim3& cluster) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a.value.clusterDim.x = cluster.x;
  a.value.clusterDim.y = cluster.y;
  a.value.clusterDim.z = cluster.z;
  return a;
}

}  // namespace

void validate_launch(const LaunchConfig& cfg) {
  auto fail = [&](const std::string& why) {
    throw Error("launch: " + why + " [" + describe(cfg) + "]");
  };
  if (cfg.grid.x == 0 || cfg.grid.y == 0 || cfg.grid.z == 0) fail("the grid has a zero dimension");
  if (cfg.block.x == 0 || cfg.block.y == 0 || cfg.block.z == 0) {
    fail("the block has a zero dimension");
  }
  const uint64_t threads = uint64_t{cfg.block.x} * cfg.block.y * cfg.block.z;
  if (threads > 1024) fail(std::to_string(threads) + " threads per CTA exceed 1024");
  if (cfg.cluster.x == 0 || cfg.cluster.y == 0 || cfg.cluster.z == 0) {
    fail("the cluster has a zero dimension");
  }
  const uint64_t ctas = uint64_t{cfg.cluster.x} * cfg.cluster.y * cfg.cluster.z;
  if (ctas > kMaxClusterCtas) {
    fail("a cluster of " + std::to_string(ctas) + " CTAs exceeds " +
         std::to_string(kMaxClusterCtas));
  }
  if (cfg.grid.x % cfg.cluster.x || cfg.grid.y % cfg.cluster.y || cfg.grid.z % cfg.cluster.z) {
    fail("each grid dimension must be a multiple of the cluster's");
  }
}

void launch(const Kernel& kernel, const LaunchConfig& cfg, void** args) {
  validate_launch(cfg);
  if (cfg.dynamic_smem_bytes > 0) kernel.ensure_dynamic_smem(cfg.dynamic_smem_bytes);

  CUlaunchAttribute attributes[2];
  unsigned int count = 0;
  if (has_cluster(cfg.cluster)) attributes[count++] = cluster_attribute(cfg.cluster);
  if (cfg.after_previous_programmatically) {
    CUlaunchAttribute& a = attributes[count++];
    a = CUlaunchAttribute{};
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  CUlaunchConfig c{};
  c.gridDimX = cfg.grid.x;
  c.gridDimY = cfg.grid.y;
  c.gridDimZ = cfg.grid.z;
  c.blockDimX = cfg.block.x;
  c.blockDimY = cfg.block.y;
  c.blockDimZ = cfg.block.z;
  c.sharedMemBytes = cfg.dynamic_smem_bytes;
  c.hStream = reinterpret_cast<CUstream>(cfg.stream);
  c.attrs = count > 0 ? attributes : nullptr;
  c.numAttrs = count;

  const Driver& d = Driver::get();
  const CUresult r = d.cuLaunchKernelEx(&c, kernel.function(), args, nullptr);
  if (r != CUDA_SUCCESS) {
    throw Error("cuLaunchKernelEx of " + kernel.lowered_name() + " failed: " + d.describe(r) +
                " [" + describe(cfg) + "]");
  }
}

int max_active_clusters(const Kernel& kernel, uint32_t cluster_size, dim3 block,
                        uint32_t dynamic_smem_bytes) {
  LaunchConfig cfg;
  cfg.grid = dim3(cluster_size, 1, 1);
  cfg.block = block;
  cfg.cluster = dim3(cluster_size, 1, 1);
  cfg.dynamic_smem_bytes = dynamic_smem_bytes;
  validate_launch(cfg);
  if (dynamic_smem_bytes > 0) kernel.ensure_dynamic_smem(dynamic_smem_bytes);

  // The cluster attribute always goes in here, so a cluster of 1 is counted as one too.
  CUlaunchAttribute attribute = cluster_attribute(cfg.cluster);
  CUlaunchConfig c{};
  c.gridDimX = cluster_size;
  c.gridDimY = 1;
  c.gridDimZ = 1;
  c.blockDimX = block.x;
  c.blockDimY = block.y;
  c.blockDimZ = block.z;
  c.sharedMemBytes = dynamic_smem_bytes;
  c.attrs = &attribute;
  c.numAttrs = 1;
  int clusters = 0;
  const Driver& d = Driver::get();
  d.check(d.cuOccupancyMaxActiveClusters(&clusters, kernel.function(), &c),
          "cuOccupancyMaxActiveClusters of " + kernel.lowered_name() + " [" + describe(cfg) + "]");
  return clusters;
}

}  // namespace tilecast::jit
