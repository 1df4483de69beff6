// tilecast::gemm and tilecast::prepare: the dense and batched entry points of the call path
// (call.cpp).
#include "tilecast/gemm.hpp"

#include "api/call.hpp"

namespace tilecast {
namespace {

api::CallArgs dense_call(const MatrixView& a, const MatrixView& b, const MatrixView& d, const GemmEpilogue& e,
                         const GemmConfig& config, GemmLayout layout = GemmLayout::kNT) {
  api::CallArgs args;
  args.layout = layout;
  args.a = a;
  args.b = b;
  args.d = d;
  if (e.c) {
    args.c = *e.c;
    args.has_c = true;
  }
  args.alpha = e.alpha;
  args.beta = e.beta;
  args.bias = e.bias;
  args.config = config;
  return args;
}

GemmEpilogue with_c(const MatrixView* c) {
  GemmEpilogue e;
  e.c = c;
  return e;
}

}  // namespace

void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
          const GemmEpilogue& epilogue, const GemmConfig& config) {
  api::run_call(dense_call(a, b, d, epilogue, config), stream);
}

void gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream, const MatrixView* c,
          const GemmConfig& config) {
  gemm(a, b, d, stream, with_c(c), config);
}

void prepare(const MatrixView& a, const MatrixView& b, const MatrixView& d, const GemmEpilogue& epilogue,
             const GemmConfig& config) {
  api::prepare_call(dense_call(a, b, d, epilogue, config));
}

void prepare(const MatrixView& a, const MatrixView& b, const MatrixView& d, const MatrixView* c,
             const GemmConfig& config) {
  prepare(a, b, d, with_c(c), config);
}

void gemm(GemmLayout layout, const MatrixView& a, const MatrixView& b, const MatrixView& d, cudaStream_t stream,
          const GemmEpilogue& epilogue, const GemmConfig& config) {
  api::run_call(dense_call(a, b, d, epilogue, config, layout), stream);
}

void prepare(GemmLayout layout, const MatrixView& a, const MatrixView& b, const MatrixView& d,
             const GemmEpilogue& epilogue, const GemmConfig& config) {
  api::prepare_call(dense_call(a, b, d, epilogue, config, layout));
}

}  // namespace tilecast
