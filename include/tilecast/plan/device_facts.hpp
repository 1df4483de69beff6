// What planning needs to know about a GPU, in two steps: the attributes the CUDA runtime reports
// (read_facts in src/api/device_state.cpp gathers them, and nothing else), and derive_facts, a
// pure function that turns them into the rates the cost model uses, each scaled from a figure
// measured on our H200 (MISSION.md). Models of a few parts (the H200 we measure on, an H100 PCIe,
// an H20, a B200 for the plan-only SM100 spec) are attributes fed through the same function, so
// that plans can be printed and tested on a machine without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "tilecast/plan/arch_spec.hpp"

namespace tilecast::plan {

// Clusters of 1, 2, 4 and 8 CTAs resident at once with one GEMM CTA per SM, indexed by log2 of
// the cluster size.
using ResidentClusters = std::array<uint32_t, 4>;

// What the CUDA runtime says of a device (units as it reports them).
struct DeviceAttributes {
  std::string name;
  Arch arch = Arch::kSM90;         // from the compute capability
  uint32_t num_sms = 0;            // cudaDevAttrMultiProcessorCount
  uint64_t l2_bytes = 0;           // cudaDevAttrL2CacheSize
  uint32_t sm_clock_khz = 0;       // cudaDevAttrClockRate: the peak (boost) clock
  uint32_t memory_clock_khz = 0;   // cudaDevAttrMemoryClockRate: the peak memory clock
  uint32_t memory_bus_bits = 0;    // cudaDevAttrGlobalMemoryBusWidth
  // cudaOccupancyMaxActiveClusters per size. A cluster must fit in one GPC, so clusters of 4
  // leave SMs idle on GPCs whose SM count is not a multiple of 4.
  ResidentClusters max_active_clusters{};
};

struct DeviceFacts {
  std::string name;
  Arch arch = Arch::kSM90;
  uint32_t num_sms = 0;
  uint64_t l2_bytes = 0;
  ResidentClusters max_active_clusters{};
  // Dense BF16 FLOP per clock per SM: the arch's, or less on parts whose tensor rate is cut (H20).
  uint32_t mma_flops_per_clock = 0;
  double mma_clock_mhz = 0;     // the clock the tensor-core peak is quoted at (sustained, not boost)
  double peak_bf16_tflops = 0;  // dense tensor-core peak
  double hbm_tb_per_s = 0;      // device-to-device copy, bytes read + written
  double l2_tb_per_s = 0;       // L2 -> SM read bandwidth, all SMs streaming
  DeviceAttributes attributes;  // what these were derived from

  // Clusters of `cluster_size` CTAs a persistent launch gets when it may use at most max_sms SMs
  // (0: all of them).
  uint32_t clusters_for(uint32_t cluster_size, uint32_t max_sms = 0) const;

  // The models below (attributes in device_facts.cpp, each figure's source beside it).
  static DeviceFacts h200_model();       // our H200: every figure measured or read on it
  static DeviceFacts h100_sxm_model();   // the H200's attributes with the H100 SXM's L2 and HBM
  static DeviceFacts h100_pcie_model();  // datasheet figures; clusters from an assumed GPC layout
  static DeviceFacts h20_model();        // datasheet figures; tensor rate cut to a quarter
  static DeviceFacts b200_model();       // SM100, plan-only; datasheet figures, assumed GPCs
};

// The rates of a device from its attributes (pure: the CPU tests call it with a part's figures).
//   peak BF16 = SMs x the arch's (or the part's cut) FLOP per clock x the peak clock x the
//               fraction of it the datasheet rate is quoted at (1830 of 1980 MHz on the H200);
//   HBM       = memory clock x bus width x 2 (double data rate) x the copy efficiency measured on
//               the H200 against the same formula;
//   L2 -> SM  = the H200's measured figure x (SMs x peak clock) / the H200's.
// Throws tilecast::Error naming the attribute when one is zero.
DeviceFacts derive_facts(const DeviceAttributes& a);

// A model by name: h200, h100-pcie, h20 or b200; anything else throws tilecast::Error listing them.
DeviceFacts device_model(const std::string& name);

// Resident clusters per size when each GPC holds the given SMs and a cluster must sit in one GPC:
// what the occupancy API reports, estimated for a part we cannot query.
ResidentClusters clusters_from_gpcs(std::span<const uint32_t> sms_per_gpc);

// Lines that say how each rate was derived (tilecast-plan prints them).
std::string describe_facts(const DeviceFacts& f);

// log2 of a cluster size of 1, 2, 4 or 8.
uint32_t cluster_size_index(uint32_t cluster_size);

}  // namespace tilecast::plan
