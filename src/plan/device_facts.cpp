#include "tilecast/plan/device_facts.hpp"

#include <algorithm>

#include "tilecast/types.hpp"

namespace tilecast::plan {

uint32_t cluster_size_index(uint32_t cluster_size) {
  switch (cluster_size) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: throw Error("cluster size " + std::to_string(cluster_size) + " is not 1, 2, 4 or 8");
  }
}

uint32_t DeviceFacts::clusters_for(uint32_t cluster_size, uint32_t max_sms) const {
  const uint32_t resident = max_active_clusters[cluster_size_index(cluster_size)];
  if (max_sms == 0) return resident;
  return std::min(resident, max_sms / cluster_size);
}

DeviceFacts DeviceFacts::h200_model() {
  DeviceFacts f;
  f.name = "NVIDIA H200 (model)";
  f.num_sms = 132;
  f.l2_bytes = 60ull << 20;
  // cudaOccupancyMaxActiveClusters with one 200 KB CTA per SM, measured on our H200: clusters of
  // 4 and 8 fit 120 SMs because a cluster must sit inside one GPC.
  f.max_active_clusters = {132, 66, 30, 15};
  f.peak_bf16_tflops = 989.0;
  f.hbm_tb_per_s = 4.2;
  f.l2_tb_per_s = 10.0;
  return f;
}

}  // namespace tilecast::plan
