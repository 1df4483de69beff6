// A minimal kernel with the k-tail handshake of k_tail.cuh and nothing else, for
// compute-sanitizer's racecheck (which reports the kernel's k_tail word as raced: k_tail.cuh says
// more). Not built by CMake. On the GPU machine:
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -lineinfo -maxrregcount=168 -cudart static \
//     -o handshake scripts/probes/k_tail_handshake.cu && compute-sanitizer --tool racecheck ./handshake
// H200, 2026-12-01: every variant below 0 hazards, and every clearer read every word.
#include <cstdio>
#include <cstdint>
template <bool kAligned>
__device__ __forceinline__ void bar_sync(uint32_t id, uint32_t n) {
  if constexpr (kAligned) { __syncwarp(); asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
  else asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}
template <int kConsumerWGs, bool kSetmaxnreg, bool kAligned = true>
__global__ void __launch_bounds__(128 * (1 + kConsumerWGs), 1) handshake(uint32_t* out, int rounds) {
  __shared__ volatile uint32_t word;
  constexpr uint32_t kThreads = 64 + 128 * kConsumerWGs;
  if (threadIdx.x == 0) word = 0;
  __syncthreads();
  if (threadIdx.x < 128) {
    if constexpr (kSetmaxnreg) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x < 64) return;  // the producer's loader warps: elsewhere
    uint32_t sum = 0;
    for (;;) {
      bar_sync<kAligned>(3, kThreads);
      const uint32_t w = word;
      if (w == 0xFFFFFFFFu) break;
      sum += w;
      bar_sync<kAligned>(4, kThreads);
    }
    out[threadIdx.x] = sum;
  } else {
    if constexpr (kSetmaxnreg) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    for (int r = 0; r < rounds; ++r) {
      if (threadIdx.x == 128) word = r + 1;
      bar_sync<kAligned>(3, kThreads);
      bar_sync<kAligned>(4, kThreads);
    }
    if (threadIdx.x == 128) word = 0xFFFFFFFFu;
    bar_sync<kAligned>(3, kThreads);
  }
}
template <int W, bool S, bool A = true>
int run(const char* name) {
  uint32_t* out;
  cudaMalloc(&out, 1024 * 4);
  cudaMemset(out, 0, 1024 * 4);
  const int rounds = 20;
  handshake<W, S, A><<<2, 128 * (1 + W)>>>(out, rounds);
  uint32_t h[128];
  cudaError_t e = cudaMemcpy(h, out, 128 * 4, cudaMemcpyDeviceToHost);
  const uint32_t want = rounds * (rounds + 1) / 2;
  int bad = 0;
  for (int t = 64; t < 128; ++t) bad += h[t] != want;
  std::printf("%s: %s, %d of 64 clearers wrong\n", name, cudaGetErrorString(e), bad);
  cudaFree(out);
  return bad != 0 || e != cudaSuccess;
}
int main() {
  int rc = 0;
  rc |= run<2, true>("2 consumer WGs, setmaxnreg (320-thread barriers)");
  rc |= run<2, false>("2 consumer WGs, no setmaxnreg");
  rc |= run<1, true>("1 consumer WG, setmaxnreg (192-thread barriers)");
  rc |= run<2, true, false>("2 consumer WGs, setmaxnreg, unaligned barrier.sync");
  return rc;
}
