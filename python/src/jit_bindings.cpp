// JIT warm-up (api/warm.hpp: the kernels a list of GEMMs will launch, compiled in parallel into the
// disk cache), the plan text tilecast-plan prints, and the cache folder in use.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>
#include <vector>

#include "api/device_state.hpp"
#include "api/gemm_source.hpp"
#include "api/warm.hpp"
#include "bindings.hpp"
#include "jit/runtime.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::python {
namespace nb = nanobind;
namespace {

// (m, n, k, batch, out dtype "bfloat16"/"float32", with C, config): one GEMM to warm.
using Problem = std::tuple<int64_t, int64_t, int64_t, int64_t, std::string, bool, GemmConfig>;

plan::GemmDesc desc_of(int64_t m, int64_t n, int64_t k, int64_t batch, const std::string& out, bool with_c) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || m >= (int64_t{1} << 31) || n >= (int64_t{1} << 31) ||
      k >= (int64_t{1} << 31) || batch >= (int64_t{1} << 31))
    throw nb::value_error(("tilecast: a problem needs 1 <= m, n, k, batch < 2^31, got m=" + std::to_string(m) +
                           " n=" + std::to_string(n) + " k=" + std::to_string(k) + " batch=" + std::to_string(batch))
                              .c_str());
  return plan::dense_desc(m, n, k, batch, out == "float32" ? DType::kFP32 : DType::kBF16, with_c);
}

nb::dict to_dict(const api::WarmedKernel& k) {
  nb::dict d;
  d["name"] = k.name;
  d["from_cache"] = k.from_cache;
  d["compile_seconds"] = k.compile_seconds;
  d["report_found"] = k.report_found;
  d["registers"] = k.registers;
  d["spill_bytes"] = k.spill_bytes;
  d["stack_bytes"] = k.stack_bytes;
  d["threads"] = k.threads;
  return d;
}

std::vector<api::WarmItem> warm_items(const std::vector<Problem>& problems) {
  std::vector<api::WarmItem> items;
  for (const auto& [m, n, k, batch, out, with_c, config] : problems)
    items.push_back({desc_of(m, n, k, batch, out, with_c), config});
  return items;
}

nb::list warm(const std::vector<Problem>& problems, unsigned threads, const std::string& device,
              const std::function<void(size_t, size_t)>& progress) {
  const std::vector<api::WarmItem> items = warm_items(problems);
  const plan::DeviceFacts facts = device_facts(device);
  std::vector<api::WarmedKernel> kernels;
  {
    nb::gil_scoped_release unlocked;
    // progress is a Python callable: each call takes the GIL (warm_jit_cache makes them one at a time).
    kernels = api::warm_jit_cache(api::kernels_to_warm(items, facts), threads, [&](size_t done, size_t total) {
      if (!progress) return;
      nb::gil_scoped_acquire locked;
      progress(done, total);
    });
  }
  nb::list out;
  for (const api::WarmedKernel& k : kernels) out.append(to_dict(k));
  return out;
}

// The distinct kernels of `problems` as (name, generated source, name expression, threads): what a
// worker process compiles without planning (so without touching the GPU) in warm(processes=).
nb::list kernel_sources(const std::vector<Problem>& problems, const std::string& device) {
  nb::list out;
  for (const GemmKernelSpec& s : api::kernels_to_warm(warm_items(problems), device_facts(device))) {
    const jit::KernelSpec k = api::gemm_kernel_source(s);
    out.append(nb::make_tuple(api::describe_kernel(s), k.source, k.name_expression, gemm_geometry(s).threads));
  }
  return out;
}

// Compiles one kernel_sources() entry into the JIT disk cache (or finds it there).
nb::dict build_source(const std::string& name, const std::string& source, const std::string& name_expression,
                      uint32_t threads) {
  jit::BuildResult built;
  {
    nb::gil_scoped_release unlocked;
    built = jit::Runtime::instance().build(jit::KernelSpec{source, name_expression, {}});
  }
  const jit::ResourceReport& r = built.kernel.report;
  return to_dict({name, built.disk_hit, built.compile_seconds, r.found, static_cast<uint32_t>(r.registers),
                  static_cast<uint32_t>(r.spill_store_bytes + r.spill_load_bytes),
                  static_cast<uint32_t>(r.stack_frame_bytes), threads});
}

std::string plan_text(int64_t m, int64_t n, int64_t k, int64_t batch, const std::string& out, bool with_c,
                      const GemmConfig& config, size_t top, const std::string& device) {
  const plan::DeviceFacts facts = device_facts(device);
  const plan::GemmDesc desc = desc_of(m, n, k, batch, out, with_c);
  // The same header line as tilecast-plan's.
  const std::string head = "problem " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                           " batch " + std::to_string(batch) + ", out " + (out == "float32" ? "fp32" : "bf16") +
                           (with_c ? " +C" : "") + ", config '" + format_config(config) + "', device " + facts.name +
                           " (" + std::to_string(facts.num_sms) + " SMs)\n";
  return head + plan::format_plans(plan::rank_plans(desc, facts, config), top);
}

}  // namespace

plan::DeviceFacts device_facts(const std::string& device) {
  if (device == "h200") return plan::DeviceFacts::h200_model();
  if (device != "auto") throw Error("device must be 'auto' or 'h200', not '" + device + "'");
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return plan::DeviceFacts::h200_model();
  }
  return api::DeviceState::current().facts();
}

void bind_jit(nb::module_& m) {
  using namespace nb::literals;
  m.def("warm", &warm, "problems"_a, "threads"_a, "device"_a, "progress"_a.none(),
        "Compiles the kernels of `problems` into the JIT disk cache with `threads` threads. Use tilecast.warm.");
  m.def("kernel_sources", &kernel_sources, "problems"_a, "device"_a,
        "The distinct kernels of `problems`: (name, generated source, name expression, threads).");
  m.def("build_source", &build_source, "name"_a, "source"_a, "name_expression"_a, "threads"_a,
        "Compiles one kernel_sources() entry into the JIT disk cache; the same dict as warm's entries.");
  m.def("plan", &plan_text, "m"_a, "n"_a, "k"_a, "batch"_a, "out_dtype"_a, "with_c"_a, "config"_a, "top"_a,
        "device"_a, "The chosen plan and the ranked alternatives, as tilecast-plan prints them. Use tilecast.plan.");
  m.def(
      "jit_cache_dir", [] { return jit::Runtime::instance().disk_cache().dir().string(); },
      "The JIT's disk cache folder in this process ('' when there is none); fixed when first used.");
}

}  // namespace tilecast::python
