// tilecast::gemm and tilecast::prepare: the dense and batched entry points of the call path
// (call.cpp).
#include "tilecast/gemm.hpp"

#include "api/call.hpp"

namespace tilecast {
namespace {

api::CallArgs dense_call(const MatrixView& a, const MatrixView& b, const MatrixView& d, const MatrixView* c,
                         const GemmConfig& config) {
  api::CallArgs args;
  args.a = a;
  args.b = b;
  args.d = d;
  if (c) {
    args.c = *c;
    args.has_c = true;
  }
  args.config = config;
  return args;
}

}  // namespace

void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream, const MatrixView* c,
          const GemmConfig& config) {
  api::run_call(dense_call(a, b, d, c, config), stream);
}

void prepare(const MatrixView& a, const MatrixView& b, const MatrixView& d, const MatrixView* c,
             const GemmConfig& config) {
  api::prepare_call(dense_call(a, b, d, c, config));
}

}  // namespace tilecast
