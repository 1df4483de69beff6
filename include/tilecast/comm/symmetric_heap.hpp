// Symmetric memory for one host: every rank allocates the same number of bytes on its GPU, and
// every rank maps every rank's allocation at the same place of one reserved virtual range
// (region r at base + r * stride), which is what the device-side SymmetricMap encodes.
//
// The bootstrap, collective over a Rendezvous:
//   1. check   the device supports the virtual memory API and POSIX-fd export;
//   2. meta    all-gather (pid, host id, GPU UUID, sizes) and refuse mismatches: another host
//              (beyond one host the library relies on NCCL, docs/comm.md), unequal sizes, peers
//              whose GPU is not visible here or cannot be reached by peer access;
//   3. export  cuMemCreate with POSIX-fd handles, cuMemExportToShareableHandle;
//   4. swap    the descriptors (fd_exchange.hpp: pidfd_getfd, or SCM_RIGHTS over a UNIX socket);
//   5. import  cuMemImportFromShareableHandle, cuMemMap into the reserved range, cuMemSetAccess
//              for this GPU;
//   6. zero    this rank's region, then a rendezvous barrier, so that no peer can signal into a
//              region before its owner has cleared it (the NVSHMEM #98 race).
// Several processes may share one GPU (the launcher's --procs-per-gpu): the same steps then map
// the same GPU's memory from several processes, which tests the whole path on a single GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tilecast/comm/fd_exchange.hpp"
#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/device/comm/symmetric_map.cuh"

namespace tilecast::comm {

class SymmetricHeap {
 public:
  // Collective. `bytes_per_rank` is rounded up to the allocation granularity (2 MiB on H200).
  static SymmetricHeap create(Rendezvous& rendezvous, int device, size_t bytes_per_rank,
                              FdTransport transport = FdTransport::kAuto);

  SymmetricHeap() = default;
  ~SymmetricHeap();
  SymmetricHeap(SymmetricHeap&& other) noexcept;
  SymmetricHeap& operator=(SymmetricHeap&& other) noexcept;
  SymmetricHeap(const SymmetricHeap&) = delete;
  SymmetricHeap& operator=(const SymmetricHeap&) = delete;

  // What kernels take. Peers keep their physical memory alive while any process maps it, so
  // destroying a heap never pulls memory from under a peer; but a peer that still signals into
  // this rank after it has gone would fault, so ranks should meet at a barrier first.
  const SymmetricMap& map() const { return map_; }
  void* local() const { return map_.local(); }
  size_t bytes_per_rank() const { return static_cast<size_t>(map_.stride); }
  int rank() const { return map_.rank; }
  int size() const { return map_.num_ranks; }
  int device() const { return device_; }
  FdTransport transport() const { return transport_; }
  // Whether every rank sits on this rank's GPU (the single-GPU test setup).
  bool all_on_one_gpu() const { return one_gpu_; }

 private:
  void release() noexcept;

  SymmetricMap map_{};
  int device_ = -1;
  FdTransport transport_ = FdTransport::kAuto;
  bool one_gpu_ = false;
};

}  // namespace tilecast::comm
