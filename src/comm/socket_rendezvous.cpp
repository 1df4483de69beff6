// The launcher's rendezvous: a star of UNIX stream sockets around rank 0. Small (a few ranks,
// a few hundred bytes per collective), so simplicity wins over a tree or a ring.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

namespace tilecast::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMagic = 0x7463524Eu;  // "tcRN"

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t size;
};

struct Header {
  uint32_t magic;
  uint32_t num_fds;
  uint64_t bytes;
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

sockaddr_un make_address(const std::string& address, socklen_t* len) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const bool abstract = !address.empty() && address[0] == '@';
  if (address.size() >= sizeof(sa.sun_path)) {
    throw Error("rendezvous address too long (" + std::to_string(address.size()) + " bytes): " + address);
  }
  if (address.size() < 2) throw Error("rendezvous address is empty");
  std::memcpy(sa.sun_path, address.data(), address.size());
  if (abstract) sa.sun_path[0] = '\0';  // Linux's abstract namespace: no file to clean up
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size() + (abstract ? 0 : 1));
  return sa;
}

double remaining_ms(Clock::time_point deadline) {
  return std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
}

// Waits until `fd` is readable (or writable), or throws once `deadline` has passed.
void wait_for(int fd, short events, Clock::time_point deadline, const std::string& who) {
  for (;;) {
    const double ms = remaining_ms(deadline);
    if (ms <= 0) throw Error("rendezvous: timed out waiting for " + who);
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(ms, 1000.0)) + 1);
    if (r > 0) return;
    if (r < 0 && errno != EINTR) throw Error(errno_text("rendezvous: poll"));
  }
}

void send_all(int fd, const void* data, size_t bytes, const int* fds, uint32_t num_fds,
              Clock::time_point deadline, const std::string& who) {
  const char* p = static_cast<const char*>(data);
  bool fds_pending = num_fds > 0;
  while (bytes > 0) {
    wait_for(fd, POLLOUT, deadline, who);
    iovec iov{const_cast<char*>(p), bytes};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control;
    if (fds_pending) {  // the descriptors ride on the first byte sent
      control.assign(CMSG_SPACE(sizeof(int) * num_fds), 0);
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * num_fds);
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * num_fds);
    }
    // Without MSG_DONTWAIT a message larger than the socket's buffer blocks until the peer reads,
    // whatever the deadline: POLLOUT promises room for some bytes, not all.
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw Error(errno_text(("rendezvous: sending to " + who).c_str()));
    }
    fds_pending = false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

// Receives exactly `bytes`; descriptors that arrive are appended to `fds` (if given).
void recv_all(int fd, void* data, size_t bytes, std::vector<int>* fds, Clock::time_point deadline,
              const std::string& who) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    wait_for(fd, POLLIN, deadline, who);
    iovec iov{p, bytes};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 253)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw Error(errno_text(("rendezvous: receiving from " + who).c_str()));
    }
    if (n == 0) throw Error("rendezvous: " + who + " closed the connection (did it exit?)");
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
          int received = -1;
          std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          if (fds != nullptr) {
            fds->push_back(received);
          } else {
            ::close(received);
          }
        }
      }
    }
    if (msg.msg_flags & MSG_CTRUNC) throw Error("rendezvous: descriptors from " + who + " were truncated");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void send_message(int fd, const void* data, uint64_t bytes, const int* fds, uint32_t num_fds,
                  Clock::time_point deadline, const std::string& who) {
  const Header h{kMagic, num_fds, bytes};
  send_all(fd, &h, sizeof h, fds, num_fds, deadline, who);
  if (bytes > 0) send_all(fd, data, bytes, nullptr, 0, deadline, who);
}

// Receives one message of exactly `bytes` bytes and `num_fds` descriptors.
void recv_message(int fd, void* data, uint64_t bytes, uint32_t num_fds, std::vector<int>* fds,
                  Clock::time_point deadline, const std::string& who) {
  Header h{};
  std::vector<int> got;
  recv_all(fd, &h, sizeof h, &got, deadline, who);
  auto fail = [&](const std::string& why) {
    for (int f : got) ::close(f);
    throw Error("rendezvous: " + who + " " + why);
  };
  if (h.magic != kMagic) fail("sent a malformed message");
  if (h.bytes != bytes) {
    fail("contributed " + std::to_string(h.bytes) + " bytes where " + std::to_string(bytes) +
         " were expected (do all ranks run the same collectives in the same order?)");
  }
  if (h.num_fds != num_fds || got.size() != num_fds) fail("sent the wrong number of descriptors");
  if (bytes > 0) recv_all(fd, data, bytes, nullptr, deadline, who);
  if (fds != nullptr) fds->insert(fds->end(), got.begin(), got.end());
}

