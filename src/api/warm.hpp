// Filling the JIT cache ahead of time: compile, in parallel, every kernel a list of GEMMs will
// launch. Needs no GPU, so a CPU machine can fill a cache folder that a GPU machine then uses
// (the keys hold no paths).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "jit/compiler.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {

struct WarmItem {
  plan::GemmDesc desc;
  GemmConfig config;
};

struct WarmedKernel {
  std::string name;       // the kernel's spec, as GemmPlan::describe-style text
  bool from_cache = false;
  double compile_seconds = 0;
  bool report_found = false;  // false: the driver's compute cache answered NVRTC, ptxas did not run
  uint32_t registers = 0;
  uint32_t spill_bytes = 0;  // spill stores + loads
  uint32_t stack_bytes = 0;
  uint32_t threads = 0;      // of the kernel's geometry
  // ptxas serialised the kernel's wgmma (any function call in the kernel does it: a printf, a
  // trap helper that was not inlined). Known only when NVRTC ran here, not from the disk cache.
  bool wgmma_serialized = false;
};

// A kernel to build: a GEMM kernel's spec as its name, source and threads, or a kernel that is
// not one (the split-K reduce kernel some plans launch behind theirs).
struct WarmKernel {
  std::string name;  // "split-K reduce bf16 +C"
  jit::KernelSpec source;
  uint32_t threads = 0;
};

// The distinct kernel specs the items' plans launch on a device with these facts; with `others`,
// also the distinct reduce kernels those plans launch behind theirs (one per epilogue that a split
// plan sums through the reduce kernel), from the same plans.
std::vector<GemmKernelSpec> kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts,
                                            std::vector<WarmKernel>* others = nullptr);

// One line per kernel spec: "128x256 st4 c2x1 bf16 +C normal static".
std::string describe_kernel(const GemmKernelSpec& spec);

// A progress callback for warm_jit_cache: "[done/total kernels]" over itself on stderr, a newline
// at the end.
void progress_on_stderr(size_t done, size_t total);

// Builds `specs`, then `others`, with `threads` threads into the process's JIT disk cache.
// `progress`, if given, is called after each kernel (done, total) from the worker threads, one at
// a time.
std::vector<WarmedKernel> warm_jit_cache(std::span<const GemmKernelSpec> specs, unsigned threads,
                                         const std::function<void(size_t, size_t)>& progress = {},
                                         std::span<const WarmKernel> others = {});

}  // namespace tilecast::api
