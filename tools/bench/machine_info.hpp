// Facts about the machine a result came from, for every output and every results file: GPU, SM
// count, driver, clocks (NVML, opened with dlopen at run time so nothing links it; nvidia-smi as
// the fallback), date (UTC) and the command line.
#pragma once

#include <memory>
#include <string>

namespace tilecast::bench {

struct ClockSample {
  bool valid = false;
  unsigned sm_mhz = 0;
  double power_w = 0;
  unsigned temperature_c = 0;
};

struct MachineInfo {
  bool has_gpu = false;
  std::string no_gpu_reason;
  int device = 0;
  std::string gpu_name, pci_bus_id;
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  long long l2_bytes = 0, memory_bytes = 0;
  std::string driver_version;           // the kernel driver, e.g. 580.65.06 ("unknown" without NVML/nvidia-smi)
  int cuda_driver_api = 0, cuda_runtime = 0;  // e.g. 13000
  std::string cublaslt_version;
  unsigned sm_clock_mhz = 0, max_sm_clock_mhz = 0, mem_clock_mhz = 0, max_mem_clock_mhz = 0;
  double power_limit_w = 0;
  unsigned temperature_c = 0;
  std::string clock_source = "none";    // nvml, nvidia-smi or none
  std::string date_utc, hostname, command_line, git_commit;

  std::string one_line() const;  // for the text output's header
};

// Reads what it can; never throws for a missing GPU, driver, NVML or nvidia-smi.
MachineInfo probe_machine(int argc, char** argv, int device = 0);

// Clock, power and temperature of the GPU now (NVML only; invalid without it). Cheap enough to
// call while a timed loop runs.
class ClockProbe {
 public:
  explicit ClockProbe(const MachineInfo& m);
  ~ClockProbe();
  ClockSample sample() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string utc_now();
std::string quote_command_line(int argc, char** argv);

}  // namespace tilecast::bench
