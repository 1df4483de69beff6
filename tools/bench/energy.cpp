#include "energy.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include <cuda_runtime.h>

#include "nvml.hpp"
#include "tilecast_test/cuda_check.hpp"

namespace tilecast::bench {
namespace {

// The sampler's period: NVML's clock and power readings cost tens of microseconds, and the
// driver refreshes the energy counter every few to few tens of milliseconds.
constexpr int kSamplePeriodMs = 10;

using Clock = std::chrono::steady_clock;

}  // namespace

struct EnergyMeter::Impl {
  Nvml nvml;
  std::string why;

  void open(const std::string& pci) {
    why = nvml.open(pci);
    if (!why.empty()) return;
    unsigned long long mj = 0;
    if (!nvml.energy || !nvml.clock || !nvml.power)
      why = "NVML lacks nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceGetClockInfo or nvmlDeviceGetPowerUsage";
    else if (nvml.energy(nvml.dev, &mj) != kNvmlSuccess)
      why = "this GPU has no NVML energy counter";
    if (!why.empty()) nvml.close();
  }
};

EnergyMeter::EnergyMeter(const std::string& pci_bus_id) : impl_(std::make_unique<Impl>()) { impl_->open(pci_bus_id); }

EnergyMeter::~EnergyMeter() { impl_->nvml.close(); }

bool EnergyMeter::available() const { return impl_->nvml.lib != nullptr; }
std::string EnergyMeter::why_unavailable() const { return impl_->why; }

bool EnergyMeter::energy_mj(unsigned long long& mj) const {
  const Nvml& n = impl_->nvml;
  return n.lib && n.energy(n.dev, &mj) == kNvmlSuccess;
}

bool EnergyMeter::sm_mhz(unsigned& mhz) const {
  const Nvml& n = impl_->nvml;
  return n.lib && n.clock(n.dev, kNvmlClockSm, &mhz) == kNvmlSuccess;
}

bool EnergyMeter::power_w(double& w) const {
  const Nvml& n = impl_->nvml;
  unsigned mw = 0;
  if (!n.lib || n.power(n.dev, &mw) != kNvmlSuccess) return false;
  w = mw / 1000.0;
  return true;
}

int64_t gemms_for(double seconds, double est_us, int64_t max_gemms) {
  if (!(est_us > 0) || !(seconds > 0)) return 1;
  const double n = std::ceil(seconds * 1e6 / est_us);
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(n, 9e18)), 1, std::max<int64_t>(max_gemms, 1));
}

namespace {

// What the two host callbacks record: the counter and the host time when the stream reached
// them. The sampler thread reads `inside` to know when it is in the window.
struct Window {
  const EnergyMeter* meter = nullptr;
  unsigned long long mj_begin = 0, mj_end = 0;
  bool ok_begin = false, ok_end = false;
  Clock::time_point t_begin, t_end;
  std::atomic<int> inside{0};  // 0 before, 1 inside, 2 after
};

void CUDART_CB window_begins(void* p) {
  auto* w = static_cast<Window*>(p);
  w->ok_begin = w->meter->energy_mj(w->mj_begin);
  w->t_begin = Clock::now();
  w->inside.store(1, std::memory_order_release);
}

void CUDART_CB window_ends(void* p) {
  auto* w = static_cast<Window*>(p);
  w->ok_end = w->meter->energy_mj(w->mj_end);
  w->t_end = Clock::now();
  w->inside.store(2, std::memory_order_release);
}

struct Samples {
  int n = 0, clock_n = 0, power_n = 0;
  double clock_sum = 0, clock_min = 0, clock_max = 0, power_sum = 0;
  int counter_updates = 0;
  unsigned long long last_mj = 0;
  bool have_last = false;
};

void sample_until_done(const EnergyMeter& meter, const Window& w, const std::atomic<bool>& stop, Samples& s) {
  while (!stop.load(std::memory_order_acquire)) {
    if (w.inside.load(std::memory_order_acquire) == 1) {
      ++s.n;
      unsigned mhz = 0;
      if (meter.sm_mhz(mhz)) {
        s.clock_min = s.clock_n ? std::min<double>(s.clock_min, mhz) : mhz;
        s.clock_max = s.clock_n ? std::max<double>(s.clock_max, mhz) : mhz;
        s.clock_sum += mhz;
        ++s.clock_n;
      }
      double watts = 0;
      if (meter.power_w(watts)) {
        s.power_sum += watts;
        ++s.power_n;
      }
      unsigned long long mj = 0;
      if (meter.energy_mj(mj)) {
        if (s.have_last && mj != s.last_mj) ++s.counter_updates;
        s.last_mj = mj;
        s.have_last = true;
      }
    } else if (w.inside.load(std::memory_order_acquire) == 2) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kSamplePeriodMs));
  }
}

}  // namespace

