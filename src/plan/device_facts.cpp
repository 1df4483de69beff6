#include "tilecast/plan/device_facts.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tilecast/types.hpp"

namespace tilecast::plan {
namespace {

constexpr uint32_t kClusterSizes[] = {1, 2, 4, 8};
constexpr double kKhzPerMhz = 1e3, kHzPerKhz = 1e3;
constexpr double kBitsPerByte = 8;
// HBM transfers on both clock edges: bytes per second = memory clock x bus bytes x 2.
constexpr double kDataRate = 2;
constexpr uint32_t kSmsPerTpc = 2;

// Our H200, as the runtime reports it: 132 SMs and 60 MiB of L2 (cudaGetDeviceProperties); a
// 1980 MHz peak SM clock (the clock our runs saw at most, bench/results); HBM3e at 3201 MHz on
// 6016 bits (as cudaDevAttrMemoryClockRate and cudaDevAttrGlobalMemoryBusWidth report them,
// printed by the GPU test DeviceFacts.ReadFactsOfThisDevice on 2026-12-01: 4.81 TB/s by the
// formula, 4.8 TB/s on the datasheet); clusters of
// 1 and 2 on all SMs, of 4 and 8 on 120 (cudaOccupancyMaxActiveClusters with 200 KB CTAs,
// 2026-11-29). Every rate of every device is calibrated on these figures.
const DeviceAttributes& h200_attributes() {
  static const DeviceAttributes a = {
      .name = "NVIDIA H200 (model)",
      .arch = Arch::kSM90,
      .num_sms = 132,
      .l2_bytes = 60ull << 20,
      .sm_clock_khz = 1980000,
      .memory_clock_khz = 3201000,
      .memory_bus_bits = 6016,
      .max_active_clusters = {132, 66, 30, 15},
  };
  return a;
}

// The datasheet's tensor rate is quoted at a clock below the peak the device reports: the H200's
// (and H100 SXM's) 989.4 TFLOPS is 132 SMs x 4096 x 1830 MHz of its 1980 MHz; the H100 PCIe's
// 756 TFLOPS at 114 SMs is 1619 MHz of its 1755: the same fraction within 0.2%. Under the power
// limit our H200 ran between 1515 and 1980 MHz, so this is the clock a long GEMM holds at best.
constexpr double kH200MmaClockMhz = 1830, kH200PeakClockMhz = 1980;
constexpr double kMmaClockFraction = kH200MmaClockMhz / kH200PeakClockMhz;
// Device-to-device copy measured on our H200 (MISSION.md: 4.24 TB/s; the model has used 4.2).
constexpr double kH200CopyTbPerS = 4.2;
// L2 -> SM on our H200: plain 16-byte loads from all SMs reach about 7.4 TB/s, but our TMA kernel
// without multicast sustained 9.3 TB/s at 794 TFLOPS on 8192^3 (bench/results/2026-11-29-h200-
// clusters.md), so the model uses 10 TB/s. Other parts: scaled by SMs x clock, as each SM's L2
// slice bandwidth and the crossbar run on the SM clock.
constexpr double kH200L2TbPerS = 10.0;

// Parts whose tensor rate is cut below their architecture's: dense BF16 FLOP per clock per SM.
// The H20: 148 TFLOPS dense BF16 on its datasheet at 78 SMs is 1037 FLOP per clock at 1830 MHz:
// a quarter of SM90's 4096.
struct TensorCut {
  const char* name;
  uint32_t flops_per_clock;
};
constexpr TensorCut kTensorCuts[] = {{"NVIDIA H20", 1024}};

// "NVIDIA H20" names the H20 and its variants ("NVIDIA H20 3e"): the part's name as a whole word,
// so not the H200.
bool names_part(const std::string& device, const char* part) {
  const std::string p = part;
  if (device.compare(0, p.size(), p) != 0) return false;
  return device.size() == p.size() || device[p.size()] == ' ';
}

double dram_formula_tb_per_s(const DeviceAttributes& a) {
  return a.memory_clock_khz * kHzPerKhz * (a.memory_bus_bits / kBitsPerByte) * kDataRate / 1e12;
}

// The copy efficiency: what a copy reached on the H200 over what the formula gives it.
double copy_efficiency() { return kH200CopyTbPerS / dram_formula_tb_per_s(h200_attributes()); }

// TPCs spread over GPCs as evenly as they go (the assumption for a part we cannot query).
std::vector<uint32_t> even_gpcs(uint32_t tpcs, uint32_t gpcs) {
  std::vector<uint32_t> sms(gpcs, tpcs / gpcs * kSmsPerTpc);
  for (uint32_t g = 0; g < tpcs % gpcs; ++g) sms[gpcs - 1 - g] += kSmsPerTpc;
  return sms;
}

}  // namespace

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

ResidentClusters clusters_from_gpcs(std::span<const uint32_t> sms_per_gpc) {
  ResidentClusters r{};
  for (uint32_t i = 0; i < r.size(); ++i)
    for (uint32_t sms : sms_per_gpc) r[i] += sms / kClusterSizes[i];
  return r;
}

DeviceFacts derive_facts(const DeviceAttributes& a) {
  const auto need = [&](uint64_t v, const char* what) {
    if (v == 0) throw Error("device " + a.name + ": attribute " + what + " is 0 (the planner derives its rates from it)");
  };
  need(a.num_sms, "num_sms (cudaDevAttrMultiProcessorCount)");
  need(a.l2_bytes, "l2_bytes (cudaDevAttrL2CacheSize)");
  need(a.sm_clock_khz, "sm_clock_khz (cudaDevAttrClockRate)");
  need(a.memory_clock_khz, "memory_clock_khz (cudaDevAttrMemoryClockRate)");
  need(a.memory_bus_bits, "memory_bus_bits (cudaDevAttrGlobalMemoryBusWidth)");
  need(a.max_active_clusters[0], "max_active_clusters[0] (clusters of 1 resident)");
  const DeviceAttributes& h200 = h200_attributes();
  DeviceFacts f;
  f.name = a.name;
  f.arch = a.arch;
  f.num_sms = a.num_sms;
  f.l2_bytes = a.l2_bytes;
  f.max_active_clusters = a.max_active_clusters;
  f.mma_flops_per_clock = arch_spec(a.arch).dense_bf16_flops_per_clock;
  for (const TensorCut& cut : kTensorCuts)
    if (names_part(a.name, cut.name)) f.mma_flops_per_clock = cut.flops_per_clock;
  f.mma_clock_mhz = a.sm_clock_khz / kKhzPerMhz * kMmaClockFraction;
  f.peak_bf16_tflops = static_cast<double>(a.num_sms) * f.mma_flops_per_clock * f.mma_clock_mhz * 1e6 / 1e12;
  f.hbm_tb_per_s = dram_formula_tb_per_s(a) * copy_efficiency();
  f.l2_tb_per_s = kH200L2TbPerS * (static_cast<double>(a.num_sms) * a.sm_clock_khz) /
                  (static_cast<double>(h200.num_sms) * h200.sm_clock_khz);
  f.attributes = a;
  return f;
}

DeviceFacts DeviceFacts::h200_model() { return derive_facts(h200_attributes()); }

namespace {

// A part as its datasheet gives it, its TPCs spread evenly over its GPCs.
struct Datasheet {
  const char* name;
  Arch arch;
  uint32_t tpcs, gpcs;
  uint64_t l2_mib;
  uint32_t sm_clock_khz, memory_clock_khz, memory_bus_bits;
};

DeviceFacts from_datasheet(const Datasheet& d) {
  DeviceAttributes a{.name = d.name,
                     .arch = d.arch,
                     .num_sms = d.tpcs * kSmsPerTpc,
                     .l2_bytes = d.l2_mib << 20,
                     .sm_clock_khz = d.sm_clock_khz,
                     .memory_clock_khz = d.memory_clock_khz,
                     .memory_bus_bits = d.memory_bus_bits};
  a.max_active_clusters = clusters_from_gpcs(even_gpcs(d.tpcs, d.gpcs));
  return derive_facts(a);
}

}  // namespace

// H100 PCIe (datasheet): 114 SMs (57 TPCs), 50 MiB L2, 1755 MHz boost, HBM2e at 1593 MHz on
// 5120 bits (2.04 TB/s by the formula, "2.0 TB/s" on the datasheet). Clusters: GH100 has 8 GPCs
// and the PCIe part loses TPCs from them; assumed spread evenly, 7 GPCs of 14 SMs and one of 16:
// clusters of 4 fit 100 SMs, of 8 only 72. (An even spread over-counts on the H200: it would give
// 32 clusters of 4 where the occupancy API reports 30.)
DeviceFacts DeviceFacts::h100_pcie_model() {
  return from_datasheet({.name = "NVIDIA H100 PCIe (model)", .arch = Arch::kSM90, .tpcs = 57, .gpcs = 8, .l2_mib = 50,
                         .sm_clock_khz = 1755000, .memory_clock_khz = 1593000, .memory_bus_bits = 5120});
}

// H100 SXM (datasheet): the H200's die and SM count (132 SMs, 66 TPCs) with 50 MiB of L2 and
// 80 GB of HBM3 at 2619 MHz on 5120 bits (3.35 TB/s by the formula and on the datasheet); the
// 1980 MHz peak SM clock our H100 runs reported. Clusters: the H200's counts from the occupancy
// API, assumed the same for the same die and SM count (not read on an H100; on the device the
// API's own counts replace them).
DeviceFacts DeviceFacts::h100_sxm_model() {
  DeviceAttributes a = h200_attributes();
  a.name = "NVIDIA H100 SXM (model)";
  a.l2_bytes = 50ull << 20;
  a.memory_clock_khz = 2619000;
  a.memory_bus_bits = 5120;
  return derive_facts(a);
}

// H20 (datasheet): 78 SMs (39 TPCs), 60 MiB L2, 96 GB HBM3 at 4.0 TB/s (assumed six stacks on
// 6144 bits at the H100 SXM's 2619 MHz: 4.02 TB/s by the formula), 148 TFLOPS dense BF16 (the
// tensor cut of kTensorCuts). Its peak SM clock is assumed the H200's 1980 MHz. Clusters: 39 TPCs
// spread over 8 GPCs, 7 of 10 SMs and one of 8: clusters of 4 fit 64 SMs.
DeviceFacts DeviceFacts::h20_model() {
  return from_datasheet({.name = "NVIDIA H20 (model)", .arch = Arch::kSM90, .tpcs = 39, .gpcs = 8, .l2_mib = 60,
                         .sm_clock_khz = 1980000, .memory_clock_khz = 2619000, .memory_bus_bits = 6144});
}

// B200 (datasheet; SM100, for the plan-only spec): 148 SMs (74 TPCs), 126 MiB L2, 1965 MHz boost,
// HBM3e at 3996 MHz on 8192 bits (8.2 TB/s by the formula, 8 TB/s on the datasheet). Clusters:
// assumed 8 GPCs, 6 of 18 SMs and 2 of 20. Its rates use the H200's calibrations (clock fraction,
// copy efficiency, L2 per SM-clock): assumptions until an SM100 part is measured.
DeviceFacts DeviceFacts::b200_model() {
  return from_datasheet({.name = "NVIDIA B200 (model)", .arch = Arch::kSM100, .tpcs = 74, .gpcs = 8, .l2_mib = 126,
                         .sm_clock_khz = 1965000, .memory_clock_khz = 3996000, .memory_bus_bits = 8192});
}

DeviceFacts device_model(const std::string& name) {
  if (name == "h200") return DeviceFacts::h200_model();
  if (name == "h100-sxm") return DeviceFacts::h100_sxm_model();
  if (name == "h100-pcie") return DeviceFacts::h100_pcie_model();
  if (name == "h20") return DeviceFacts::h20_model();
  if (name == "b200") return DeviceFacts::b200_model();
  throw Error("device model '" + name + "' is not h200, h100-sxm, h100-pcie, h20 or b200");
}

std::string describe_facts(const DeviceFacts& f) {
  const DeviceAttributes& a = f.attributes;
  const DeviceAttributes& h200 = h200_attributes();
  char s[1024];
  std::snprintf(s, sizeof s,
                "%s: %s, %u SMs, L2 %.0f MiB\n"
                "  peak BF16 %.1f TFLOPS = %u SMs x %u FLOP/clock x %.0f MHz (%.3f of the %.0f MHz peak clock, as "
                "the H200's datasheet rate)\n"
                "  HBM %.2f TB/s = %.0f MHz x %u bits x 2 = %.2f TB/s x %.3f (copy efficiency measured on the H200)\n"
                "  L2->SM %.1f TB/s = %.1f TB/s measured on the H200 x (%u SMs x %.0f MHz) / (%u x %.0f MHz)\n"
                "  resident clusters of 1/2/4/8: %u/%u/%u/%u\n",
                f.name.c_str(), arch_spec(f.arch).name, f.num_sms, f.l2_bytes / double(1 << 20), f.peak_bf16_tflops,
                f.num_sms, f.mma_flops_per_clock, f.mma_clock_mhz, kMmaClockFraction, a.sm_clock_khz / kKhzPerMhz,
                f.hbm_tb_per_s, a.memory_clock_khz / kKhzPerMhz, a.memory_bus_bits, dram_formula_tb_per_s(a),
                copy_efficiency(), f.l2_tb_per_s, kH200L2TbPerS, a.num_sms, a.sm_clock_khz / kKhzPerMhz, h200.num_sms,
                h200.sm_clock_khz / kKhzPerMhz, f.max_active_clusters[0], f.max_active_clusters[1],
                f.max_active_clusters[2], f.max_active_clusters[3]);
  return s;
}

}  // namespace tilecast::plan
