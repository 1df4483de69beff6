// The floor of tilecast-bench's timing loop: what a launch of a GEMM's shape costs between the
// loop's two CUDA events when it does nothing (empty: 132 CTAs x 384 threads, 200 KiB of dynamic
// shared memory each) or loads one cold 128-byte line a CTA (one line), after each flush the bench
// knows (the 256 MiB memset, a read of it as --flush-read does, none), with and without PDL.
// Median, p10 and p90 of 200 iterations. On the GPU machine:
//   nvcc -arch=sm_90a -O2 -o /tmp/timing_floor scripts/timing_floor.cu -lcublas && /tmp/timing_floor
// (bench/results/2026-12-04-h200-gpc-units.md, section 7). Without a flush the host's enqueue
// latency lands between the events (the GPU is idle when the first event runs), so those rows are
// not a floor.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cublas_v2.h>
__global__ void empty_kernel(float* out) {
  extern __shared__ char s[];
  if (threadIdx.x == 0 && out == nullptr) s[0] = 1;
}
__global__ void one_line(const float4* in, float4* out) {
  extern __shared__ char s[];
  if (threadIdx.x < 8) out[blockIdx.x * 8 + threadIdx.x] = in[blockIdx.x * 1024 + threadIdx.x];
}
int main() {
  const size_t flush = size_t{256} << 20;
  void* buf; cudaMalloc(&buf, flush); cudaMemset(buf, 0, flush);
  float4 *in, *out; cudaMalloc(&in, 132 * 1024 * 16); cudaMalloc(&out, 132 * 8 * 16);
  float* sum; cudaMalloc(&sum, 4);
  cublasHandle_t h; cublasCreate(&h); cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  cudaFuncSetAttribute(one_line, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  cudaStream_t st; cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  cublasSetStream(h, st);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int kernel = 0; kernel < 2; ++kernel)
    for (int mode = 0; mode < 3; ++mode)  // 0 memset flush, 1 read flush, 2 none
      for (int pdl = 0; pdl < 2; ++pdl) {
        std::vector<float> t;
        for (int i = 0; i < 220; ++i) {
          if (mode == 0) cudaMemsetAsync(buf, 0, flush, st);
          if (mode == 1) cublasSasum_64(h, flush / 4, static_cast<float*>(buf), 1, sum);
          cudaEventRecord(e0, st);
          cudaLaunchConfig_t cfg = {};
          cfg.gridDim = 132; cfg.blockDim = 384; cfg.dynamicSmemBytes = 200 * 1024; cfg.stream = st;
          cudaLaunchAttribute at[1];
          at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
          cfg.attrs = at; cfg.numAttrs = pdl;
          if (kernel == 0) cudaLaunchKernelEx(&cfg, empty_kernel, (float*)out);
          else cudaLaunchKernelEx(&cfg, one_line, (const float4*)in, out);
          cudaEventRecord(e1, st);
          cudaEventSynchronize(e1);
          float ms; cudaEventElapsedTime(&ms, e0, e1);
          if (i >= 20) t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        printf("%-9s flush %-6s pdl %d: median %.2f us, p10 %.2f, p90 %.2f (%s)\n", kernel ? "one line" : "empty",
               mode == 0 ? "write" : mode == 1 ? "read" : "none", pdl, t[t.size() / 2], t[t.size() / 10], t[t.size() * 9 / 10],
               cudaGetErrorString(cudaGetLastError()));
      }
}
