#include "api/epilogue_only.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tilecast::api {
namespace {

// A memory-bound loop: a few waves of 256-thread blocks stride over every element.
constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

// A strided matrix of the kernel's element type, as the kernel sees it.
template <class T>
struct Strided {
  T* data;
  int64_t ld, batch_step;
};

__device__ float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ float load(const float* p) { return *p; }
__device__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ void store(float* p, float v) { *p = v; }

// TBias void: no bias. c.data null: no C read (none given, or beta 0).
template <class T, class TBias>
__global__ void __launch_bounds__(kThreads)
    epilogue_only_kernel(Strided<T> d, Strided<const T> c, float beta, const TBias* bias, int64_t batch, int64_t rows,
                         int64_t cols) {
  const int64_t total = batch * rows * cols;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t col = e % cols, row = (e / cols) % rows, b = e / (cols * rows);
    float v = 0.0f;
    if (c.data) v = beta * load(c.data + b * c.batch_step + row * c.ld + col);
    if constexpr (!std::is_void_v<TBias>) v += load(bias + col);
    store(d.data + b * d.batch_step + row * d.ld + col, v);
  }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("k = 0 epilogue: ") + what + " failed: " + cudaGetErrorString(e));
}

template <class T, class TBias>
void load() {
  cudaFuncAttributes attr{};
  check(cudaFuncGetAttributes(&attr, epilogue_only_kernel<T, TBias>), "cudaFuncGetAttributes");
}

template <class T, class TBias>
void launch(const MatrixView& d, const MatrixView* c, float beta, const void* bias, cudaStream_t stream) {
  const int64_t total = d.batch * d.rows * d.cols;
  const int blocks = static_cast<int>(std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks));
  const Strided<T> dd{static_cast<T*>(d.data), d.ld(), d.batch_step()};
  const bool read_c = c != nullptr && beta != 0.0f;
  const Strided<const T> cc{read_c ? static_cast<const T*>(c->data) : nullptr, read_c ? c->ld() : 0,
                            read_c ? c->batch_step() : 0};
  epilogue_only_kernel<T, TBias><<<blocks, kThreads, 0, stream>>>(dd, cc, beta, static_cast<const TBias*>(bias), d.batch,
                                                                 d.rows, d.cols);
}

template <class T>
void launch_for_bias(const MatrixView& d, const MatrixView* c, float beta, const VectorView& bias, cudaStream_t stream) {
  if (bias.data == nullptr) return launch<T, void>(d, c, beta, nullptr, stream);
  if (bias.dtype == DType::kBF16) return launch<T, __nv_bfloat16>(d, c, beta, bias.data, stream);
  launch<T, float>(d, c, beta, bias.data, stream);
}

template <class T>
void load_for_bias(const VectorView& bias) {
  if (bias.data == nullptr) return load<T, void>();
  if (bias.dtype == DType::kBF16) return load<T, __nv_bfloat16>();
  load<T, float>();
}

}  // namespace

void load_epilogue_only(const MatrixView& d, const VectorView& bias) {
  if (d.dtype == DType::kBF16) load_for_bias<__nv_bfloat16>(bias);
  else load_for_bias<float>(bias);
}

void launch_epilogue_only(const MatrixView& d, const MatrixView* c, float beta, const VectorView& bias,
                          cudaStream_t stream) {
  if (d.dtype == DType::kBF16) launch_for_bias<__nv_bfloat16>(d, c, beta, bias, stream);
  else launch_for_bias<float>(d, c, beta, bias, stream);
  check(cudaGetLastError(), "launch");
}

}  // namespace tilecast::api