std::string rank_name(int r) { return "rank " + std::to_string(r); }

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    throw Error(std::string(name) + " is not set: start the program with tilecast-launch (tools/launch)");
  }
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 20) throw Error(std::string(name) + "=" + v + " is not a valid count");
  return static_cast<int>(x);
}

}  // namespace

void Rendezvous::barrier() {
  const char token = 1;
  std::vector<char> all(static_cast<size_t>(size()));
  allgather(&token, all.data(), 1);
}

void Rendezvous::broadcast(void* data, size_t bytes, int root) {
  if (root < 0 || root >= size()) throw Error("broadcast: root " + std::to_string(root) + " out of range");
  std::vector<char> all(bytes * static_cast<size_t>(size()));
  allgather(data, all.data(), bytes);
  std::memcpy(data, all.data() + bytes * static_cast<size_t>(root), bytes);
}

double parse_timeout_s(const char* text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const double s = text ? std::strtod(text, &end) : 0.0;
  if (text == nullptr || end == text || *end != '\0' || errno == ERANGE || !(s > 0) || s > kMaxRendezvousTimeoutS) {
    throw Error(what + " is '" + (text ? text : "") + "': a timeout is a number of seconds above 0 and at most " +
                std::to_string(static_cast<long>(kMaxRendezvousTimeoutS)) + " (a week)");
  }
  return s;
}

void check_timeout_s(double timeout_s, const std::string& who) {
  if (!(timeout_s > 0) || timeout_s > kMaxRendezvousTimeoutS)
    throw Error(who + ": the timeout of " + std::to_string(timeout_s) + " s is not above 0 and at most a week");
}

SocketRendezvous::SocketRendezvous(std::string address, int rank, int size, double timeout_s)
    : rank_(rank), size_(size), timeout_s_(timeout_s) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error("rendezvous: rank " + std::to_string(rank) + " of " + std::to_string(size) + " is out of range");
  }
  check_timeout_s(timeout_s, "rendezvous");
  if (size == 1) return;
  try {
    connect_ranks(address);
  } catch (...) {
    // The destructor does not run after a throwing constructor: nothing opened may stay open,
    // and a socket file this rank bound, left behind, would refuse the next try ("address already
    // in use"). A failed bind leaves listen_fd_ at -1: the file is then another job's.
    const bool bound_here = listen_fd_ >= 0;
    close_all();
    if (bound_here && !address.empty() && address[0] != '@') ::unlink(address.c_str());
    throw;
  }
}

void SocketRendezvous::connect_ranks(const std::string& address) {
  const int rank = rank_, size = size_;
  socklen_t len = 0;
  const sockaddr_un sa = make_address(address, &len);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  if (rank == 0) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw Error(errno_text("rendezvous: socket"));
    if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&sa), len) != 0) {
      const std::string msg = errno_text(("rendezvous: bind " + address).c_str());
      ::close(listen_fd_);
      listen_fd_ = -1;
      throw Error(msg + " (is another job using this address?)");
    }
    if (::listen(listen_fd_, size) != 0) throw Error(errno_text("rendezvous: listen"));
    peers_.assign(static_cast<size_t>(size), -1);
    for (int accepted = 1; accepted < size; ++accepted) {
      wait_for(listen_fd_, POLLIN, deadline,
               std::to_string(size - accepted) + " more rank(s) to connect to " + address);
      const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) throw Error(errno_text("rendezvous: accept"));
      // Abstract sockets have no permissions and their names are listed in /proc/net/unix: only a
      // process of this user may join (it is sent every rank's descriptors, GPU memory included).
      ucred peer{};
      socklen_t peer_len = sizeof peer;
      // It is turned away and the ranks still awaited.
      if (::getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0 || peer.uid != ::geteuid()) {
        ::close(c);
        std::fprintf(stderr, "tilecast rendezvous: refused a connection to %s from uid %u (not this user)\n",
                     address.c_str(), static_cast<unsigned>(peer.uid));
        --accepted;
        continue;
      }
      Hello h{};
      recv_all(c, &h, sizeof h, nullptr, deadline, "a connecting rank");
      if (h.magic != kMagic || h.size != size || h.rank <= 0 || h.rank >= size || peers_[h.rank] != -1) {
        ::close(c);
        throw Error("rendezvous: a peer announced rank " + std::to_string(h.rank) + " of " +
                    std::to_string(h.size) + ", which does not fit this job of " + std::to_string(size));
      }
      peers_[static_cast<size_t>(h.rank)] = c;
    }
    if (!address.empty() && address[0] != '@') ::unlink(address.c_str());
  } else {
    for (;;) {
      const int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c < 0) throw Error(errno_text("rendezvous: socket"));
      if (::connect(c, reinterpret_cast<const sockaddr*>(&sa), len) == 0) {
        peers_.assign(1, c);
        break;
      }
      const int err = errno;
      ::close(c);
      if (err != ECONNREFUSED && err != ENOENT && err != EAGAIN && err != EINTR) {
        errno = err;
        throw Error(errno_text(("rendezvous: connect " + address).c_str()));
      }
      if (remaining_ms(deadline) <= 0) throw Error("rendezvous: rank 0 never listened at " + address);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const Hello h{kMagic, rank, size};
    send_all(peers_[0], &h, sizeof h, nullptr, 0, deadline, rank_name(0));
  }
}

