// What planning needs to know about a GPU. Read off the device when there is one; otherwise the
// H200 model below, built from figures measured on our H200 (MISSION.md), so that plans and the
// traffic model can be printed and tested on a machine without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace tilecast::plan {

struct DeviceFacts {
  std::string name;
  uint32_t num_sms = 0;
  uint64_t l2_bytes = 0;
  // Clusters of 1, 2, 4 and 8 CTAs resident at once with one GEMM CTA per SM (what
  // cudaOccupancyMaxActiveClusters answers), indexed by log2 of the cluster size. A cluster must
  // fit in one GPC, so clusters of 4 leave SMs idle on GPCs whose SM count is not a multiple of 4.
  std::array<uint32_t, 4> max_active_clusters{};
  double peak_bf16_tflops = 0;  // dense tensor-core peak
  double hbm_tb_per_s = 0;      // measured device-to-device copy, bytes read + written
  double l2_tb_per_s = 0;       // measured L2 -> SM read bandwidth, all SMs streaming

  // Clusters of `cluster_size` CTAs a persistent launch gets when it may use at most max_sms SMs
  // (0: all of them).
  uint32_t clusters_for(uint32_t cluster_size, uint32_t max_sms = 0) const;

  // Our H200: 132 SMs, 60 MiB L2; clusters of 1 and 2 fill all SMs, clusters of 4 and 8 fill
  // 120 (measured 2026-11-29 with 200 KB CTAs); 989 TFLOPS dense BF16 (datasheet), 4.2 TB/s copy.
  // L2 -> SM: plain 16-byte loads from all SMs reach about 7.4 TB/s, but our TMA kernel without
  // multicast sustained 9.3 TB/s at 794 TFLOPS on 8192^3 (bench/results/2026-11-29-h200-clusters.md),
  // so the model uses 10 TB/s.
  static DeviceFacts h200_model();
};

// log2 of a cluster size of 1, 2, 4 or 8.
uint32_t cluster_size_index(uint32_t cluster_size);

}  // namespace tilecast::plan
