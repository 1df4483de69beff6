#include "tilecast_runner.hpp"

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

}  // namespace tilecast::bench
