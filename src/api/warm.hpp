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

// The distinct kernel specs the items' plans launch on a device with these facts.
std::vector<GemmKernelSpec> kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts);

// A kernel that is not a GEMM kernel: the split-K reduce kernel some plans launch behind theirs.
struct OtherKernel {
  std::string name;  // "split-K reduce bf16 +C"
  jit::KernelSpec source;
  uint32_t threads = 0;
};
// The distinct reduce kernels the items' plans launch (one per epilogue that a split plan sums
// through the reduce kernel).
std::vector<OtherKernel> other_kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts);

// One line per kernel spec: "128x256 st4 c2x1 bf16 +C normal static".
std::string describe_kernel(const GemmKernelSpec& spec);

// Builds `specs`, then `others`, with `threads` threads into the process's JIT disk cache.
// `progress`, if given, is called after each kernel (done, total) from the worker threads, one at
// a time.
std::vector<WarmedKernel> warm_jit_cache(std::span<const GemmKernelSpec> specs, unsigned threads,
                                         const std::function<void(size_t, size_t)>& progress = {},
                                         std::span<const OtherKernel> others = {});

}  // namespace tilecast::api
