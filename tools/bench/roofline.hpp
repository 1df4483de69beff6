// The roofline a row is measured against: time = max(FLOPs / peak, bytes / HBM bandwidth), with
// bytes = A + B + D (+ C) moved once. Peaks from tilecast::plan::DeviceFacts (the device's own
// where a GPU runs the rows; the H200 model, 989 TFLOPS dense BF16 and 4.2 TB/s measured copy,
// where none does) unless overridden on the command line.
#pragma once

#include <string>

#include "suites.hpp"
#include "tilecast/plan/device_facts.hpp"

namespace tilecast::bench {

struct Peaks {
  double tflops = 989.0;
  double tb_per_s = 4.2;
  std::string source = "built-in H200 figures";
};

Peaks peaks_of(const plan::DeviceFacts& f);
Peaks default_peaks();  // the H200 model's

struct Roofline {
  double compute_us = 0, memory_us = 0;
  double time_us() const { return compute_us > memory_us ? compute_us : memory_us; }
  const char* bound() const { return compute_us >= memory_us ? "compute" : "memory"; }
};

Roofline roofline_of(const BenchProblem& p, const Peaks& peaks);

}  // namespace tilecast::bench
