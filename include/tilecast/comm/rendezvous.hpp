// How the ranks of a job find each other and swap small blobs of metadata on the host.
//
// Two carriers:
//   SocketRendezvous  the launcher's (tools/launch): a UNIX socket, all traffic through rank 0.
//                     Works for any number of processes per GPU, and carries file descriptors
//                     (SCM_RIGHTS), which nothing else here can.
//   NcclRendezvous    NCCL (the toolkit's): one process per GPU, as NCCL insists; what users who
//                     already run NCCL have. It moves bytes only, never file descriptors.
// Symmetric memory (symmetric_heap.hpp) needs both kinds of traffic; fd_exchange.hpp says how
// the descriptors travel when the metadata goes through NCCL.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace tilecast::comm {

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every rank passes `bytes` bytes (the same count everywhere); `out` receives
  // size() * bytes, rank r's contribution at offset r * bytes.
  virtual void allgather(const void* in, void* out, size_t bytes) = 0;
  // Collective: returns once every rank has called it.
  void barrier();
  // Collective: rank `root`'s `bytes` bytes end up in every rank's `data`.
  void broadcast(void* data, size_t bytes, int root);
};

// The longest rendezvous timeout taken, a week: no job waits that long for a peer, and a
// deadline that far ahead stays well inside the clock's range.
inline constexpr double kMaxRendezvousTimeoutS = 7 * 24 * 3600.0;

// `text` as a rendezvous timeout in seconds: all of it a finite number in (0,
// kMaxRendezvousTimeoutS]; else tilecast::Error naming `what` (the variable or option).
double parse_timeout_s(const char* text, const std::string& what);
// Throws tilecast::Error, naming `who`, unless timeout_s is in (0, kMaxRendezvousTimeoutS] (NaN
// is not: an infinite deadline's clock arithmetic would overflow).
void check_timeout_s(double timeout_s, const std::string& who);

class SocketRendezvous final : public Rendezvous {
 public:
  // Connects rank `rank` of `size` at `address` (a path, or "@name" for Linux's abstract socket
  // namespace). Rank 0 listens; the others retry until `timeout_s` has passed. Every later send
  // and receive gives up after `timeout_s` too, a peer that is alive but never reads included.
  SocketRendezvous(std::string address, int rank, int size, double timeout_s = 120.0);
  ~SocketRendezvous() override;
  SocketRendezvous(const SocketRendezvous&) = delete;
  SocketRendezvous& operator=(const SocketRendezvous&) = delete;

  // The rendezvous tilecast-launch describes in TILECAST_RANK, TILECAST_WORLD_SIZE and
  // TILECAST_RDZV; throws tilecast::Error if they are missing or malformed.
  static std::unique_ptr<SocketRendezvous> from_env();
  // True if the launcher's variables are set.
  static bool in_env();
  // A socket rendezvous among the ranks of `meta`, at an address rank 0 makes up and sends
  // through `meta` (used to pass descriptors when `meta` is NCCL).
  static std::unique_ptr<SocketRendezvous> over(Rendezvous& meta, double timeout_s = 120.0);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(const void* in, void* out, size_t bytes) override;
  // Collective: every rank passes one descriptor and receives a descriptor for each rank's (its
  // own duplicated), which the caller must close.
  std::vector<int> allgather_fds(int fd);

 private:
  // The constructor's connections; on a throw the constructor closes what they opened.
  void connect_ranks(const std::string& address);
  void close_all();

  int rank_;
  int size_;
  double timeout_s_;
  int listen_fd_ = -1;
  std::vector<int> peers_;  // rank 0: a connection per rank (index 0 unused); others: [0] = rank 0
};

// Every wait on NCCL gives up after timeout_s with a tilecast::Error naming the call, the rank and
// the time waited (a rank that died or never joined would otherwise hang the rest).
class NcclRendezvous final : public Rendezvous {
 public:
  // Uses an existing communicator (not owned); `stream` carries the all-gathers. An all-gather
  // that times out throws and leaves the communicator to its owner (ncclCommAbort frees the
  // stream's stuck kernel).
  NcclRendezvous(ncclComm_t comm, int device, cudaStream_t stream = nullptr, double timeout_s = 120.0);
  // Creates a communicator over `bootstrap` (which carries the unique id). Refuses, with a clear
  // error, ranks that share a GPU: NCCL does not allow it.
  static std::unique_ptr<NcclRendezvous> create(Rendezvous& bootstrap, int device, double timeout_s = 120.0);
  // Rank `rank` of `size` joins the communicator `id` names (created non-blocking, so that the
  // wait for the other ranks has a deadline). A communicator this made is aborted on a timeout.
  static std::unique_ptr<NcclRendezvous> join(const ncclUniqueId& id, int size, int rank, int device,
                                              double timeout_s = 120.0);
  ~NcclRendezvous() override;
  NcclRendezvous(const NcclRendezvous&) = delete;
  NcclRendezvous& operator=(const NcclRendezvous&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(const void* in, void* out, size_t bytes) override;
  ncclComm_t comm() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
  bool owns_comm_ = false;
  int device_ = 0;
  int rank_ = 0;
  int size_ = 1;
  cudaStream_t stream_ = nullptr;
  double timeout_s_ = 120.0;
  void* staging_ = nullptr;  // device buffer for the all-gathers
  size_t staging_bytes_ = 0;
};

// Throws tilecast::Error naming `what` if `r` is not ncclSuccess.
void check_nccl(ncclResult_t r, const char* what);
// Throws tilecast::Error naming `what` if `e` is not cudaSuccess.
void check_cuda(cudaError_t e, const char* what);

}  // namespace tilecast::comm
