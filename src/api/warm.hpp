// Filling the JIT cache ahead of time: compile, in parallel, every kernel a list of GEMMs will
// launch. Needs no GPU, so a CPU machine can fill a cache folder that a GPU machine then uses
// (the keys hold no paths).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tilecast/gemm.hpp"
#include "tilecast/plan/heuristic.hpp"

namespace tilecast::api {

struct WarmItem {
  plan::GemmShape shape;
  GemmConfig config;
};

struct WarmedKernel {
  std::string name;       // the kernel's name expression
  bool from_cache = false;
  double compile_seconds = 0;
  bool report_found = false;  // false: the driver's compute cache answered NVRTC, ptxas did not run
  uint32_t registers = 0;
  uint32_t spill_bytes = 0;  // spill stores + loads
  uint32_t stack_bytes = 0;
};

// Distinct kernels of `items`, built with `threads` threads into the process's JIT disk cache.
std::vector<WarmedKernel> warm_jit_cache(std::span<const WarmItem> items, unsigned threads,
                                         const plan::DeviceFacts& facts = plan::DeviceFacts::h200_model());

}  // namespace tilecast::api
