// Passing the file descriptors that export cuMem allocations (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
// between the processes of one host.
//
// A descriptor is a per-process index into the kernel's file table: its number means nothing in
// another process, and NCCL (or any byte channel) cannot carry it. Two ways across:
//   kPidfd   pidfd_getfd(2) (Linux 5.6+): each rank publishes (pid, fd number) as plain bytes over
//            any rendezvous, NCCL included, and every peer copies the descriptor straight out of
//            the owner's file table. Needs ptrace-attach permission over the owner: same user, and
//            under Yama ptrace_scope 1 the owner's consent, which each rank gives for the moment of
//            the exchange (prctl PR_SET_PTRACER_ANY, withdrawn after; only at scope 1, since the
//            withdrawal also drops a consent the process gave before, a crash handler's, which
//            prctl cannot read back).
//   kSocket  SCM_RIGHTS over a UNIX socket: the launcher's rendezvous, or one made up for the
//            purpose among the ranks of the given rendezvous (SocketRendezvous::over).
//   kAuto    kPidfd where every rank succeeds, else kSocket.
#pragma once

#include <string>
#include <vector>

#include "tilecast/comm/rendezvous.hpp"

namespace tilecast::comm {

enum class FdTransport { kAuto, kPidfd, kSocket };

const char* fd_transport_name(FdTransport t);
// "auto", "pidfd" or "socket" (the launcher's TILECAST_FD_TRANSPORT); throws on anything else.
FdTransport parse_fd_transport(const char* name);

struct FdExchange {
  std::vector<int> fds;   // one per rank, owned by the caller (its own is a duplicate)
  FdTransport used;
};

// Whether Yama's ptrace_scope, as /proc/sys/kernel/yama/ptrace_scope reads (`text`; empty where
// there is no Yama), makes a peer need the owner's PR_SET_PTRACER consent: at scope 1 only. At 0 a
// process of the same user may attach anyway; at 2 and 3 consent does not help.
bool ptrace_consent_needed(const std::string& ptrace_scope_text);

// Collective over `meta`: every rank passes one descriptor and receives one for each rank.
FdExchange exchange_fds(Rendezvous& meta, int fd, FdTransport how = FdTransport::kAuto);

}  // namespace tilecast::comm
