#include "tilecast/comm/fd_exchange.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "tilecast/types.hpp"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace tilecast::comm {
namespace {

struct Published {
  int32_t pid;
  int32_t fd;
  // The PID namespace the pid is a number in (/proc/self/ns/pid's device and inode; 0 when
  // unknown). A pid names the same process only within one: ranks in containers that share the
  // host's identity are often each pid 1, and pidfd_open(1) would open another process (or this
  // one, whose descriptor of that number then passes for the peer's).
  uint64_t pid_ns_dev;
  uint64_t pid_ns_ino;
};

Published publish(int fd) {
  Published p{static_cast<int32_t>(::getpid()), fd, 0, 0};
  struct stat ns {};
  if (::stat("/proc/self/ns/pid", &ns) == 0) {
    p.pid_ns_dev = static_cast<uint64_t>(ns.st_dev);
    p.pid_ns_ino = static_cast<uint64_t>(ns.st_ino);
  }
  return p;
}

struct Outcome {
  int32_t ok;
  int32_t err;    // errno of the first failure
  int32_t peer;   // whose descriptor could not be taken
};

void close_all(std::vector<int>& fds) {
  for (int& f : fds) {
    if (f >= 0) ::close(f);
    f = -1;
  }
}

bool same_pid_namespace(const Published& a, const Published& b) {
  return a.pid_ns_ino != 0 && a.pid_ns_dev == b.pid_ns_dev && a.pid_ns_ino == b.pid_ns_ino;
}

std::string read_ptrace_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The descriptors this rank took so far, undone unless the exchange succeeds, and its consent to
// be traced, always withdrawn: a collective that throws (a peer died) must not leave either behind.
struct TakenSoFar {
  std::vector<int>& fds;
  bool kept = false;
  bool consented = false;
  ~TakenSoFar() {
    if (consented) ::prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    if (!kept) close_all(fds);
  }
};

// Returns true with `out` filled if every rank took every peer's descriptor.
bool exchange_by_pidfd(Rendezvous& meta, int fd, std::vector<int>& out, std::string* why) {
  const int n = meta.size();
  const Published mine = publish(fd);
  std::vector<Published> all(static_cast<size_t>(n));
  meta.allgather(&mine, all.data(), sizeof mine);
  out.assign(static_cast<size_t>(n), -1);
  TakenSoFar taken{out};
  // Under Yama ptrace_scope 1 only an ancestor may take our descriptors unless we consent.
  if (ptrace_consent_needed(read_ptrace_scope()))
    taken.consented = ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0;
  meta.barrier();  // every owner consents before anyone takes
  Outcome me{1, 0, -1};
  for (int r = 0; r < n && me.ok; ++r) {
    if (r == meta.rank()) {
      out[r] = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      if (out[r] < 0) me = {0, errno, r};
      continue;
    }
    if (!same_pid_namespace(mine, all[r])) {
      me = {0, EXDEV, r};
      break;
    }
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, all[r].pid, 0));
    if (pidfd < 0) {
      me = {0, errno, r};
      break;
    }
    out[r] = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, all[r].fd, 0));
    if (out[r] < 0) me = {0, errno, r};
    ::close(pidfd);
  }
  std::vector<Outcome> outcomes(static_cast<size_t>(n));
  meta.allgather(&me, outcomes.data(), sizeof me);  // also keeps every owner's fd open until now
  for (int r = 0; r < n; ++r) {
    if (!outcomes[r].ok) {
      if (why != nullptr) {
        *why = "rank " + std::to_string(r) + " could not take rank " + std::to_string(outcomes[r].peer) +
               "'s descriptor with pidfd_getfd: " +
               (outcomes[r].err == EXDEV ? std::string("another PID namespace (or none known), where its pid names "
                                                       "another process")
                                         : std::string(std::strerror(outcomes[r].err)));
      }
      return false;
    }
  }
  taken.kept = true;
  return true;
}

std::vector<int> exchange_by_socket(Rendezvous& meta, int fd) {
  if (auto* sock = dynamic_cast<SocketRendezvous*>(&meta)) return sock->allgather_fds(fd);
  return SocketRendezvous::over(meta)->allgather_fds(fd);
}

}  // namespace

const char* fd_transport_name(FdTransport t) {
  switch (t) {
    case FdTransport::kPidfd: return "pidfd";
    case FdTransport::kSocket: return "socket";
    default: return "auto";
  }
}

FdTransport parse_fd_transport(const char* name) {
  const std::string s = name == nullptr ? "" : name;
  if (s.empty() || s == "auto") return FdTransport::kAuto;
  if (s == "pidfd") return FdTransport::kPidfd;
  if (s == "socket") return FdTransport::kSocket;
  throw Error("unknown descriptor transport '" + s + "' (auto, pidfd or socket)");
}

bool ptrace_consent_needed(const std::string& ptrace_scope_text) {
  const size_t first = ptrace_scope_text.find_first_not_of(" \t\n");
  if (first == std::string::npos) return false;
  const size_t last = ptrace_scope_text.find_last_not_of(" \t\n");
  return ptrace_scope_text.substr(first, last - first + 1) == "1";
}

FdExchange exchange_fds(Rendezvous& meta, int fd, FdTransport how) {
  if (fd < 0) throw Error("exchange_fds: invalid descriptor " + std::to_string(fd));
  if (how != FdTransport::kSocket) {
    std::vector<int> fds;
    std::string why;
    if (exchange_by_pidfd(meta, fd, fds, &why)) return {std::move(fds), FdTransport::kPidfd};
    if (how == FdTransport::kPidfd) throw Error("descriptor exchange: " + why);
  }
  return {exchange_by_socket(meta, fd), FdTransport::kSocket};
}

}  // namespace tilecast::comm
