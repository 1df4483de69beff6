// Energy per GEMM under a sustained load: NVML's total-energy counter (millijoules since the
// driver loaded) read at the two ends of a long back-to-back loop, with SM clock and power sampled
// in between. Under the H200's 700 W cap the clock settles within about a second of steady work,
// so a loop of a few seconds measures the regime the cap sets rather than the first boost.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "timing.hpp"

namespace tilecast::bench {

struct EnergyResult {
  bool valid = false;
  std::string why_not;         // when !valid
  int64_t gemms = 0;           // back-to-back calls inside the window
  double window_s = 0;         // host time between the two counter reads
  double gpu_us_per_gemm = 0;  // CUDA events around the measured calls, / gemms
  double joules = 0;           // counter difference over the window
  double mj_per_gemm = 0;
  double avg_w = 0;  // joules / window_s
  // Sampled every kSamplePeriodMs inside the window.
  int samples = 0;
  double mean_sm_mhz = 0, min_sm_mhz = 0, max_sm_mhz = 0;
  double mean_power_w = 0;  // NVML's power reading (a moving average the driver keeps)
  // How often the energy counter moved while it was sampled: the resolution of the two end reads.
  int counter_updates = 0;
  double counter_period_ms = 0;
};

// NVML's energy, clock and power readings for one GPU (opened with dlopen, as machine_info.cpp
// opens it). Without NVML or without an energy counter (pre-Volta), available() is false.
class EnergyMeter {
 public:
  explicit EnergyMeter(const std::string& pci_bus_id);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  bool available() const;
  std::string why_unavailable() const;
  // Each false when the reading failed.
  bool energy_mj(unsigned long long& mj) const;
  bool sm_mhz(unsigned& mhz) const;
  bool power_w(double& w) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct EnergyLoop {
  double warm_s = 0.5;          // back-to-back calls first, unmeasured, so the clocks settle at the cap
  double seconds = 2.0;         // the measured window (>= 2 s: many counter updates, the cap binding)
  double est_us = 0;            // one call's expected time (the flushed median), which sizes both loops
  int64_t max_gemms = 2000000;  // a bound on enqueued calls, whatever est_us says
};

// Runs fn back to back (no flush: a GEMM after a GEMM, as in a model) for loop.warm_s, then for
// loop.seconds between two energy reads made by host callbacks on the stream, so that the window
// is exactly the measured calls. Throws on CUDA errors.
EnergyResult measure_energy(const Enqueue& fn, cudaStream_t stream, const EnergyMeter& meter, const EnergyLoop& loop);

// The calls a window of `seconds` needs at est_us each (at least one, at most max_gemms).
int64_t gemms_for(double seconds, double est_us, int64_t max_gemms);

}  // namespace tilecast::bench
