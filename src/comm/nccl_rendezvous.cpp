// NCCL as the metadata carrier for one process per GPU.
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
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

namespace {

using Clock = std::chrono::steady_clock;
// How often a wait asks NCCL and the stream: metadata moves at setup, where 100 us is nothing.
constexpr auto kPollInterval = std::chrono::microseconds(100);

// Polls `comm` until it is out of ncclInProgress and `done` says the operation `what` finished.
// On an NCCL error or past `timeout_s`, aborts the communicator if `owned` (which also ends its
// kernels still waiting on the device) and throws.
void wait_on(ncclComm_t comm, bool owned, double timeout_s, int rank, int size, const char* what,
             const std::function<bool()>& done) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  const auto fail = [&](const std::string& why) {
    if (owned) ncclCommAbort(comm);
    throw Error("NcclRendezvous rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + what + " " + why +
                (owned ? "; the communicator was aborted" : "; the caller's communicator is left as it is (ncclCommAbort it)"));
  };
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(comm, &state);
    if (asked != ncclSuccess) fail(std::string("could not be followed: ncclCommGetAsyncError: ") + ncclGetErrorString(asked));
    if (state != ncclSuccess && state != ncclInProgress) fail(std::string("failed: ") + ncclGetErrorString(state));
    if (state == ncclSuccess && done()) return;
    if (Clock::now() >= deadline) {
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      fail("did not finish within " + std::to_string(waited) + " s (a rank that died or never joined)");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace

NcclRendezvous::NcclRendezvous(ncclComm_t comm, int device, cudaStream_t stream, double timeout_s)
    : comm_(comm), device_(device), stream_(stream), timeout_s_(timeout_s) {
  if (comm == nullptr) throw Error("NcclRendezvous: null communicator");
  check_timeout_s(timeout_s, "NcclRendezvous");
  check_nccl(ncclCommUserRank(comm, &rank_), "ncclCommUserRank");
  check_nccl(ncclCommCount(comm, &size_), "ncclCommCount");
}

std::unique_ptr<NcclRendezvous> NcclRendezvous::create(Rendezvous& bootstrap, int device, double timeout_s) {
  check_timeout_s(timeout_s, "NcclRendezvous");
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
  return join(id, bootstrap.size(), bootstrap.rank(), device, timeout_s);
}

std::unique_ptr<NcclRendezvous> NcclRendezvous::join(const ncclUniqueId& id, int size, int rank, int device,
                                                     double timeout_s) {
  check_timeout_s(timeout_s, "NcclRendezvous");
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; wait_on below is the wait, with a deadline
  ncclComm_t comm = nullptr;
  ncclUniqueId copy = id;
  const ncclResult_t r = ncclCommInitRankConfig(&comm, size, copy, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    if (comm != nullptr) ncclCommAbort(comm);
    check_nccl(r, "ncclCommInitRankConfig");
  }
  wait_on(comm, true, timeout_s, rank, size, "ncclCommInitRank", [] { return true; });
  std::unique_ptr<NcclRendezvous> made;
  try {
    made = std::make_unique<NcclRendezvous>(comm, device, nullptr, timeout_s);
  } catch (...) {
    ncclCommAbort(comm);
    throw;
  }
  made->owns_comm_ = true;
  return made;
}

NcclRendezvous::~NcclRendezvous() {
  if (staging_ != nullptr) cudaFree(staging_);
  if (!owns_comm_ || comm_ == nullptr) return;
  // Ours is non-blocking: finalize (flush, then quiesce with the peers), wait for it under the
  // deadline, and only then destroy, which is local; a finalize that fails or times out aborts.
  const ncclResult_t r = ncclCommFinalize(comm_);
  if (r != ncclSuccess && r != ncclInProgress) {
    ncclCommAbort(comm_);
    return;
  }
  try {
    wait_on(comm_, true, timeout_s_, rank_, size_, "ncclCommFinalize", [] { return true; });
  } catch (const std::exception&) {
    return;  // wait_on aborted the communicator; a destructor has no one to tell
  }
  ncclCommDestroy(comm_);
}

void NcclRendezvous::allgather(const void* in, void* out, size_t bytes) {
  if (bytes == 0) return;
  if (comm_ == nullptr) throw Error("NcclRendezvous: the communicator was aborted by an earlier timeout or error");
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
  // A non-blocking communicator (ours) may answer ncclInProgress: the wait below covers it.
  const ncclResult_t r = ncclAllGather(dev_in, dev_out, bytes, ncclUint8, comm_, stream_);
  if (r != ncclSuccess && r != ncclInProgress) check_nccl(r, "ncclAllGather");
  // The wait comes before the copy out: a copy into pageable memory returns only once done, so
  // queued behind an all-gather that never ends it would hang where no deadline reaches.
  const auto stream_done = [this] {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    check_cuda(e, "cudaStreamQuery (rendezvous)");
    return true;
  };
  try {
    wait_on(comm_, owns_comm_, timeout_s_, rank_, size_, "ncclAllGather", stream_done);
  } catch (...) {
    if (owns_comm_) comm_ = nullptr;  // aborted
    throw;
  }
  check_cuda(cudaMemcpyAsync(out, dev_out, bytes * static_cast<size_t>(size_), cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (rendezvous)");
}

}  // namespace tilecast::comm
