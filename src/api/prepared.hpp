// A plan and the kernels it launches, prepared once per (device, problem, overrides) and kept in
// a bounded cache: the step between planning (pure, src/plan) and a launch (gemm.cpp).
#pragma once

#include <memory>

#include "api/device_state.hpp"
#include "jit/kernel.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::api {

struct PreparedGemm {
  plan::GemmPlan plan;
  GemmGeometry geometry;                   // of the main kernel; the companion's is the same
  const jit::Kernel* main = nullptr;
  const jit::Kernel* companion = nullptr;  // null without a companion launch
  const jit::Kernel* reduce = nullptr;     // split-K: the reduce kernel; null without a split or with a fused one
  DeviceState* device = nullptr;
};

// The prepared plan of `desc` under `config` on the current device: from the cache, or planned,
// compiled (or loaded from the JIT's caches) and loaded now. With `capturing` (the caller's
// stream is capturing a CUDA graph) a miss is refused with an Error naming tilecast::prepare,
// since compiling and loading must not happen inside a capture.
std::shared_ptr<const PreparedGemm> prepared_gemm(const plan::GemmDesc& desc, const GemmConfig& config,
                                                  bool capturing);

// Plans held at most; the least recently used one goes first (a caller whose M varies from call
// to call, as MoE layers do, would otherwise grow the cache without bound).
inline constexpr size_t kPlanCacheCapacity = 512;

// Plans the cache holds now (tests).
size_t plan_cache_size();

}  // namespace tilecast::api
