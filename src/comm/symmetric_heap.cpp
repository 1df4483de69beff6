#include "tilecast/comm/symmetric_heap.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "driver/driver.hpp"
#include "tilecast/types.hpp"

namespace tilecast::comm {
namespace {

constexpr uint32_t kMetaMagic = 0x74634D31u;  // "tcM1"

// What every rank tells the others before anything is exported.
struct RankMeta {
  uint32_t magic;
  int32_t pid;
  int32_t device;           // this process's ordinal, for messages only
  uint32_t pad;
  uint64_t bytes_requested;
  uint64_t stride;          // bytes per rank after rounding to the granularity
  cudaUUID_t uuid;          // identifies the GPU across processes (ordinals differ per process)
  char host[96];            // hostname and boot id: ranks on other hosts cannot map each other
};

std::string host_identity() {
  char name[64] = {};
  ::gethostname(name, sizeof name - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return std::string(name) + "/" + boot;
}

std::string uuid_text(const cudaUUID_t& u) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// The ordinal, in this process, of the GPU with this UUID; -1 if it is not visible here.
int ordinal_of(const cudaUUID_t& uuid) {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    check_cuda(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
    if (std::memcmp(&p.uuid, &uuid, sizeof uuid) == 0) return d;
  }
  return -1;
}

}  // namespace

SymmetricHeap SymmetricHeap::create(Rendezvous& rendezvous, int device, size_t bytes_per_rank,
                                    FdTransport transport) {
  const Driver& drv = Driver::get();
  const auto check = [&drv](CUresult r, const char* what) { drv.check(r, what); };
  const int me = rendezvous.rank();
  const int n = rendezvous.size();
  if (bytes_per_rank == 0) throw Error("symmetric heap: bytes_per_rank must be positive");

  // 1. The device can do this at all.
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "creating the CUDA context");
  CUdevice dev{};
  check(drv.cuDeviceGet(&dev, device), "cuDeviceGet");
  int vmm = 0, posix_fd = 0;
  check(drv.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev),
        "cuDeviceGetAttribute");
  check(drv.cuDeviceGetAttribute(&posix_fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev),
        "cuDeviceGetAttribute");
  if (!vmm || !posix_fd) {
    throw Error("symmetric heap: GPU " + std::to_string(device) +
                " supports neither the virtual memory API nor POSIX-fd export (needed for symmetric memory)");
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granularity = 0;
  check(drv.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
        "cuMemGetAllocationGranularity");
  const size_t stride = (bytes_per_rank + granularity - 1) / granularity * granularity;

  // 2. Metadata, and refusals that name the ranks at fault.
  RankMeta mine{};
  mine.magic = kMetaMagic;
  mine.pid = static_cast<int32_t>(::getpid());
  mine.device = device;
  mine.bytes_requested = bytes_per_rank;
  mine.stride = stride;
  {
    cudaDeviceProp p{};
    check_cuda(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    mine.uuid = p.uuid;
  }
  std::strncpy(mine.host, host_identity().c_str(), sizeof mine.host - 1);
  std::vector<RankMeta> all(static_cast<size_t>(n));
  rendezvous.allgather(&mine, all.data(), sizeof mine);
  bool one_gpu = true;
  for (int r = 0; r < n; ++r) {
    const RankMeta& m = all[r];
    const std::string who = "rank " + std::to_string(r);
    if (m.magic != kMetaMagic) throw Error("symmetric heap: " + who + " sent malformed metadata");
    if (std::strncmp(m.host, mine.host, sizeof mine.host) != 0) {
      throw Error("symmetric heap: " + who + " runs on another host (" + m.host + " vs " + mine.host +
                  "); symmetric memory spans one host only, beyond it use NCCL (docs/comm.md)");
    }
    if (m.bytes_requested != bytes_per_rank || m.stride != stride) {
      throw Error("symmetric heap: " + who + " asked for " + std::to_string(m.bytes_requested) +
                  " bytes per rank, this rank for " + std::to_string(bytes_per_rank));
    }
    if (std::memcmp(&m.uuid, &mine.uuid, sizeof mine.uuid) == 0) continue;
    one_gpu = false;
    const int peer = ordinal_of(m.uuid);
    if (peer < 0) {
      throw Error("symmetric heap: " + who + "'s GPU " + uuid_text(m.uuid) +
                  " is not visible in this process; keep every GPU of the job visible "
                  "(tilecast-launch sets TILECAST_DEVICE and leaves CUDA_VISIBLE_DEVICES alone)");
    }
    int can = 0;
    check_cuda(cudaDeviceCanAccessPeer(&can, device, peer), "cudaDeviceCanAccessPeer");
    if (!can) {
      throw Error("symmetric heap: GPU " + std::to_string(device) + " (rank " + std::to_string(me) +
                  ") cannot access GPU " + std::to_string(peer) + " (" + who +
                  ") by peer access (no NVLink or PCIe P2P path); these GPUs cannot share symmetric memory");
    }
  }

  // 3-5. Export, swap descriptors, import and map.
  CUmemGenericAllocationHandle own{};
  check(drv.cuMemCreate(&own, stride, &prop, 0), "cuMemCreate");
  int own_fd = -1;
  CUresult er = drv.cuMemExportToShareableHandle(&own_fd, own, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (er != CUDA_SUCCESS) {
    drv.cuMemRelease(own);
    check(er, "cuMemExportToShareableHandle");
  }
  FdExchange ex;
  try {
    ex = exchange_fds(rendezvous, own_fd, transport);
  } catch (...) {
    ::close(own_fd);
    drv.cuMemRelease(own);
    throw;
  }
  ::close(own_fd);

  SymmetricHeap heap;
  heap.device_ = device;
  heap.transport_ = ex.used;
  heap.one_gpu_ = one_gpu;
  CUdeviceptr base = 0;
  std::vector<bool> mapped(static_cast<size_t>(n), false);
  auto cleanup = [&] {
    for (int r = 0; r < n; ++r) {
      if (mapped[r]) drv.cuMemUnmap(base + static_cast<CUdeviceptr>(r) * stride, stride);
    }
    if (base != 0) drv.cuMemAddressFree(base, stride * static_cast<size_t>(n));
    for (int& f : ex.fds) {
      if (f >= 0) ::close(f);
      f = -1;
    }
    drv.cuMemRelease(own);
  };
  try {
    check(drv.cuMemAddressReserve(&base, stride * static_cast<size_t>(n), granularity, 0, 0), "cuMemAddressReserve");
    for (int r = 0; r < n; ++r) {
      CUmemGenericAllocationHandle h = own;
      if (r != me) {
        check(drv.cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(ex.fds[r])),
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
              "cuMemImportFromShareableHandle");
      }
      const CUresult em = drv.cuMemMap(base + static_cast<CUdeviceptr>(r) * stride, stride, 0, h, 0);
      // The mapping holds its own reference: the handle can go now, and the physical memory goes
      // when the last process unmaps it.
      if (r != me) drv.cuMemRelease(h);
      check(em, "cuMemMap");
      mapped[r] = true;
      ::close(ex.fds[r]);
      ex.fds[r] = -1;
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(drv.cuMemSetAccess(base, stride * static_cast<size_t>(n), &access, 1), "cuMemSetAccess");
  } catch (...) {
    cleanup();
    throw;
  }
  drv.cuMemRelease(own);
  heap.map_ = SymmetricMap{static_cast<uint64_t>(base), static_cast<uint64_t>(stride), me, n};

  // 6. Zero our region before anyone may signal into it.
  check_cuda(cudaMemset(heap.local(), 0, stride), "cudaMemset (symmetric heap)");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (symmetric heap)");
  rendezvous.barrier();
  return heap;
}

void SymmetricHeap::release() noexcept {
  if (map_.base == 0) return;
  const Driver& drv = Driver::get();
  int caller_device = -1;
  const bool known = cudaGetDevice(&caller_device) == cudaSuccess;
  cudaSetDevice(device_);
  cudaDeviceSynchronize();
  for (int r = 0; r < map_.num_ranks; ++r) drv.cuMemUnmap(map_.base + static_cast<uint64_t>(r) * map_.stride, map_.stride);
  drv.cuMemAddressFree(map_.base, map_.stride * static_cast<uint64_t>(map_.num_ranks));
  map_ = SymmetricMap{};
  if (known && caller_device != device_) cudaSetDevice(caller_device);  // the caller's device stays current
}

SymmetricHeap::~SymmetricHeap() { release(); }

SymmetricHeap::SymmetricHeap(SymmetricHeap&& o) noexcept
    : map_(o.map_), device_(o.device_), transport_(o.transport_), one_gpu_(o.one_gpu_) {
  o.map_ = SymmetricMap{};
}

SymmetricHeap& SymmetricHeap::operator=(SymmetricHeap&& o) noexcept {
  if (this != &o) {
    release();
    map_ = o.map_;
    device_ = o.device_;
    transport_ = o.transport_;
    one_gpu_ = o.one_gpu_;
    o.map_ = SymmetricMap{};
  }
  return *this;
}

}  // namespace tilecast::comm
