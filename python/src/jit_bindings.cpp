// JIT warm-up (api/warm.hpp: the kernels a list of GEMMs will launch, compiled in parallel into the
// disk cache), the plan text tilecast-plan prints, and the cache folder in use.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <exception>
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

// One GEMM to warm or plan: (kind, m, n, k, count, out dtype "bfloat16"/"float32", with C, bias dtype
// ("" for none), expected_m, layout, config). kind is the Python function's name:
//   gemm_nt: m x n x k, count = batch, with C and a bias as given;
//   m_grouped_bf16_gemm_nt_contiguous: m = rows of A, count = experts, layout row_index/offsets;
//   m_grouped_bf16_gemm_nt_masked: m = max_m, count = experts, expected_m;
//   k_grouped_bf16_gemm_nt_contiguous: k = all groups' columns, count = groups, with C = accumulate.
using Problem = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, std::string, bool, std::string, int64_t,
                           std::string, GemmConfig>;

[[noreturn]] void bad_problem(const std::string& what) { throw nb::value_error(("tilecast: " + what).c_str()); }

plan::GemmDesc sized_desc(const Problem& p) {
  const auto& [kind, m, n, k, count, out, with_c, bias, expected_m, layout, config] = p;
  const bool dense = kind == "gemm_nt";
  const char* counted = dense ? "batch" : "num_groups";
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0 || m >= kLimit || n >= kLimit || k >= kLimit || count >= kLimit)
    bad_problem(std::string("a problem needs 1 <= m, n, k, ") + counted + " < 2^31, got m=" + std::to_string(m) +
                " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " + counted + "=" + std::to_string(count));
  const DType o = out == "float32" ? DType::kFP32 : DType::kBF16;
  if (dense) {
    plan::GemmDesc d = plan::dense_desc(m, n, k, count, o, with_c);
    if (!bias.empty()) {
      d.has_bias = true;
      d.bias_type = bias == "float32" ? DType::kFP32 : DType::kBF16;
    }
    return d;
  }
  if (!bias.empty()) bad_problem(kind + " takes no bias");
  if (kind == "k_grouped_bf16_gemm_nt_contiguous") return plan::kgrouped_desc(m, n, k, count, o, with_c);
  if (with_c) bad_problem(kind + " takes no C (with_c)");
  if (kind == "m_grouped_bf16_gemm_nt_contiguous") {
    if (layout != "row_index" && layout != "offsets")
      bad_problem("layout must be 'row_index' or 'offsets', got '" + layout + "'");
    return plan::mgrouped_contiguous_desc(layout == "offsets" ? ContiguousLayout::kOffsets : ContiguousLayout::kRowIndex,
                                          m, n, k, count, o);
  }
  if (kind == "m_grouped_bf16_gemm_nt_masked") {
    if (expected_m < 1 || expected_m > m)
      bad_problem("expected_m " + std::to_string(expected_m) + " is not in 1..max_m = " + std::to_string(m));
    return plan::mgrouped_masked_desc(m, n, k, count, expected_m, o);
  }
  bad_problem("unknown kind '" + kind + "': gemm_nt, m_grouped_bf16_gemm_nt_contiguous, "
              "m_grouped_bf16_gemm_nt_masked or k_grouped_bf16_gemm_nt_contiguous");
}

// What the planner is told: the sizes, and rows of A and B as contiguous tensors (or the least TMA
// takes) store them, so that what is warmed here is what a call with such tensors plans.
plan::GemmDesc desc_of(const Problem& p) {
  plan::GemmDesc d = sized_desc(p);
  plan::assume_padded_rows(d);
  return d;
}

