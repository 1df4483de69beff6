#include "api/warm.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "api/gemm_source.hpp"
#include "api/split_k.hpp"
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

std::vector<OtherKernel> other_kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts) {
  std::vector<OtherKernel> out;
  for (const WarmItem& item : items) {
    const plan::GemmPlan p = plan::plan_gemm(item.desc, facts, item.config);
    if (!p.launches_reduce_kernel()) continue;
    jit::KernelSpec source = split_k_reduce_source(p.desc);
    const auto same = [&](const OtherKernel& k) { return k.source.name_expression == source.name_expression; };
    if (std::find_if(out.begin(), out.end(), same) != out.end()) continue;
    const plan::GemmDesc& d = p.desc;
    out.push_back({std::string("split-K reduce ") + (d.out == DType::kFP32 ? "fp32" : "bf16") + (d.has_c ? " +C" : "") +
                       (d.has_bias ? (d.bias_type == DType::kFP32 ? " +bias fp32" : " +bias bf16") : ""),
                   std::move(source), kReduceThreads});
  }
  return out;
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
                                         const std::function<void(size_t, size_t)>& progress,
                                         std::span<const OtherKernel> others) {
  const size_t total = specs.size() + others.size();
  std::vector<WarmedKernel> out(total);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mutex;
  std::string first_error;
  // Kernel i: a GEMM kernel's spec, then the others.
  const auto name = [&](size_t i) { return i < specs.size() ? describe_kernel(specs[i]) : others[i - specs.size()].name; };
  auto worker = [&] {
    for (size_t i = next++; i < total; i = next++) {
      try {
        const bool gemm = i < specs.size();
        const jit::BuildResult built =
            jit::Runtime::instance().build(gemm ? gemm_kernel_source(specs[i]) : others[i - specs.size()].source);
        const jit::ResourceReport& r = built.kernel.report;
        out[i] = {name(i),
                  built.disk_hit,
                  built.compile_seconds,
                  r.found,
                  static_cast<uint32_t>(r.registers),
                  static_cast<uint32_t>(r.spill_store_bytes + r.spill_load_bytes),
                  static_cast<uint32_t>(r.stack_frame_bytes),
                  gemm ? gemm_geometry(specs[i]).threads : others[i - specs.size()].threads,
                  built.kernel.log.find("wgmma.mma_async instructions are serialized") != std::string::npos};
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        if (first_error.empty()) first_error = name(i) + ": " + e.what();
      }
      std::lock_guard lock(mutex);
      ++done;
      if (progress) progress(done, total);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!first_error.empty()) throw Error("JIT warm-up: " + first_error);
  return out;
}

}  // namespace tilecast::api
