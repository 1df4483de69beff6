// D = A * B^T with tilecast, built against the installed package (CMakeLists.txt here). Without a
// GPU it says so and exits 0: CI builds and runs it on a machine without one.
#include <cuda_runtime.h>
#include <tilecast/gemm.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  int gpus = 0;
  if (argc > 1 && !std::strcmp(argv[1], "--help")) return std::puts("tilecast-example: D = A * B^T on GPU 0"), 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) return std::puts("tilecast-example: no CUDA GPU"), 0;
  const int64_t m = 256, n = 512, k = 1024;
  void *a, *b, *d;
  cudaMalloc(&a, m * k * 2), cudaMalloc(&b, n * k * 2), cudaMalloc(&d, m * n * 4);
  cudaMemset(a, 0x3c, m * k * 2), cudaMemset(b, 0x3c, n * k * 2);  // every element bf16 0x3c3c = 0.011475
  try {
    using tilecast::DType;  // A [m, k] and B [n, k] in BF16, D [m, n] in FP32, on the legacy stream
    tilecast::gemm({a, DType::kBF16, m, k}, {b, DType::kBF16, n, k}, {d, DType::kFP32, m, n}, nullptr);
  } catch (const tilecast::Error& e) {
    return std::fprintf(stderr, "%s\n", e.what()), 1;
  }
  float d00 = 0;
  cudaMemcpy(&d00, d, sizeof d00, cudaMemcpyDeviceToHost);
  std::printf("D[0][0] = %.6f (expected %.6f)\n", d00, k * 0.011474609375 * 0.011474609375);
}
