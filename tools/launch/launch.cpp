// tilecast-launch: starts one process per rank for the comm tests and benchmarks, on one host.
//
//   tilecast-launch [-n N] [--gpus G] [--procs-per-gpu K] [--timeout S] [--rdzv ADDR] -- prog args...
//
// Without -n it starts K processes on each of the G visible GPUs (G defaults to every visible
// GPU). With K > 1, several ranks share a GPU: NCCL cannot run them, but the rest of the
// bootstrap (export, exchange, import, map) can, which is how it is tested on a single GPU.
// Each rank gets TILECAST_RANK, TILECAST_WORLD_SIZE, TILECAST_DEVICE (rank / K), TILECAST_PROCS_PER_GPU
// and TILECAST_RDZV (a UNIX socket address, abstract by default, where rank 0 listens; see
// tilecast/comm/rendezvous.hpp). CUDA_VISIBLE_DEVICES is left alone: peers must see each
// other's GPUs to map their memory.
//
// The ranks run in one process group of their own. If one fails (non-zero exit or a signal), the
// others are stopped a second later (they would wait for it forever at the next barrier;
// kExitGrace says why not at once), every failing rank is named, and the launcher exits with the
// first failure's code (128 + signal for a signal). All ranks exiting 77 (skipped) gives 77.
// --timeout stops everything and exits 124.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

extern char** environ;

namespace {

constexpr int kSkipped = 77;
// After the first failure the others are stopped only this much later: the rank that failed may
// still be exiting when a peer sees its socket close and fails too, and a SIGTERM then would cost
// it its own exit code (tests/cpu/comm/launcher_test.cpp, AFailingRankStillExitingIsNamed).
constexpr std::chrono::milliseconds kExitGrace{1000};
volatile sig_atomic_t g_forward_signal = 0;

void on_signal(int sig) { g_forward_signal = sig; }

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tilecast-launch: %s\n"
               "usage: tilecast-launch [-n N] [--gpus G] [--procs-per-gpu K] [--timeout S] [--rdzv ADDR] "
               "-- program [args...]\n",
               why);
  std::exit(2);
}

int parse_count(const char* flag, const char* value, int lo) {
  if (value == nullptr) usage((std::string(flag) + " needs a value").c_str());
  char* end = nullptr;
  const long x = std::strtol(value, &end, 10);
  if (*end != '\0' || x < lo || x > 4096) usage((std::string(flag) + " " + value + " is not a valid count").c_str());
  return static_cast<int>(x);
}

