// Where the hardware puts CTAs: the SM id (%smid) of every CTA of a one-wave launch (one CTA per SM,
// 200 KiB of shared memory each), with clusters of 1, 2, 4, 8 and 16 CTAs; a cluster lives in one
// GPC, so the clusters of 16 show which SMs share one. On the GPU machine:
//   nvcc -arch=sm_90a -O2 -o /tmp/sm_placement scripts/sm_placement.cu && /tmp/sm_placement
// (bench/results/2026-12-04-h200-narrow-tile-l2-requests.md, section 5). Each line: the cluster
// size, the grid, cudaOccupancyMaxActiveClusters, and the SM of every CTA, clusters split by "|".
#include <cstdio>
#include <vector>
__global__ void where(unsigned* out) {
  extern __shared__ char s[];
  if (threadIdx.x == 0) {
    unsigned smid, nsmid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsmid));
    out[blockIdx.x] = smid;
    if (blockIdx.x == 0) out[gridDim.x] = nsmid;
    s[0] = 1;
  }
}
int main() {
  unsigned* d; cudaMalloc(&d, 4096 * 4);
  cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  // Grids as run on the H200 (132 SMs): clusters of 4 and 8 then fill more than one wave (30 and 15
  // resident), so their last clusters land on SMs the first ones left; 7 clusters of 16 fit.
  for (int cs : {1, 2, 4, 8, 16}) {
    int grid = 132 / cs * cs;
    if (cs == 16) grid = 16 * 7;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid; cfg.blockDim = 128; cfg.dynamicSmemBytes = 200 * 1024;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = cs; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    int maxc = 0; cudaOccupancyMaxActiveClusters(&maxc, where, &cfg);
    for (int rep = 0; rep < 2; ++rep) {
      cudaError_t e = cudaLaunchKernelEx(&cfg, where, d);
      cudaDeviceSynchronize();
      std::vector<unsigned> h(grid + 1);
      cudaMemcpy(h.data(), d, (grid + 1) * 4, cudaMemcpyDeviceToHost);
      printf("cluster %d grid %d max_active_clusters %d err %s nsmid %u rep %d:", cs, grid, maxc, cudaGetErrorString(e), h[grid], rep);
      for (int i = 0; i < grid; ++i) printf("%s%u", i % cs == 0 ? " |" : ",", h[i]);
      printf("\n");
    }
  }
}
