#include "nvml.hpp"

#include <dlfcn.h>

namespace tilecast::bench {
namespace {

template <class F>
bool load(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

}  // namespace

std::string Nvml::open(const std::string& pci_bus_id) {
  lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "libnvidia-ml.so.1 not found";
  const bool core = load(lib, init, "nvmlInit_v2") && load(lib, shutdown, "nvmlShutdown") &&
                    load(lib, by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  load(lib, count, "nvmlDeviceGetCount_v2");
  load(lib, by_index, "nvmlDeviceGetHandleByIndex_v2");
  load(lib, driver_version, "nvmlSystemGetDriverVersion");
  load(lib, clock, "nvmlDeviceGetClockInfo");
  load(lib, max_clock, "nvmlDeviceGetMaxClockInfo");
  load(lib, power, "nvmlDeviceGetPowerUsage");
  load(lib, power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  load(lib, temperature, "nvmlDeviceGetTemperature");
  load(lib, energy, "nvmlDeviceGetTotalEnergyConsumption");
  std::string why;
  if (!core) {
    why = "NVML lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2";
  } else if (init() != kNvmlSuccess) {
    why = "nvmlInit failed";
  } else {
    if (by_pci(pci_bus_id.c_str(), &dev) == kNvmlSuccess) return "";
    // NVML numbers GPUs its own way, so an index is only safe when there is one GPU.
    unsigned n = 0;
    if (count && by_index && count(&n) == kNvmlSuccess && n == 1 && by_index(0, &dev) == kNvmlSuccess) return "";
    why = "NVML does not know the GPU at bus " + pci_bus_id;
    shutdown();
  }
  dlclose(lib);
  lib = nullptr;
  return why;
}

void Nvml::close() {
  if (!lib) return;
  shutdown();
  dlclose(lib);
  lib = nullptr;
}

}  // namespace tilecast::bench
