// From a planned config to the JIT kernels and grid sizes of a GEMM launch.
#pragma once

#include <vector>

#include "api/device_state.hpp"
#include "jit/kernel.hpp"
#include "jit/kernel_source.hpp"
#include "tilecast/plan/heuristic.hpp"

namespace tilecast::api {

struct GemmLaunchPlan {
  plan::KernelConfig config;
  const jit::Kernel* main = nullptr;
  uint32_t main_clusters = 0;
  const jit::Kernel* companion = nullptr;  // null without a companion launch
  uint32_t companion_clusters = 0;
};

// The kernel source for a config: one GemmSm90Config instantiation with labelled arguments.
jit::KernelSpec gemm_kernel_spec(const plan::KernelConfig& kc, const ClusterShape& cluster, const plan::GemmShape& s,
                                 bool dynamic_units);

// Every kernel a GEMM of this shape and these overrides can launch on a device with these facts
// (the main kernel, or the dynamic main and companion kernels). Needs no GPU: the JIT cache can
// be filled ahead of a GPU run.
std::vector<jit::KernelSpec> gemm_kernel_specs(const plan::GemmShape& s, const GemmConfig& o,
                                               const plan::DeviceFacts& facts);

// Plans, compiles (or loads from the caches) and sizes the grids from the real kernels' occupancy.
GemmLaunchPlan make_launch_plan(const plan::GemmShape& s, const GemmConfig& o, DeviceState& dev);

}  // namespace tilecast::api
