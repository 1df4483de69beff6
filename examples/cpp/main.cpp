// D = A * B^T with tilecast, built against the installed package (see CMakeLists.txt here).
// Without a GPU it says so and exits 0: CI builds and runs it on a machine without one.
#include <cuda_runtime.h>
#include <tilecast/gemm.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--help") == 0) {
    std::puts("usage: tilecast-example: D[m,n] = A[m,k] * B[n,k]^T in BF16 on the current GPU");
    return 0;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::puts("tilecast-example: no CUDA GPU found (tilecast is linked; nothing to run)");
    return 0;
  }
  const int64_t m = 256, n = 512, k = 1024;
  void *a, *b, *d;
  cudaMalloc(&a, m * k * 2), cudaMalloc(&b, n * k * 2), cudaMalloc(&d, m * n * 2);
  cudaMemset(a, 0x3c, m * k * 2), cudaMemset(b, 0x3c, n * k * 2);  // every element 0x3c3c = 0.0115
  try {
    using tilecast::DType;
    tilecast::gemm({a, DType::kBF16, m, k}, {b, DType::kBF16, n, k}, {d, DType::kBF16, m, n}, nullptr);
  } catch (const tilecast::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::vector<uint16_t> out(m * n);
  cudaMemcpy(out.data(), d, out.size() * 2, cudaMemcpyDeviceToHost);
  uint32_t bits = uint32_t{out[0]} << 16;
  float first;
  std::memcpy(&first, &bits, 4);
  std::printf("D[0][0] = %g (expected %g)\n", first, 1024 * 0.011474609375 * 0.011474609375);
  return 0;
}