// The problem as one line: "problem 4096x576x7168 batch 1, out bf16 +C" for gemm_nt (tilecast-plan's),
// "problem m_grouped_bf16_gemm_nt_masked 256x4096x7168 num_groups 8 expected_m 32, out bf16" for the others.
std::string problem_text(const Problem& p) {
  const auto& [kind, m, n, k, count, out, with_c, bias, expected_m, layout, config] = p;
  const bool dense = kind == "gemm_nt";
  std::string s = std::string("problem ") + (dense ? "" : kind + " ") + std::to_string(m) + "x" + std::to_string(n) +
                  "x" + std::to_string(k) + (dense ? " batch " : " num_groups ") + std::to_string(count);
  if (kind == "m_grouped_bf16_gemm_nt_contiguous") s += " layout " + layout;
  if (kind == "m_grouped_bf16_gemm_nt_masked") s += " expected_m " + std::to_string(expected_m);
  s += std::string(", out ") + (out == "float32" ? "fp32" : "bf16");
  if (with_c) s += dense ? " +C" : " accumulate";
  if (!bias.empty()) s += std::string(" +bias ") + (bias == "float32" ? "fp32" : "bf16");
  return s;
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
  for (const Problem& p : problems) items.push_back({desc_of(p), std::get<GemmConfig>(p)});
  return items;
}

nb::list warm(const std::vector<Problem>& problems, unsigned threads, const std::string& device,
              const nb::object& progress) {
  const std::vector<api::WarmItem> items = warm_items(problems);
  const plan::DeviceFacts facts = device_facts(device);
  std::vector<api::WarmedKernel> kernels;
  // What progress raised (a progress bar writing to a closed stderr). warm_jit_cache calls it on its
  // worker threads, where an exception would end the process (std::terminate): it is kept there,
  // progress is not called again, and it is raised once every kernel is built.
  std::exception_ptr raised;
  {
    nb::gil_scoped_release unlocked;
    // progress is a Python callable: each call takes the GIL (warm_jit_cache makes them one at a time).
    const auto report = [&](size_t done, size_t total) {
      if (progress.is_none()) return;
      nb::gil_scoped_acquire locked;
      if (raised) return;
      try {
        progress(done, total);
      } catch (...) {
        raised = std::current_exception();
      }
    };
    std::vector<api::WarmKernel> others;
    const std::vector<GemmKernelSpec> specs = api::kernels_to_warm(items, facts, &others);
    kernels = api::warm_jit_cache(specs, threads, report, others);
  }
  if (raised) std::rethrow_exception(raised);
  nb::list out;
  for (const api::WarmedKernel& k : kernels) out.append(to_dict(k));
  return out;
}

// The distinct kernels of `problems` as (name, generated source, name expression, threads): what a
// worker process compiles without planning (so without touching the GPU) in warm(processes=).
nb::list kernel_sources(const std::vector<Problem>& problems, const std::string& device) {
  nb::list out;
  const std::vector<api::WarmItem> items = warm_items(problems);
  const plan::DeviceFacts facts = device_facts(device);
  std::vector<api::WarmKernel> others;
  for (const GemmKernelSpec& s : api::kernels_to_warm(items, facts, &others)) {
    const jit::KernelSpec k = api::gemm_kernel_source(s);
    out.append(nb::make_tuple(api::describe_kernel(s), k.source, k.name_expression, gemm_geometry(s).threads));
  }
  for (const api::WarmKernel& k : others)
    out.append(nb::make_tuple(k.name, k.source.source, k.source.name_expression, k.threads));
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

std::string plan_text(const Problem& problem, size_t top, const std::string& device) {
  const plan::DeviceFacts facts = device_facts(device);
  const plan::GemmDesc desc = desc_of(problem);
  const GemmConfig& config = std::get<GemmConfig>(problem);
  // For gemm_nt the same header line as tilecast-plan's.
  const std::string head = problem_text(problem) + ", config '" + format_config(config) + "', device " + facts.name +
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
  m.def("plan", &plan_text, "problem"_a, "top"_a, "device"_a,
        "The chosen plan and the ranked alternatives, as tilecast-plan prints them. Use tilecast.plan.");
  m.def(
      "jit_cache_dir", [] { return jit::Runtime::instance().disk_cache().dir().string(); },
      "The JIT's disk cache folder in this process ('' when there is none); fixed when first used.");
}

}  // namespace tilecast::python
