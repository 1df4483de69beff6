// NCCL as the metadata carrier for one process per GPU.
#include <cstring>
#include <string>
#include <vector>

#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

namespace tilecast::comm {

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  throw Error(std::string(what) + " failed: " + ncclGetErrorString(r));
}

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

NcclRendezvous::NcclRendezvous(ncclComm_t comm, int device, cudaStream_t stream)
    : comm_(comm), device_(device), stream_(stream) {
  if (comm == nullptr) throw Error("NcclRendezvous: null communicator");
  check_nccl(ncclCommUserRank(comm, &rank_), "ncclCommUserRank");
  check_nccl(ncclCommCount(comm, &size_), "ncclCommCount");
}

std::unique_ptr<NcclRendezvous> NcclRendezvous::create(Rendezvous& bootstrap, int device) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  // NCCL aborts communicator creation when two ranks share a GPU; say so before it does.
  std::vector<cudaUUID_t> uuids(static_cast<size_t>(bootstrap.size()));
  bootstrap.allgather(&prop.uuid, uuids.data(), sizeof(cudaUUID_t));
  for (int a = 0; a < bootstrap.size(); ++a) {
    for (int b = a + 1; b < bootstrap.size(); ++b) {
      if (std::memcmp(&uuids[a], &uuids[b], sizeof(cudaUUID_t)) == 0) {
        throw Error("NCCL needs one process per GPU, but ranks " + std::to_string(a) + " and " +
                    std::to_string(b) + " share a GPU; use the socket rendezvous instead");
      }
    }
  }
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  bootstrap.broadcast(&id, sizeof id, 0);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank");
  auto r = std::make_unique<NcclRendezvous>(comm, device, nullptr);
  r->owns_comm_ = true;
  return r;
}

NcclRendezvous::~NcclRendezvous() {
  if (staging_ != nullptr) cudaFree(staging_);
  if (owns_comm_ && comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclRendezvous::allgather(const void* in, void* out, size_t bytes) {
  if (bytes == 0) return;
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  const size_t total = bytes * static_cast<size_t>(size_ + 1);  // the input sits after the output
  if (total > staging_bytes_) {
    if (staging_ != nullptr) check_cuda(cudaFree(staging_), "cudaFree");
    staging_ = nullptr;
    staging_bytes_ = 0;  // (a failed cudaMalloc below must not leave a size without a buffer)
    check_cuda(cudaMalloc(&staging_, total), "cudaMalloc (rendezvous staging)");
    staging_bytes_ = total;
  }
  char* dev_out = static_cast<char*>(staging_);
  char* dev_in = dev_out + bytes * static_cast<size_t>(size_);
  check_cuda(cudaMemcpyAsync(dev_in, in, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
  check_nccl(ncclAllGather(dev_in, dev_out, bytes, ncclUint8, comm_, stream_), "ncclAllGather");
  check_cuda(cudaMemcpyAsync(out, dev_out, bytes * static_cast<size_t>(size_), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (rendezvous)");
}

}  // namespace tilecast::comm
