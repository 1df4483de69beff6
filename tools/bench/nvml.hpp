// The few NVML entry points the bench reads (clocks, power, temperature, energy, the driver's
// version), loaded with dlopen and declared by hand: the toolkit here ships no nvml.h. NVML's ABI
// for these has been stable for many years: int status (0 = success), an opaque device handle,
// clock and sensor selectors as plain enums.
#pragma once

#include <string>

namespace tilecast::bench {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;

struct Nvml {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  // Optional: null where this NVML lacks them.
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;      // MHz
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;  // MHz
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;           // mW
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;     // mW
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // mJ

  // Opens NVML for the GPU at this PCI bus id: "" when it did, else why not (nothing held then).
  std::string open(const std::string& pci_bus_id);
  void close();
};

}  // namespace tilecast::bench
