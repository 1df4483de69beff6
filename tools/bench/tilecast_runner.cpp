#include "tilecast_runner.hpp"

namespace tilecast::bench {

TilecastCall make_tilecast_call(const BenchProblem& p, Workload& w, const GemmConfig& cfg) {
  TilecastCall call;
  if (p.kind == Kind::kDense || p.kind == Kind::kBatched) {
    const MatrixView a = w.a.view, b = w.b.view, d = w.d_tilecast.view;
    const bool has_c = w.has_c;
    const MatrixView c = has_c ? w.c.view : MatrixView{};
    const VectorView bias = w.bias_vector();
    call.run = [a, b, d, c, has_c, bias, cfg](cudaStream_t s) {
      GemmEpilogue e;
      e.c = has_c ? &c : nullptr;
      e.bias = bias;
      gemm(a, b, d, s, e, cfg);
    };
  } else {
    call.unavailable = std::string("tilecast has no ") + kind_name(p.kind) + " GEMM API yet";
  }
  return call;
}

}  // namespace tilecast::bench
