#include "roofline.hpp"

#include "tilecast/plan/device_facts.hpp"

namespace tilecast::bench {

Peaks peaks_of(const plan::DeviceFacts& f) {
  Peaks p;
  p.tflops = f.peak_bf16_tflops;
  p.tb_per_s = f.hbm_tb_per_s;
  p.source = "DeviceFacts of " + f.name;
  return p;
}

Peaks default_peaks() { return peaks_of(plan::DeviceFacts::h200_model()); }

Roofline roofline_of(const BenchProblem& p, const Peaks& peaks) {
  Roofline r;
  r.compute_us = p.flops() / (peaks.tflops * 1e12) * 1e6;
  r.memory_us = p.bytes() / (peaks.tb_per_s * 1e12) * 1e6;
  return r;
}

}  // namespace tilecast::bench
