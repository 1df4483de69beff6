#include "api/warm.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "api/gemm_kernel.hpp"
#include "jit/runtime.hpp"

namespace tilecast::api {

std::vector<WarmedKernel> warm_jit_cache(std::span<const WarmItem> items, unsigned threads,
                                         const plan::DeviceFacts& facts) {
  std::map<std::string, jit::KernelSpec> specs;  // by name expression: one build each
  for (const WarmItem& item : items)
    for (jit::KernelSpec& spec : gemm_kernel_specs(item.shape, item.config, facts))
      specs.emplace(spec.name_expression, std::move(spec));
  std::vector<const jit::KernelSpec*> todo;
  for (const auto& [name, spec] : specs) todo.push_back(&spec);

  std::vector<WarmedKernel> out(todo.size());
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  std::string first_error;
  auto worker = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      try {
        const jit::BuildResult built = jit::Runtime::instance().build(*todo[i]);
        const jit::ResourceReport& r = built.kernel.report;
        out[i] = {todo[i]->name_expression, built.disk_hit, built.compile_seconds, r.found,
                  static_cast<uint32_t>(r.registers), static_cast<uint32_t>(r.spill_store_bytes + r.spill_load_bytes),
                  static_cast<uint32_t>(r.stack_frame_bytes)};
      } catch (const std::exception& e) {
        std::lock_guard lock(error_mutex);
        if (first_error.empty()) first_error = todo[i]->name_expression + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (!first_error.empty()) throw Error("JIT warm-up: " + first_error);
  return out;
}

}  // namespace tilecast::api
