// tilecast-warm: compiles into the JIT disk cache, in parallel, every kernel that the bench's
// suites (or the given shapes) would launch, grouped suites included (planned from their sizes, as
// their calls are), with a progress line, so that a server or a GPU run spends no time in NVRTC.
// Needs no GPU; the cache's keys hold no paths, so a folder filled here can be copied to the
// machine that runs the kernels (TILECAST_CACHE_DIR). The planner's picks depend on the device:
// --device names the model of the one the cache is for (default h200), as tilecast-plan's does.
//
//   tilecast-warm [--suite a,b] [--shape m,n,k[,b]] [--out bf16|fp32] [--with-c] [--config k=v,...]
//                 [--cluster-compare] [--threads N] [--device h200|h100-sxm|h100-pcie|h20]
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/warm.hpp"
#include "problem_desc.hpp"
#include "suites.hpp"

namespace {

using namespace tilecast;

int usage() {
  std::fprintf(stderr,
               "usage: tilecast-warm [--suite a,b] [--shape m,n,k[,b]] [--out bf16|fp32] [--with-c] [--config k=v,...]\n"
               "                     [--cluster-compare] [--threads N] [--device h200|h100-sxm|h100-pcie|h20]\n"
               "  suites: the bench's (default, all, dense, m4096, m128, mgrouped, masked, kgrouped, deepseek-v3, ...);\n"
               "  default: default. --device: the model of the GPU the cache is for (default h200)\n");
  return 2;
}

// What --cluster-compare times: every cluster shape, and the clusters of 4 with the companion.
std::vector<GemmConfig> compare_configs(const GemmConfig& base) {
  std::vector<GemmConfig> out;
  for (const ClusterShape& cs : kClusterShapes)
    for (int companion : {0, 1}) {
      if (companion && cs.size() != 4) continue;
      GemmConfig c = base;
      c.cluster_m = cs.m;
      c.cluster_n = cs.n;
      c.companion = companion;
      out.push_back(c);
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<bench::BenchProblem> problems;
  std::vector<std::string> suites;
  DType out = DType::kBF16;
  bool out_given = false, with_c = false, compare = false;
  GemmConfig config;
  unsigned threads = std::thread::hardware_concurrency();
  std::string device = "h200";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a == "--suite" && has_value) {
        std::stringstream ss(argv[++i]);
        for (std::string s; std::getline(ss, s, ',');) suites.push_back(s);
      } else if (a == "--shape" && has_value) {
        problems.push_back(bench::parse_shape(argv[++i]));
      } else if (a == "--out" && has_value) {
        out = std::string(argv[++i]) == "fp32" ? DType::kFP32 : DType::kBF16;
        out_given = true;
      } else if (a == "--with-c") {
        with_c = true;
      } else if (a == "--config" && has_value) {
        config = parse_config(argv[++i]);
      } else if (a == "--cluster-compare") {
        compare = true;
      } else if (a == "--threads" && has_value) {
        threads = static_cast<unsigned>(std::stoul(argv[++i]));
      } else if (a == "--device" && has_value) {
        device = argv[++i];
      } else {
        return usage();
      }
    }
    if (suites.empty() && problems.empty()) suites.push_back("default");
    for (const std::string& s : suites)
      for (bench::BenchProblem& p : bench::make_suite(s)) problems.push_back(std::move(p));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-warm: %s\n", e.what());
    return usage();
  }

  const std::vector<GemmConfig> configs = compare ? compare_configs(config) : std::vector<GemmConfig>{config};
  std::vector<api::WarmItem> items;
  for (bench::BenchProblem& p : problems) {
    bench::apply_epilogue(p, out_given ? &out : nullptr, with_c);  // as tilecast-bench applies them
    for (const GemmConfig& c : configs) items.push_back({bench::problem_desc(p), c});
  }
  try {
    const plan::DeviceFacts facts = plan::device_model(device);
    if (facts.arch != plan::Arch::kSM90)
      throw Error("--device " + device + " is not an SM90 GPU: tilecast compiles kernels for SM90 only");
    std::vector<api::WarmKernel> others;
    const std::vector<GemmKernelSpec> specs = api::kernels_to_warm(items, facts, &others);
    std::printf("tilecast-warm: %zu problems, %zu distinct kernels, %u threads, device %s\n", items.size(),
                specs.size() + others.size(), threads, device.c_str());
    std::fflush(stdout);
    const auto kernels = api::warm_jit_cache(specs, threads, api::progress_on_stderr, others);
    double seconds = 0;
    int compiled = 0, spilling = 0, unreported = 0;
    for (const api::WarmedKernel& k : kernels) {
      std::printf("%-8s %6.2f s  regs %3u  spill %4u B  %s%s\n", k.from_cache ? "cached" : "compiled", k.compile_seconds,
                  k.registers, k.spill_bytes, k.name.c_str(),
                  k.report_found ? "" : "  (no ptxas report: the driver's compute cache answered)");
      seconds += k.compile_seconds;
      compiled += !k.from_cache;
      spilling += k.spill_bytes > 0;
      unreported += !k.report_found;
    }
    std::printf("%zu kernels: %d compiled in %.1f s of NVRTC (%.2f s each), %d with spills\n", kernels.size(), compiled,
                seconds, compiled ? seconds / compiled : 0.0, spilling);
    // Their spills are unknown, not none: the exit status cannot vouch for them.
    if (unreported)
      std::printf("%d kernels without a ptxas report, spills unknown (CUDA_CACHE_DISABLE=1 and an empty cache show them)\n",
                  unreported);
    return spilling ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-warm: %s\n", e.what());
    return 1;
  }
}
