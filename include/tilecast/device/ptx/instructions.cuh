// The PTX that CCCL's cuda::ptx does not wrap (CUDA 13.0): warpgroup MMA control, register
// reallocation, stmatrix, named barriers and their vote, elect.sync, the TMA descriptor prefetch and
// grid-dependency control. Each wrapper is named after its instruction and says its minimum
// target. Everything else (TMA, mbarrier, fences, cluster barrier, special registers) comes from
// cuda::ptx. The BF16 MMAs themselves are in wgmma_bf16.cuh (generated).
#pragma once

#include "tilecast/device/common.cuh"

namespace tilecast::ptx {

// wgmma.fence.sync.aligned; sm_90a. Orders this warpgroup's register and shared-memory accesses
// before the wgmma operations that follow.
TC_DEVICE TC_FORCEINLINE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// wgmma.commit_group.sync.aligned; sm_90a.
TC_DEVICE TC_FORCEINLINE void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// wgmma.wait_group.sync.aligned N; sm_90a. Waits until at most kPending groups are in flight.
template <int kPending>
TC_DEVICE TC_FORCEINLINE void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// trap; then unreachable. ptxas does not know that trap ends the thread: without the second line
// it lets a timed-out wait's trap path rejoin the k-loop it sits in, and the values live on that
// path take the registers the accumulators need. 128x256 tiles with FP32 output and C (or C and a
// bias) spilled 32-208 bytes, and a 128x320 tile (tried, not kept) spilled 320 and serialised
// every wgmma (ptxas C7512, "insufficient register resources") at any setmaxnreg budget; with it
// all of them compile clean (bench/results/2026-12-01-h200-trap.md).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
[[noreturn]] TC_DEVICE TC_FORCEINLINE void trap_kernel() {
  __trap();
  __builtin_unreachable();
}
#endif

// elect.sync _|p, 0xffffffff; sm_90. True in one lane of the fully converged warp. A role that
// one thread runs must be entered through this, not through `threadIdx.x == 0`: ptxas knows that
// only one lane is active under an elected predicate, so it issues each TMA load from uniform
// registers as they are. Under a thread-index test it wraps every load in a waterfall loop
// (ELECT, PLOP3, BRA.U.ANY) and moves the operands with R2UR first.
TC_DEVICE TC_FORCEINLINE bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n.reg .pred p;\n"
      "elect.sync _|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

// prefetch.tensormap [addr]; sm_90. Brings a TMA descriptor (a __grid_constant__ kernel
// parameter, by generic address) into the descriptor cache before its first use.
TC_DEVICE TC_FORCEINLINE void prefetch_tensormap(const void* desc) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(desc)) : "memory");
}

// cp.async.bulk.prefetch.tensor.3d.L2.global.tile [desc, {c0, c1, c2}]; sm_90. Brings one TMA box
// of a 3-D tensor into L2, writing no shared memory and completing on no barrier (CCCL's
// cuda::ptx has no wrapper for it).
TC_DEVICE TC_FORCEINLINE void prefetch_tensor_3d(const void* desc, const int32_t (&c)[3]) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(
                   reinterpret_cast<uint64_t>(desc)),
               "r"(c[0]), "r"(c[1]), "r"(c[2])
               : "memory");
}

// Keeps the compiler from moving accumulator registers across in-flight wgmma operations.
TC_DEVICE TC_FORCEINLINE void fence_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// setmaxnreg.inc.sync.aligned.u32 N / setmaxnreg.dec...; sm_90a. Moves registers between
// warpgroups; needs a register cap at kernel entry (__launch_bounds__ with min blocks 1).
template <uint32_t kRegs>
TC_DEVICE TC_FORCEINLINE void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes multiples of 8 in 24..256");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <uint32_t kRegs>
TC_DEVICE TC_FORCEINLINE void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes multiples of 8 in 24..256");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {r0, r1, r2, r3}; sm_90. Each lane gives the
// shared address of one 16-byte row: lanes 8i..8i+7 the rows of matrix i; register i holds the
// lane's two elements of matrix i.
TC_DEVICE TC_FORCEINLINE void stmatrix_x4(uint32_t smem_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x2.shared.b16 [addr], {r0, r1}; sm_90. Lanes 0-7 give the rows of
// matrix 0, lanes 8-15 those of matrix 1 (the other lanes' addresses are not read).
TC_DEVICE TC_FORCEINLINE void stmatrix_x2(uint32_t smem_addr, uint32_t r0, uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(smem_addr), "r"(r0), "r"(r1)
               : "memory");
}

// mapa.shared::cluster.u32; sm_90. The shared::cluster address of `local_smem_addr` (a shared
// window address) in CTA `rank` of the cluster: 32 bits, where __cluster_map_shared_rank gives a
// 64-bit generic pointer (eight of those, hoisted out of the cluster-split epilogue's loop,
// spilled 424 bytes at 128x128).
TC_DEVICE TC_FORCEINLINE uint32_t map_shared_rank(uint32_t local_smem_addr, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local_smem_addr), "r"(rank));
  return remote;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// ld.shared::cluster.v4.f32; sm_90. Four floats at a shared::cluster address (map_shared_rank),
