// One rank of a multi-process barrier run, started by tilecast-launch: builds the symmetric heap
// (export, exchange, import, map) over the launcher's rendezvous or NCCL, then plays rounds of
// payload + barrier + check, a negative run, or a latency run.
//
//   tilecast_comm_barrier_worker [--rounds N] [--form ps|epoch|both] [--ctas G] [--words W]
//       [--timeout-ms T] (--ctas 0: one CTA per SM) [--meta auto|socket|nccl] [--fd auto|socket|pidfd] [--wrap]
//       [--missing-rank R] [--bench] [--nccl-baseline]
//
// Exit codes: 0 success (for --missing-rank: every other rank timed out with the right
// diagnostic), 1 failure, 77 no GPU.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "latency_stats.hpp"
#include "round_kernel.cuh"
#include "tilecast/comm/barrier.hpp"
#include "tilecast/comm/launch.hpp"
#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/comm/symmetric_heap.hpp"

namespace tc = tilecast::comm;
using tc::BarrierForm;
using tc::testing::RoundArgs;
using tc::testing::RoundStats;

namespace {

struct Options {
  uint32_t rounds = 1000;
  std::string form = "both";
  uint32_t ctas = 4;
  uint32_t words = 16;
  uint64_t timeout_ms = 10'000;
  std::string meta = "auto";
  std::string fd = "auto";
  bool wrap = false;
  int missing_rank = -1;
  bool bench = false;
  bool nccl_baseline = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw tilecast::Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") o.rounds = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--form") o.form = next();
    else if (a == "--ctas") o.ctas = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--words") o.words = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--timeout-ms") o.timeout_ms = std::stoull(next());
    else if (a == "--meta") o.meta = next();
    else if (a == "--fd") o.fd = next();
    else if (a == "--wrap") o.wrap = true;
    else if (a == "--missing-rank") o.missing_rank = std::stoi(next());
    else if (a == "--bench") o.bench = true;
    else if (a == "--nccl-baseline") o.nccl_baseline = true;
    else throw tilecast::Error("unknown option " + a);
  }
  if (o.form != "ps" && o.form != "epoch" && o.form != "both") throw tilecast::Error("--form is ps, epoch or both");
  if (o.rounds == 0) throw tilecast::Error("--rounds must be positive");
  return o;
}

constexpr uint64_t kChannelOffset = 0;
constexpr uint64_t kPayloadOffset = 4096;

struct Outcome {
  cudaError_t error;
  RoundStats stats;
  double ms;
  std::vector<uint64_t> stamps;
};

