// The launcher's socket rendezvous and the descriptor exchange, with forked processes as ranks
// (no GPU involved: the descriptors are memfds, as good as cuMem's for the kernel).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tilecast/comm/fd_exchange.hpp"
#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

namespace tc = tilecast::comm;

namespace {

constexpr int kSkip = 77;

std::string fresh_address() {
  std::random_device rd;
  return "@tilecast-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

// Forks one process per rank in `ranks`, each running `body(rank)` and exiting with its return
// value (or 99 if it threw, after printing the error). Returns the exit codes.
std::vector<int> run_ranks(const std::vector<int>& ranks, const std::function<int(int)>& body) {
  std::vector<pid_t> pids;
  for (int r : ranks) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 99;
      try {
        code = body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

std::vector<int> all_ranks(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// A descriptor whose contents name its rank.
int named_memfd(int rank) {
  const int fd = ::memfd_create("tilecast-test", MFD_CLOEXEC);
  const std::string text = "payload of rank " + std::to_string(rank);
  if (fd < 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return -1;
  return fd;
}

// 0 if every received descriptor reads as the right rank's memfd.
int check_fds(const std::vector<int>& fds, int n) {
  if (static_cast<int>(fds.size()) != n) return 10;
  for (int r = 0; r < n; ++r) {
    char buf[64] = {};
    if (::pread(fds[r], buf, sizeof buf - 1, 0) <= 0) return 11;
    if (std::string(buf) != "payload of rank " + std::to_string(r)) {
      std::fprintf(stderr, "descriptor %d reads '%s'\n", r, buf);
      return 12;
    }
    ::close(fds[r]);
  }
  return 0;
}

// Forwards to another rendezvous without being a SocketRendezvous: stands in for NCCL, which
// cannot carry descriptors, so that exchange_fds must build its own socket.
class BytesOnly final : public tc::Rendezvous {
 public:
  explicit BytesOnly(tc::Rendezvous& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void allgather(const void* in, void* out, size_t bytes) override { inner_.allgather(in, out, bytes); }

 private:
  tc::Rendezvous& inner_;
};

size_t open_fds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Rank 0 of two in one process: the peer's contributions are this process's own (its pid and
// descriptor), run through `tamper` first; collective number `throw_at` (from 1) throws, as a
// rendezvous does when a peer dies.
class MirrorRendezvous final : public tc::Rendezvous {
 public:
  MirrorRendezvous(int throw_at, std::function<void(char* peer, size_t bytes)> tamper = {})
      : throw_at_(throw_at), tamper_(std::move(tamper)) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allgather(const void* in, void* out, size_t bytes) override {
    if (++calls_ == throw_at_) throw tilecast::Error("rendezvous: rank 1 died");
    std::memcpy(out, in, bytes);
    std::memcpy(static_cast<char*>(out) + bytes, in, bytes);
    if (tamper_) tamper_(static_cast<char*>(out) + bytes, bytes);
  }

 private:
  int calls_ = 0, throw_at_;
  std::function<void(char*, size_t)> tamper_;
};

}  // namespace

TEST(CommSocketRendezvous, AllgatherBarrierBroadcast) {
  const std::string addr = fresh_address();
  constexpr int n = 4;
  const auto codes = run_ranks(all_ranks(n), [&](int r) {
    tc::SocketRendezvous rdzv(addr, r, n, 20.0);
    for (size_t bytes : {size_t{1}, size_t{17}, size_t{4096}, size_t{1} << 20}) {
      std::vector<unsigned char> in(bytes), out(bytes * n);
      for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(r * 31 + i);
      rdzv.allgather(in.data(), out.data(), bytes);
      for (int src = 0; src < n; ++src) {
        for (size_t i = 0; i < bytes; ++i) {
          if (out[src * bytes + i] != static_cast<unsigned char>(src * 31 + i)) return 1;
        }
      }
      rdzv.barrier();
    }
    int value = r == 2 ? 4242 : -1;
    rdzv.broadcast(&value, sizeof value, 2);
    return value == 4242 ? 0 : 2;
  });
  EXPECT_EQ(codes, std::vector<int>(n, 0));
}

TEST(CommSocketRendezvous, FileDescriptorsTravel) {
  const std::string addr = fresh_address();
  constexpr int n = 3;
  const auto codes = run_ranks(all_ranks(n), [&](int r) {
    tc::SocketRendezvous rdzv(addr, r, n, 20.0);
    const int fd = named_memfd(r);
    return check_fds(rdzv.allgather_fds(fd), n);
  });
  EXPECT_EQ(codes, std::vector<int>(n, 0));
}

TEST(CommFdExchange, EveryTransportDeliversEveryDescriptor) {
  for (tc::FdTransport how : {tc::FdTransport::kSocket, tc::FdTransport::kPidfd, tc::FdTransport::kAuto}) {
    for (bool bytes_only : {false, true}) {
      const std::string addr = fresh_address();
      constexpr int n = 3;
      const auto codes = run_ranks(all_ranks(n), [&](int r) {
        tc::SocketRendezvous sock(addr, r, n, 20.0);
        BytesOnly wrapped(sock);
        tc::Rendezvous& meta = bytes_only ? static_cast<tc::Rendezvous&>(wrapped) : sock;
        const int fd = named_memfd(r);
        tc::FdExchange ex;
        try {
          ex = tc::exchange_fds(meta, fd, how);
        } catch (const tilecast::Error& e) {
          // pidfd_getfd may be refused by the sandbox (seccomp, no ptrace rights): say so.
          if (how == tc::FdTransport::kPidfd) {
            std::fprintf(stderr, "rank %d: %s\n", r, e.what());
            return kSkip;
          }
          throw;
        }
        ::close(fd);
        if (how != tc::FdTransport::kAuto && ex.used != how) return 20;
        return check_fds(ex.fds, n);
      });
      if (how == tc::FdTransport::kPidfd && codes == std::vector<int>(n, kSkip)) {
        std::printf("pidfd_getfd is not permitted here; the socket transport covers this host\n");
        continue;
      }
      EXPECT_EQ(codes, std::vector<int>(n, 0))
          << tc::fd_transport_name(how) << (bytes_only ? " over a bytes-only rendezvous" : "");
    }
  }
}

// PR_SET_PTRACER is set (and withdrawn, which drops any consent given before) only where Yama
// asks for it.
TEST(CommFdExchange, PtraceConsentOnlyAtYamaScopeOne) {
  EXPECT_TRUE(tc::ptrace_consent_needed("1\n"));
  EXPECT_TRUE(tc::ptrace_consent_needed(" 1 "));
  for (const char* other : {"0\n", "2\n", "3", "", "\n", "10", "1 2"})
    EXPECT_FALSE(tc::ptrace_consent_needed(other)) << "'" << other << "'";
}

// A peer dying in the middle (the collective after the descriptors were taken throws): the
// descriptors taken so far are closed, not leaked.
TEST(CommFdExchange, APeerDyingMidwayLeavesNoDescriptorBehind) {
  const int fd = named_memfd(0);
  const size_t before = open_fds();
  for (int throw_at : {2, 3}) {  // the consent barrier, the outcomes
    MirrorRendezvous meta(throw_at);
    EXPECT_THROW(tc::exchange_fds(meta, fd, tc::FdTransport::kPidfd), tilecast::Error) << throw_at;
    EXPECT_EQ(open_fds(), before) << "collective " << throw_at << " threw";
  }
  ::close(fd);
}

// A peer whose pid is a number in another PID namespace (a container's pid 1): pidfd_open would
// open another process, here this one, so pidfd is refused with the reason.
TEST(CommFdExchange, APidOfAnotherNamespaceIsNeverOpened) {
  const int fd = named_memfd(0);
  const size_t before = open_fds();
  // The published record's last 8 bytes are its namespace's inode: the peer's made another.
  MirrorRendezvous meta(0, [](char* peer, size_t bytes) {
    if (bytes >= 16) peer[bytes - 1] ^= 0x5a;
  });
  try {
    tc::exchange_fds(meta, fd, tc::FdTransport::kPidfd);
    ADD_FAILURE() << "a pid of another namespace was opened";
  } catch (const tilecast::Error& e) {
    EXPECT_NE(std::string(e.what()).find("another PID namespace"), std::string::npos) << e.what();
  }
  EXPECT_EQ(open_fds(), before);
  ::close(fd);
}

TEST(CommSocketRendezvous, MismatchedContributionsAreNamed) {
  const std::string addr = fresh_address();
  constexpr int n = 3;
  const auto codes = run_ranks(all_ranks(n), [&](int r) {
    tc::SocketRendezvous rdzv(addr, r, n, 10.0);
    std::vector<char> in(r == 1 ? 8 : 4), out(in.size() * n);
    try {
      rdzv.allgather(in.data(), out.data(), in.size());
    } catch (const tilecast::Error& e) {
      const std::string what = e.what();
      if (r == 0) return what.find("rank 1 contributed 8 bytes where 4 were expected") != std::string::npos ? 3 : 4;
      return 5;  // the others learn that rank 0 gave up
    }
    return 0;
  });
  EXPECT_EQ(codes[0], 3);
  EXPECT_EQ(codes[1], 5);
  EXPECT_EQ(codes[2], 5);
}

TEST(CommSocketRendezvous, MissingRankTimesOutWithAMessage) {
  const std::string addr = fresh_address();
  const auto codes = run_ranks({0, 1}, [&](int r) {  // rank 2 of 3 never starts
    try {
      tc::SocketRendezvous rdzv(addr, r, 3, 0.5);
      rdzv.barrier();
    } catch (const tilecast::Error& e) {
      const std::string what = e.what();
      if (r == 0) return what.find("timed out waiting for 1 more rank(s)") != std::string::npos ? 3 : 4;
      return what.find("rank 0") != std::string::npos ? 5 : 6;
    }
    return 0;
  });
  EXPECT_EQ(codes, (std::vector<int>{3, 5}));
}

// A peer that is alive but never reads: a message larger than the socket's buffer must not block
// the sender past its timeout (a send waited for the peer to read or exit before).
TEST(CommSocketRendezvous, SendToAPeerThatNeverReadsTimesOut) {
  const std::string addr = fresh_address();
  const auto codes = run_ranks({0, 1}, [&](int r) {
    tc::SocketRendezvous rdzv(addr, r, 2, 1.0);
    if (r == 0) {
      std::this_thread::sleep_for(std::chrono::seconds(3));  // connected, never reading
      return 0;
    }
    std::vector<char> big(size_t{4} << 20), all(2 * big.size());
    const auto t0 = std::chrono::steady_clock::now();
    try {
      rdzv.allgather(big.data(), all.data(), big.size());
    } catch (const tilecast::Error& e) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "rank 1 gave up after %.2f s: %s\n", s, e.what());
      return s < 2.5 && std::string(e.what()).find("timed out") != std::string::npos ? 3 : 4;
    }
    return 5;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 3}));
}

// A constructor that throws (rank 1 never came) closes what it opened and removes the socket file
// it bound, so that the next try binds the same path again.
TEST(CommSocketRendezvous, FailedConstructorLeavesNothingBehind) {
  const std::string path = (std::filesystem::temp_directory_path() / ("tilecast-rdzv-" + std::to_string(::getpid()))).string();
  const size_t before = open_fds();
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      tc::SocketRendezvous rdzv(path, 0, 2, 0.2);
      FAIL() << "rank 1 never connects: the constructor must throw";
    } catch (const tilecast::Error& e) {
      EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << "attempt " << attempt << ": " << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_EQ(open_fds(), before);
  }
}

// Timeouts from the environment or the caller: a finite number of seconds in (0, a week], all of
// the text. NaN, infinity or 1e300 gave a deadline that never came.
TEST(CommSocketRendezvous, TimeoutsAreValidated) {
  for (const char* bad : {"inf", "nan", "1e300", "600s", "abc", "0", "-1", ""}) {
    try {
      tc::parse_timeout_s(bad, "TILECAST_RDZV_TIMEOUT_S");
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const tilecast::Error& e) {
      EXPECT_NE(std::string(e.what()).find("TILECAST_RDZV_TIMEOUT_S"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(tc::parse_timeout_s("2.5", "x"), 2.5);
  EXPECT_THROW(tc::SocketRendezvous("@x", 0, 2, std::nan("")), tilecast::Error);
  EXPECT_THROW(tc::SocketRendezvous("@x", 0, 2, 1e300), tilecast::Error);
  ::setenv("TILECAST_RANK", "0", 1);
  ::setenv("TILECAST_WORLD_SIZE", "2", 1);
  ::setenv("TILECAST_RDZV", "@unused", 1);
  ::setenv("TILECAST_RDZV_TIMEOUT_S", "nan", 1);
  EXPECT_THROW(tc::SocketRendezvous::from_env(), tilecast::Error);
  for (const char* v : {"TILECAST_RANK", "TILECAST_WORLD_SIZE", "TILECAST_RDZV", "TILECAST_RDZV_TIMEOUT_S"}) ::unsetenv(v);
}

// Checked before NCCL or the GPU is touched, so a bad timeout is named on any machine.
TEST(CommNcclRendezvous, TimeoutsAreValidated) {
  const ncclUniqueId id{};
  for (double bad : {0.0, -1.0, std::nan(""), 1e300}) {
    try {
      tc::NcclRendezvous::join(id, 2, 0, 0, bad);
      ADD_FAILURE() << bad << " s was taken";
    } catch (const tilecast::Error& e) {
      EXPECT_NE(std::string(e.what()).find("timeout"), std::string::npos) << e.what();
    }
  }
}

TEST(CommSocketRendezvous, RejectsBadArguments) {
  EXPECT_THROW(tc::SocketRendezvous("@x", 2, 2), tilecast::Error);
  EXPECT_THROW(tc::SocketRendezvous("@x", -1, 2), tilecast::Error);
  EXPECT_THROW(tc::SocketRendezvous("@x", 0, 0), tilecast::Error);
  EXPECT_THROW(tc::SocketRendezvous(std::string(200, 'a'), 0, 2), tilecast::Error);
  EXPECT_THROW(tc::parse_fd_transport("carrier-pigeon"), tilecast::Error);
  ::unsetenv("TILECAST_RANK");
  try {
    tc::SocketRendezvous::from_env();
    FAIL() << "from_env() without the launcher's variables must throw";
  } catch (const tilecast::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tilecast-launch"), std::string::npos) << e.what();
  }
  tc::SocketRendezvous alone("@unused", 0, 1);  // one rank needs no socket
  int x = 5, all = 0;
  alone.allgather(&x, &all, sizeof x);
  EXPECT_EQ(all, 5);
}