// 16-byte aligned, in this CTA's shared memory or a peer's. Only where CUDA's vector types exist:
// the host compiler reads these headers for the CPU tests with CCCL's include folder alone (on a
// machine without CUDA's headers in a system folder, float4 is not declared there).
TC_DEVICE TC_FORCEINLINE float4 ld_shared_cluster_f32x4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
#endif

// mapa.shared::cluster.u32 + mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [addr]; sm_90,
// PTX ISA 8.6. A relaxed arrive at cluster scope on the mbarrier at the same shared-memory offset in
// CTA `rank`: after one fence.acq_rel.cluster, a release pattern to a peer's acquire at cluster
// scope. (cuda::ptx's relaxed cluster arrive takes the address through __as_ptr_smem, which is
// not a peer's shared::cluster address; its release arrive fences every time: eight in a row cost
// 2.7 us, bench/results/2026-12-02-h200-cluster-reduce.md.)
TC_DEVICE TC_FORCEINLINE void mbarrier_arrive_relaxed_remote(uint32_t local_smem_addr, uint32_t rank) {
  asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(map_shared_rank(local_smem_addr, rank))
               : "memory");
}

// mapa.shared::cluster.u32 + mbarrier.arrive.shared::cluster.b64 _, [addr]; sm_90. Arrives on the
// mbarrier at the same shared-memory offset in CTA `rank` of the cluster, with the instruction's
// default semantics (release at CTA scope), as CUTLASS's cluster barrier does. cuda::ptx offers
// the shared::cluster arrive only with .release.cluster, which orders more than a stage release
// needs (the stage's reads are wgmma reads that wgmma.wait_group has already completed).
TC_DEVICE TC_FORCEINLINE void mbarrier_arrive_remote(uint32_t local_smem_addr, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(local_smem_addr),
      "r"(rank)
      : "memory");
}

// griddepcontrol.launch_dependents; sm_90. This CTA lets the grid launched after it with
// programmatic stream serialization (the split-K reduce) start once every CTA of this grid has
// said so or exited. The dependent still waits for this grid's completion and memory
// (griddepcontrol_wait), so saying it early is always safe: it only moves the dependent's launch
// and residency onto SMs this grid leaves idle.
TC_DEVICE TC_FORCEINLINE void griddepcontrol_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// griddepcontrol.wait; sm_90. Waits until the grids this one depends on programmatically have
// completed and their memory is visible; returns at once when the launch had no such dependency.
TC_DEVICE TC_FORCEINLINE void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// barrier.sync id, count; sm_70. A barrier for a subset of the CTA's warps (a warpgroup). Not
// .aligned (bar.sync is): its threads may arrive from divergent code, such as after a branch that
// only thread 0 of the warpgroup takes.
TC_DEVICE TC_FORCEINLINE void barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// barrier.arrive id, count; sm_70. Counts this thread on named barrier `id` without waiting (the
// other side of a barrier_sync by the rest of `threads`). Not .aligned, like barrier_sync.
TC_DEVICE TC_FORCEINLINE void barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// barrier.red.or.pred p, id, count, q; sm_70. A barrier of `threads` threads (named barrier `id`,
// as barrier_sync) that also returns, to every one of them, whether `pred` held in any: a
// warpgroup's vote without a word of shared memory. Not .aligned, like barrier_sync.
TC_DEVICE TC_FORCEINLINE bool barrier_red_or(uint32_t id, uint32_t threads, bool pred) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred p, q;\n"
      "setp.ne.u32 q, %1, 0;\n"
      "barrier.red.or.pred p, %2, %3, q;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(any)
      : "r"(static_cast<uint32_t>(pred)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

// ld.shared.b32 / ld.shared.v2.b32 / st.shared.v2.b32 by 32-bit shared-window address; sm_20.
// The epilogue reads C and writes FP32 D through these: generic pointers would cost it 64-bit
// registers it does not have beside 128 accumulators.
TC_DEVICE TC_FORCEINLINE uint32_t ld_shared_b32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
TC_DEVICE TC_FORCEINLINE void ld_shared_v2_b32(uint32_t addr, uint32_t& x, uint32_t& y) {
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(x), "=r"(y) : "r"(addr) : "memory");
}
TC_DEVICE TC_FORCEINLINE void st_shared_v2_b32(uint32_t addr, uint32_t x, uint32_t y) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(addr), "r"(x), "r"(y) : "memory");
}
TC_DEVICE TC_FORCEINLINE void ld_shared_v4_b32(uint32_t addr, uint32_t& x, uint32_t& y, uint32_t& z, uint32_t& w) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(addr) : "memory");
}
TC_DEVICE TC_FORCEINLINE void st_shared_v4_b32(uint32_t addr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

}  // namespace tilecast::ptx