Outcome play(const tc::SymmetricHeap& heap, BarrierForm form, const Options& o, uint32_t first_round,
             tc::TimeoutReport* report, bool keep_stamps) {
  RoundStats* stats = nullptr;
  uint64_t* stamps = nullptr;
  tc::check_cuda(cudaMalloc(&stats, sizeof *stats), "cudaMalloc");
  tc::check_cuda(cudaMemset(stats, 0, sizeof *stats), "cudaMemset");
  if (keep_stamps) tc::check_cuda(cudaMalloc(&stamps, 8ull * o.rounds), "cudaMalloc");
  RoundArgs a{};
  a.map = heap.map();
  a.channel_offset = kChannelOffset;
  a.payload_offset = kPayloadOffset;
  a.rank_base = heap.rank();
  a.ctas_per_rank = o.ctas;
  a.words = o.bench ? 0 : o.words;
  a.rounds = o.rounds;
  a.first_round = first_round;
  a.policy = tc::WaitPolicy{o.timeout_ms * 1'000'000ull, report};
  a.stop_rank = o.missing_rank;
  a.stop_after = 8;
  a.timestamps = stamps;
  a.stats = stats;
  auto kernel = form == BarrierForm::kPhaseSign ? tc::testing::barrier_rounds_kernel<BarrierForm::kPhaseSign>
                                                : tc::testing::barrier_rounds_kernel<BarrierForm::kEpoch>;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  tc::launch_cooperative(kernel, static_cast<int>(o.ctas), 128, 0, nullptr, "barrier worker rounds", a);
  cudaEventRecord(e1);
  Outcome out{};
  if (report != nullptr && o.missing_rank >= 0 && heap.rank() != o.missing_rank) {
    // Negative run: wait for the record, not for the kernel. After a trap, with other
    // processes' kernels time-slicing on the same GPU, the synchronize can take long to return.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(3 * o.timeout_ms + 20'000);
    while (__atomic_load_n(&report->valid, __ATOMIC_ACQUIRE) != 1 && cudaStreamQuery(nullptr) == cudaErrorNotReady &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out.error = __atomic_load_n(&report->valid, __ATOMIC_ACQUIRE) == 1 ? cudaErrorLaunchFailure : cudaStreamQuery(nullptr);
    return out;
  }
  out.error = cudaDeviceSynchronize();
  if (out.error != cudaSuccess) return out;
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  out.ms = ms;
  tc::check_cuda(cudaMemcpy(&out.stats, stats, sizeof out.stats, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (keep_stamps) {
    out.stamps.resize(o.rounds);
    tc::check_cuda(cudaMemcpy(out.stamps.data(), stamps, 8ull * o.rounds, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(stamps);
  }
  cudaFree(stats);
  return out;
}

// Times ncclAllReduce of one int32 (the baseline for a barrier's latency).
double nccl_allreduce_us(ncclComm_t comm, int iters) {
  int* buf = nullptr;
  tc::check_cuda(cudaMalloc(&buf, sizeof(int)), "cudaMalloc");
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int i = 0; i < 100; ++i) tc::check_nccl(ncclAllReduce(buf, buf, 1, ncclInt32, ncclSum, comm, s), "ncclAllReduce");
  cudaStreamSynchronize(s);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s);
  for (int i = 0; i < iters; ++i) tc::check_nccl(ncclAllReduce(buf, buf, 1, ncclInt32, ncclSum, comm, s), "ncclAllReduce");
  cudaEventRecord(b, s);
  tc::check_cuda(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaFree(buf);
  return 1000.0 * ms / iters;
}

int run(const Options& opts) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 77;
  }
  auto sock = tc::SocketRendezvous::from_env();
  const int me = sock->rank(), n = sock->size();
  const char* dev_env = std::getenv("TILECAST_DEVICE");
  const int device = (dev_env != nullptr ? std::atoi(dev_env) : 0) % count;
  tc::check_cuda(cudaSetDevice(device), "cudaSetDevice");
  Options o = opts;
  if (o.ctas == 0) {  // --ctas 0: a CTA on every SM
    int sms = 0;
    tc::check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    o.ctas = static_cast<uint32_t>(sms);
  }
  const int per_gpu = std::getenv("TILECAST_PROCS_PER_GPU") ? std::atoi(std::getenv("TILECAST_PROCS_PER_GPU")) : 1;

  // Metadata through NCCL where NCCL can run (one process per GPU), else the launcher's socket.
  std::unique_ptr<tc::NcclRendezvous> nccl;
  const bool use_nccl = o.meta == "nccl" || (o.meta == "auto" && per_gpu == 1);
  if (use_nccl) nccl = tc::NcclRendezvous::create(*sock, device);
  tc::Rendezvous& meta = use_nccl ? static_cast<tc::Rendezvous&>(*nccl) : *sock;

  const uint64_t bytes = kPayloadOffset + tc::testing::payload_bytes(n, o.ctas, o.words);
  tc::SymmetricHeap heap = tc::SymmetricHeap::create(meta, device, bytes, tc::parse_fd_transport(o.fd.c_str()));
  if (me == 0) {
    std::printf("worker: %d ranks, %d per GPU, metadata over %s, descriptors by %s, %zu bytes per rank\n", n, per_gpu,
                use_nccl ? "NCCL" : "the launcher's socket", tc::fd_transport_name(heap.transport()),
                heap.bytes_per_rank());
  }

  tc::TimeoutReport* report = nullptr;
  tc::check_cuda(cudaHostAlloc(&report, sizeof *report, cudaHostAllocMapped), "cudaHostAlloc");
  std::memset(report, 0, sizeof *report);

  std::vector<BarrierForm> forms;
  if (o.form != "epoch") forms.push_back(BarrierForm::kPhaseSign);
  if (o.form != "ps") forms.push_back(BarrierForm::kEpoch);
  int failures = 0;
  for (BarrierForm form : forms) {
    const char* name = form == BarrierForm::kPhaseSign ? "phase/sign" : "epoch";
    const uint32_t first = o.wrap ? 0xFFFFFFFFu - 9 : 0;
    tc::init_barrier_channel(meta, heap.map(), kChannelOffset, first, first);
    if (o.missing_rank >= 0) {
      // Negative run: the missing rank leaves after 8 rounds; every other rank must trap with a
      // record that names it (epoch form) or shows the short count (phase/sign form).
      const Outcome out = play(heap, form, o, 0, report, false);
      if (me == o.missing_rank) {
        if (out.error != cudaSuccess) ++failures;
        std::printf("rank %d: left after 8 rounds as told (%s)\n", me, cudaGetErrorString(out.error));
        return failures == 0 ? 0 : 1;  // one form per negative run: the context of the others is gone
      }
      const tc::TimeoutReport& t = *report;
      const bool ok = out.error != cudaSuccess && t.valid == 1 && t.rank == me && t.counter == first + 8 &&
                      (form == BarrierForm::kEpoch
                           ? t.missing_rank == o.missing_rank
                           : t.observed == (tc::PhaseSignRound{first + 8}.sign() ? 1 : n - 1));
      std::printf("rank %d: %s negative run: outcome '%s', record valid=%u rank=%d counter=%u observed=%lld missing=%d -> %s\n",
                  me, name, cudaGetErrorString(out.error), t.valid, t.rank, t.counter,
                  static_cast<long long>(t.observed), t.missing_rank, ok ? "as expected" : "WRONG");
      // The trap killed this context: tearing it down (unmapping the heap, the runtime's exit
      // handlers) can block, so leave at once (PyTorch's symmetric-memory tests do the same).
      std::fflush(nullptr);
      std::_Exit(ok ? 0 : 1);
    }
    const Outcome out = play(heap, form, o, 0, report, o.bench);
    if (out.error != cudaSuccess) {
      std::printf("rank %d: %s: kernel failed: %s\n", me, name, cudaGetErrorString(out.error));
      return 1;
    }
    const uint64_t expect_checked = o.bench ? 0 : uint64_t{o.rounds} * n * o.ctas * o.words;
    if (out.stats.errors != 0 || out.stats.checked_lo != static_cast<uint32_t>(expect_checked)) {
      std::printf("rank %d: %s: %s\n", me, name, tc::testing::describe(out.stats).c_str());
      ++failures;
    }
    std::vector<double> per_rank(static_cast<size_t>(n));
    const double us = 1000.0 * out.ms / o.rounds;
    meta.allgather(&us, per_rank.data(), sizeof us);
    if (me == 0) {
      double worst = 0;
      for (double x : per_rank) worst = std::max(worst, x);
      if (o.bench) {
        const auto l = tc::testing::round_gaps(out.stamps, o.rounds / 10);
        std::printf("BENCH form=%s ranks=%d per_gpu=%d ctas=%u rounds=%u mean_us=%.3f (slowest rank) p50_us=%.3f "
                    "p99_us=%.3f max_us=%.3f (rank 0's gaps)\n",
                    name, n, per_gpu, o.ctas, o.rounds, worst, l.p50_us, l.p99_us, l.max_us);
      } else {
        std::printf("worker: %s: %u rounds x %d ranks x %u CTAs x %u words checked, %s; %.3f us per round\n", name,
                    o.rounds, n, o.ctas, o.words, failures ? "MISMATCHES" : "all correct", worst);
      }
    }
  }
  if (o.nccl_baseline && nccl != nullptr) {
    const double us = nccl_allreduce_us(nccl->comm(), 2000);
    std::vector<double> all(static_cast<size_t>(n));
    meta.allgather(&us, all.data(), sizeof us);
    if (me == 0) {
      double worst = 0;
      for (double x : all) worst = std::max(worst, x);
      std::printf("BENCH nccl_allreduce_int32 ranks=%d mean_us=%.3f (slowest rank)\n", n, worst);
    }
  }
  meta.barrier();  // nobody unmaps while a peer may still signal
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the launcher's log as they happen
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker (rank %s): %s\n", std::getenv("TILECAST_RANK") ? std::getenv("TILECAST_RANK") : "?",
                 e.what());
    return 1;
  }
}
