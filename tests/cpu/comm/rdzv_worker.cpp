// A rank for the launcher tests: joins the launcher's rendezvous, checks what the launcher told
// it, swaps descriptors, and exits 0, or with a code that says what went wrong.
//   rdzv_worker [socket|pidfd|auto] [fail-rank R [slow-exit]]
// slow-exit: the failing rank closes its rendezvous first and exits 200 ms later, as a process
// that tears down a large state does: its peers see the socket close before it is gone.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tilecast/comm/fd_exchange.hpp"
#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

int main(int argc, char** argv) {
  namespace tc = tilecast::comm;
  try {
    const tc::FdTransport how = tc::parse_fd_transport(argc > 1 ? argv[1] : "auto");
    const int fail_rank = argc > 3 && std::string(argv[2]) == "fail-rank" ? std::atoi(argv[3]) : -1;
    const bool slow_exit = argc > 4 && std::string(argv[4]) == "slow-exit";
    auto rdzv = tc::SocketRendezvous::from_env();
    const int me = rdzv->rank(), n = rdzv->size();
    const int per_gpu = std::atoi(std::getenv("TILECAST_PROCS_PER_GPU"));
    if (std::atoi(std::getenv("TILECAST_DEVICE")) != me / per_gpu) return 3;
    std::vector<int> ranks(static_cast<size_t>(n));
    rdzv->allgather(&me, ranks.data(), sizeof me);
    for (int r = 0; r < n; ++r) {
      if (ranks[r] != r) return 4;
    }
    if (me == fail_rank) {
      // The others now wait for it at the next collective.
      if (slow_exit) {
        rdzv.reset();
        ::usleep(200 * 1000);
      }
      return 42;
    }
    const int fd = ::memfd_create("worker", MFD_CLOEXEC);
    const std::string text = "rank " + std::to_string(me);
    if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return 5;
    tc::FdExchange ex = tc::exchange_fds(*rdzv, fd, how);
    for (int r = 0; r < n; ++r) {
      char buf[32] = {};
      if (::pread(ex.fds[r], buf, sizeof buf - 1, 0) <= 0 || std::string(buf) != "rank " + std::to_string(r)) return 6;
      ::close(ex.fds[r]);
    }
    rdzv->barrier();
    if (me == 0) std::printf("worker: %d ranks exchanged descriptors by %s\n", n, tc::fd_transport_name(ex.used));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker: %s\n", e.what());
    return 9;
  }
}
