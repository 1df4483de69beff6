#include "api/warm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "api/gemm_source.hpp"
#include "api/split_k.hpp"
#include "jit/runtime.hpp"

namespace tilecast::api {

namespace {

// The reduce kernel of a split plan that sums its slices through one, described.
WarmKernel reduce_kernel(const plan::GemmDesc& d) {
  return {std::string("split-K reduce ") + (d.out == DType::kFP32 ? "fp32" : "bf16") + (d.has_c ? " +C" : "") +
              (d.has_bias ? (d.bias_type == DType::kFP32 ? " +bias fp32" : " +bias bf16") : ""),
          split_k_reduce_source(d), kReduceThreads};
}

}  // namespace

std::vector<GemmKernelSpec> kernels_to_warm(std::span<const WarmItem> items, const plan::DeviceFacts& facts,
                                            std::vector<WarmKernel>* others) {
  std::vector<GemmKernelSpec> specs;
  const auto add = [&](const GemmKernelSpec& s) {
    if (std::find(specs.begin(), specs.end(), s) == specs.end()) specs.push_back(s);
  };
  for (const WarmItem& item : items) {
    const plan::GemmPlan p = plan::plan_gemm(item.desc, facts, item.config);
    add(p.main.kernel);
    if (p.companion) add(p.companion->kernel);
    if (!others || !p.launches_reduce_kernel()) continue;
    WarmKernel reduce = reduce_kernel(p.desc);
    const auto same = [&](const WarmKernel& k) { return k.source.name_expression == reduce.source.name_expression; };
    if (std::find_if(others->begin(), others->end(), same) == others->end()) others->push_back(std::move(reduce));
  }
  return specs;
}

void progress_on_stderr(size_t done, size_t total) {
  std::fprintf(stderr, "\r[%zu/%zu kernels]", done, total);
  if (done == total) std::fputc('\n', stderr);
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
                                         std::span<const WarmKernel> others) {
  const size_t total = specs.size() + others.size();
  std::vector<WarmedKernel> out(total);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mutex;
  std::string first_error;
  // Kernel i: a GEMM kernel's spec, then the others, each as (name, source, threads).
  const auto kernel = [&](size_t i) {
    if (i < specs.size()) return WarmKernel{describe_kernel(specs[i]), gemm_kernel_source(specs[i]),
                                            gemm_geometry(specs[i]).threads};
    return others[i - specs.size()];
  };
  auto worker = [&] {
    for (size_t i = next++; i < total; i = next++) {
      std::string name;
      try {
        const WarmKernel k = kernel(i);
        name = k.name;
        const jit::BuildResult built = jit::Runtime::instance().build(k.source);
        const jit::ResourceReport& r = built.kernel.report;
        out[i] = {k.name,
                  built.disk_hit,
                  built.compile_seconds,
                  r.found,
                  static_cast<uint32_t>(r.registers),
                  static_cast<uint32_t>(r.spill_store_bytes + r.spill_load_bytes),
                  static_cast<uint32_t>(r.stack_frame_bytes),
                  k.threads,
                  built.kernel.log.find("wgmma.mma_async instructions are serialized") != std::string::npos};
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        if (first_error.empty()) first_error = (name.empty() ? "kernel " + std::to_string(i) : name) + ": " + e.what();
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
