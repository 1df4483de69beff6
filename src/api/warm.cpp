#include "api/warm.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "api/gemm_source.hpp"
#include "jit/runtime.hpp"

namespace tilecast::api {

std::vector<GemmKernelSpec> kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts) {
  std::vector<GemmKernelSpec> specs;
  const auto add = [&](const GemmKernelSpec& s) {
    if (std::find(specs.begin(), specs.end(), s) == specs.end()) specs.push_back(s);
  };
  for (const WarmItem& item : items) {
    const plan::GemmPlan p = plan::plan_gemm(item.desc, facts, item.config);
    add(p.main.kernel);
    if (p.companion) add(p.companion->kernel);
  }
  return specs;
}

std::string describe_kernel(const GemmKernelSpec& s) {
  static const char* const kTypes[] = {"normal", "batched", "m-grouped", "masked", "k-grouped"};
  const uint32_t type = static_cast<uint32_t>(s.type);
  return std::to_string(s.block_m) + "x" + std::to_string(s.block_n) + " st" + std::to_string(s.stages) + " c" +
         std::to_string(s.cluster.m) + "x" + std::to_string(s.cluster.n) + (s.out == DType::kFP32 ? " fp32" : " bf16") +
         (s.has_c ? " +C" : "") + (s.has_bias ? (s.bias_type == DType::kFP32 ? " +bias fp32" : " +bias bf16") : "") + " " +
         (type < 5 ? kTypes[type] : "?") +
         (s.type == GemmType::kMGroupedContiguous
              ? (s.contiguous_layout == ContiguousLayout::kOffsets ? " offsets" : " row-index")
              : "") +
         (s.dynamic_units ? " dynamic" : " static") + (s.split_k ? (s.fused_reduce ? " split-K fused"
                                 : s.k_cluster > 1 ? " split-K in cluster of " + std::to_string(s.k_cluster)
                                                   : std::string(" split-K"))
                   : "") +
         (s.layout != GemmLayout::kNT ? std::string(" ") + layout_name(s.layout) : std::string()) +
         (s.swap_ab ? " swap-AB" : "");
}

std::vector<WarmedKernel> warm_jit_cache(std::span<const GemmKernelSpec> specs, unsigned threads,
                                         const std::function<void(size_t, size_t)>& progress) {
  std::vector<WarmedKernel> out(specs.size());
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mutex;
  std::string first_error;
  auto worker = [&] {
    for (size_t i = next++; i < specs.size(); i = next++) {
      try {
        const jit::BuildResult built = jit::Runtime::instance().build(gemm_kernel_source(specs[i]));
        const jit::ResourceReport& r = built.kernel.report;
        out[i] = {describe_kernel(specs[i]),
                  built.disk_hit,
                  built.compile_seconds,
                  r.found,
                  static_cast<uint32_t>(r.registers),
                  static_cast<uint32_t>(r.spill_store_bytes + r.spill_load_bytes),
                  static_cast<uint32_t>(r.stack_frame_bytes),
                  gemm_geometry(specs[i]).threads,
                  built.kernel.log.find("wgmma.mma_async instructions are serialized") != std::string::npos};
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        if (first_error.empty()) first_error = describe_kernel(specs[i]) + ": " + e.what();
      }
      std::lock_guard lock(mutex);
      ++done;
      if (progress) progress(done, specs.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!first_error.empty()) throw Error("JIT warm-up: " + first_error);
  return out;
}

}  // namespace tilecast::api
