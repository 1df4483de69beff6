#include "tilecast_runner.hpp"

#include <cstdio>
#include <thread>

#ifdef TILECAST_BENCH_HAVE_GEMM
#include "api/warm.hpp"
#endif

namespace tilecast::bench {

bool tilecast_linked() {
#ifdef TILECAST_BENCH_HAVE_GEMM
  return true;
#else
  return false;
#endif
}

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg) {
  TilecastCall call;
#ifdef TILECAST_BENCH_HAVE_GEMM
  if (p.kind == Kind::kDense || p.kind == Kind::kBatched) {
    const MatrixView a = w.a.view, b = w.b.view, d = w.d_tilecast.view;
    const bool has_c = w.has_c;
    const MatrixView c = has_c ? w.c.view : MatrixView{};
    call.run = [a, b, d, c, has_c, cfg](cudaStream_t s) { gemm(a, b, d, s, has_c ? &c : nullptr, cfg); };
  } else {
    call.unavailable = std::string("tilecast has no ") + kind_name(p.kind) + " GEMM API yet";
  }
#else
  (void)p;
  (void)w;
  (void)cfg;
  call.unavailable = "tilecast library not in this build (no CMake target `tilecast`)";
#endif
  return call;
}

int warm_jit_cache(const std::vector<BenchProblem>& problems, const std::vector<GemmConfig>& configs,
                   unsigned threads) {
#ifdef TILECAST_BENCH_HAVE_GEMM
  std::vector<api::WarmItem> items;
  for (const BenchProblem& p : problems) {
    if (p.kind != Kind::kDense && p.kind != Kind::kBatched) continue;
    const plan::GemmShape s = plan::dense_shape(p.m, p.n, p.k, p.groups, p.out, p.with_c);
    for (const GemmConfig& c : configs) items.push_back({s, c});
  }
  try {
    const auto kernels = api::warm_jit_cache(items, threads ? threads : std::thread::hardware_concurrency());
    double seconds = 0;
    int compiled = 0;
    for (const api::WarmedKernel& k : kernels) {
      std::printf("%-8s %6.2f s  regs %3u  spill %4u B  %s%s\n", k.from_cache ? "cached" : "compiled", k.compile_seconds,
                  k.registers, k.spill_bytes, k.name.c_str(),
                  k.report_found ? "" : "  (no ptxas report: the driver's compute cache answered)");
      seconds += k.compile_seconds;
      compiled += !k.from_cache;
    }
    std::printf("%zu kernels, %d compiled in %.1f s of NVRTC\n", kernels.size(), compiled, seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-bench: %s\n", e.what());
    return 1;
  }
#else
  (void)problems;
  (void)configs;
  (void)threads;
  std::fprintf(stderr, "tilecast-bench: built without the tilecast library: nothing to warm\n");
  return 1;
#endif
}

}  // namespace tilecast::bench