struct Options {
  int nproc = -1;
  int gpus = -1;
  int per_gpu = 1;
  double timeout_s = 0;
  std::string rdzv;
  std::vector<char*> argv;
};

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--") {
      ++i;
      break;
    } else if (a == "-n" || a == "--nproc") {
      o.nproc = parse_count("-n", next, 1), ++i;
    } else if (a == "--gpus") {
      o.gpus = parse_count("--gpus", next, 1), ++i;
    } else if (a == "--procs-per-gpu") {
      o.per_gpu = parse_count("--procs-per-gpu", next, 1), ++i;
    } else if (a == "--timeout") {
      if (next == nullptr) usage("--timeout needs seconds");
      char* end = nullptr;
      o.timeout_s = std::strtod(next, &end), ++i;
      // (!(x > 0) refuses NaN too, and isfinite infinity: neither would ever stop the job.)
      if (end == next || *end != '\0' || !(o.timeout_s > 0) || !std::isfinite(o.timeout_s))
        usage("--timeout must be a positive number of seconds");
    } else if (a == "--rdzv") {
      if (next == nullptr) usage("--rdzv needs an address");
      o.rdzv = next, ++i;
    } else if (a == "-h" || a == "--help") {
      usage("help");
    } else {
      usage(("unknown option " + a + " (put the program after --)").c_str());
    }
  }
  for (; i < argc; ++i) o.argv.push_back(argv[i]);
  if (o.argv.empty()) usage("no program given");
  o.argv.push_back(nullptr);
  return o;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.gpus < 0) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    if (count == 0 && o.nproc < 0) {
      std::fprintf(stderr, "tilecast-launch: no GPU visible; pass -n to start ranks anyway\n");
      return kSkipped;
    }
    // No GPU but -n given: host-only programs (the rendezvous tests); devices are nominal.
    o.gpus = count > 0 ? count : ceil_div(o.nproc, o.per_gpu);
  }
  if (o.nproc < 0) o.nproc = o.gpus * o.per_gpu;
  if (o.nproc > o.gpus * o.per_gpu) {
    std::fprintf(stderr,
                 "tilecast-launch: %d ranks do not fit %d GPU(s) x %d process(es) per GPU "
                 "(raise --procs-per-gpu)\n",
                 o.nproc, o.gpus, o.per_gpu);
    return 2;
  }
  if (o.rdzv.empty()) {
    std::random_device rd;
    char name[96];
    std::snprintf(name, sizeof name, "@tilecast-launch-%d-%08x", static_cast<int>(::getpid()), rd());
    o.rdzv = name;
  }

  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::vector<pid_t> pids(static_cast<size_t>(o.nproc), -1);
  pid_t group = 0;
  auto stop_all = [&](int sig) {
    if (group > 0) ::kill(-group, sig);
  };
  for (int r = 0; r < o.nproc; ++r) {
    std::vector<std::string> env_store;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "TILECAST_RANK=", 14) == 0 || std::strncmp(*e, "TILECAST_WORLD_SIZE=", 20) == 0 ||
          std::strncmp(*e, "TILECAST_DEVICE=", 16) == 0 || std::strncmp(*e, "TILECAST_RDZV=", 14) == 0 ||
          std::strncmp(*e, "TILECAST_PROCS_PER_GPU=", 23) == 0) {
        continue;
      }
      env_store.emplace_back(*e);
    }
    env_store.push_back("TILECAST_RANK=" + std::to_string(r));
    env_store.push_back("TILECAST_WORLD_SIZE=" + std::to_string(o.nproc));
    env_store.push_back("TILECAST_DEVICE=" + std::to_string(r / o.per_gpu));
    env_store.push_back("TILECAST_PROCS_PER_GPU=" + std::to_string(o.per_gpu));
    env_store.push_back("TILECAST_RDZV=" + o.rdzv);
    std::vector<char*> envp;
    for (auto& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, group);  // 0 for the first: it founds the group
    pid_t pid = -1;
    const int err = posix_spawnp(&pid, o.argv[0], nullptr, &attr, o.argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
      std::fprintf(stderr, "tilecast-launch: cannot start %s: %s\n", o.argv[0], std::strerror(err));
      stop_all(SIGKILL);
      return 127;
    }
    if (group == 0) group = pid;
    pids[static_cast<size_t>(r)] = pid;
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int live = o.nproc;
  int first_failure = -1, failure_code = 0;
  bool all_skipped = true;
  Clock::time_point kill_at{}, term_at{};
  bool stopping = false, term_pending = false;
  while (live > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-group, &status, WNOHANG);
    if (pid > 0) {
      int rank = -1;
      for (int r = 0; r < o.nproc; ++r) {
        if (pids[static_cast<size_t>(r)] == pid) rank = r;
      }
      if (rank < 0) continue;
      --live;
      const int code = exit_code_of(status);
      if (code != kSkipped) all_skipped = false;
      const bool stopped_by_us = stopping && (code == 128 + SIGTERM || code == 128 + SIGKILL);
      if (code != 0 && code != kSkipped && !stopped_by_us) {
        // Every failure is named: the first to exit is not always the cause (a rank that sees
        // its peer's socket close may exit before the peer is reaped).
        std::fprintf(stderr, "tilecast-launch: rank %d exited with code %d\n", rank, code);
      }
      if (code != 0 && code != kSkipped && first_failure < 0) {
        first_failure = rank;
        failure_code = code;
        if (live > 0) {
          std::fprintf(stderr, "tilecast-launch: stopping the other %d rank(s): SIGTERM in %lld ms to any left\n", live,
                       static_cast<long long>(kExitGrace.count()));
          term_pending = true;
          term_at = Clock::now() + kExitGrace;
        }
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (g_forward_signal != 0) {
      stop_all(g_forward_signal);
      g_forward_signal = 0;
      if (!stopping) {
        stopping = true;
        kill_at = Clock::now() + std::chrono::seconds(5);
      }
    }
    if (o.timeout_s > 0 && !stopping &&
        std::chrono::duration<double>(Clock::now() - start).count() > o.timeout_s) {
      std::fprintf(stderr, "tilecast-launch: timed out after %.0f s; stopping all ranks\n", o.timeout_s);
      stop_all(SIGTERM);
      stopping = true;
      kill_at = Clock::now() + std::chrono::seconds(5);
      first_failure = first_failure < 0 ? o.nproc : first_failure;
      failure_code = failure_code == 0 ? 124 : failure_code;
    }
    if (term_pending && !stopping && Clock::now() > term_at) {
      stop_all(SIGTERM);
      stopping = true;
      kill_at = Clock::now() + std::chrono::seconds(5);
    }
    if (stopping && Clock::now() > kill_at) stop_all(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (first_failure >= 0) return failure_code;
  return all_skipped ? kSkipped : 0;
}