EnergyResult measure_energy(const Enqueue& fn, cudaStream_t stream, const EnergyMeter& meter, const EnergyLoop& loop) {
  EnergyResult r;
  if (!meter.available()) {
    r.why_not = "no NVML energy counter: " + meter.why_unavailable();
    return r;
  }
  const int64_t warm = gemms_for(loop.warm_s, loop.est_us, loop.max_gemms);
  const int64_t gemms = gemms_for(loop.seconds, loop.est_us, loop.max_gemms);

  cudaEvent_t begin = nullptr, end = nullptr;
  TC_CUDA_CHECK(cudaEventCreate(&begin));
  TC_CUDA_CHECK(cudaEventCreate(&end));
  Window w;
  w.meter = &meter;
  std::atomic<bool> stop{false};
  Samples s;
  std::thread sampler(sample_until_done, std::cref(meter), std::cref(w), std::cref(stop), std::ref(s));
  auto finish = [&] {
    stop.store(true, std::memory_order_release);
    sampler.join();
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  };
  try {
    TC_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int64_t i = 0; i < warm; ++i) fn(stream);
    TC_CUDA_CHECK(cudaLaunchHostFunc(stream, window_begins, &w));
    TC_CUDA_CHECK(cudaEventRecord(begin, stream));
    for (int64_t i = 0; i < gemms; ++i) fn(stream);
    TC_CUDA_CHECK(cudaEventRecord(end, stream));
    TC_CUDA_CHECK(cudaLaunchHostFunc(stream, window_ends, &w));
    TC_CUDA_CHECK(cudaStreamSynchronize(stream));
    TC_CUDA_CHECK(cudaGetLastError());
  } catch (...) {
    // The callbacks hold &w: the stream must be done with them before w goes.
    cudaStreamSynchronize(stream);
    finish();
    throw;
  }
  float ms = 0;
  const cudaError_t timed = cudaEventElapsedTime(&ms, begin, end);
  finish();
  TC_CUDA_CHECK(timed);

  r.gemms = gemms;
  r.gpu_us_per_gemm = ms * 1e3 / static_cast<double>(gemms);
  r.window_s = std::chrono::duration<double>(w.t_end - w.t_begin).count();
  r.samples = s.n;
  if (s.clock_n) {
    r.mean_sm_mhz = s.clock_sum / s.clock_n;
    r.min_sm_mhz = s.clock_min;
    r.max_sm_mhz = s.clock_max;
  }
  if (s.power_n) r.mean_power_w = s.power_sum / s.power_n;
  r.counter_updates = s.counter_updates;
  r.counter_period_ms = s.counter_updates ? r.window_s * 1e3 / s.counter_updates : 0;
  if (!w.ok_begin || !w.ok_end || w.mj_end < w.mj_begin || r.window_s <= 0) {
    r.why_not = "the energy counter could not be read at both ends of the window";
    return r;
  }
  r.joules = static_cast<double>(w.mj_end - w.mj_begin) / 1e3;
  r.mj_per_gemm = static_cast<double>(w.mj_end - w.mj_begin) / static_cast<double>(gemms);
  r.avg_w = r.joules / r.window_s;
  r.valid = true;
  return r;
}

}  // namespace tilecast::bench