void SocketRendezvous::close_all() {
  for (int& fd : peers_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

SocketRendezvous::~SocketRendezvous() { close_all(); }

bool SocketRendezvous::in_env() {
  return std::getenv("TILECAST_RANK") != nullptr && std::getenv("TILECAST_WORLD_SIZE") != nullptr &&
         std::getenv("TILECAST_RDZV") != nullptr;
}

std::unique_ptr<SocketRendezvous> SocketRendezvous::from_env() {
  const int rank = env_int("TILECAST_RANK");
  const int size = env_int("TILECAST_WORLD_SIZE");
  const char* address = std::getenv("TILECAST_RDZV");
  if (address == nullptr || *address == '\0') {
    throw Error("TILECAST_RDZV is not set: start the program with tilecast-launch (tools/launch)");
  }
  double timeout_s = 120.0;
  if (const char* t = std::getenv("TILECAST_RDZV_TIMEOUT_S")) timeout_s = parse_timeout_s(t, "TILECAST_RDZV_TIMEOUT_S");
  return std::make_unique<SocketRendezvous>(address, rank, size, timeout_s);
}

std::unique_ptr<SocketRendezvous> SocketRendezvous::over(Rendezvous& meta, double timeout_s) {
  char address[96] = {};
  if (meta.rank() == 0) {
    std::random_device rd;
    std::snprintf(address, sizeof address, "@tilecast-fd-%d-%08x%08x", static_cast<int>(::getpid()), rd(), rd());
  }
  meta.broadcast(address, sizeof address, 0);
  address[sizeof address - 1] = '\0';
  return std::make_unique<SocketRendezvous>(address, meta.rank(), meta.size(), timeout_s);
}

void SocketRendezvous::allgather(const void* in, void* out, size_t bytes) {
  char* o = static_cast<char*>(out);
  std::memcpy(o + bytes * static_cast<size_t>(rank_), in, bytes);
  if (size_ == 1) return;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  const size_t total = bytes * static_cast<size_t>(size_);
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      recv_message(peers_[r], o + bytes * static_cast<size_t>(r), bytes, 0, nullptr, deadline, rank_name(r));
    }
    for (int r = 1; r < size_; ++r) send_message(peers_[r], o, total, nullptr, 0, deadline, rank_name(r));
  } else {
    send_message(peers_[0], in, bytes, nullptr, 0, deadline, rank_name(0));
    recv_message(peers_[0], o, total, 0, nullptr, deadline, rank_name(0));
  }
}

std::vector<int> SocketRendezvous::allgather_fds(int fd) {
  if (fd < 0) throw Error("allgather_fds: invalid descriptor " + std::to_string(fd));
  std::vector<int> fds;
  if (size_ == 1) {
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) throw Error(errno_text("allgather_fds: dup"));
    fds.push_back(own);
    return fds;
  }
  if (size_ > 253) throw Error("allgather_fds: more than 253 ranks cannot pass descriptors in one message");
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  if (rank_ == 0) {
    fds.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (fds[0] < 0) throw Error(errno_text("allgather_fds: dup"));
    try {
      for (int r = 1; r < size_; ++r) recv_message(peers_[r], nullptr, 0, 1, &fds, deadline, rank_name(r));
      // The kernel duplicates descriptors into the receiver, so rank 0 can pass them all on.
      for (int r = 1; r < size_; ++r) {
        send_message(peers_[r], nullptr, 0, fds.data(), static_cast<uint32_t>(fds.size()), deadline, rank_name(r));
      }
    } catch (...) {
      for (int f : fds) ::close(f);
      throw;
    }
  } else {
    send_message(peers_[0], nullptr, 0, &fd, 1, deadline, rank_name(0));
    recv_message(peers_[0], nullptr, 0, static_cast<uint32_t>(size_), &fds, deadline, rank_name(0));
  }
  return fds;
}

}  // namespace tilecast::comm
