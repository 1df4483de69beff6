// tilecast-barrier-bench: round-trip latency of the cross-rank barrier with R ranks emulated on
// one GPU (a cooperative kernel per rank, on its own stream), next to what a program would
// otherwise use to synchronise: a kernel-launch boundary, and NCCL's all-reduce of one integer
// (a one-rank communicator: on one GPU that is all NCCL can do).
//
// Read it for what it is: every "rank" here shares one GPU's L2, so the system-scope signals
// never cross NVLink; the figures are the protocol's cost (atomics, polling, grid syncs), a floor
// for real GPUs. scripts/multi_gpu_barrier.sh measures the real thing where GPUs are lent.
//
//   tilecast-barrier-bench [--rounds N] [--out FILE.md]
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "emulated_world.cuh"
#include "latency_stats.hpp"

namespace tc = tilecast::comm;
using tc::BarrierForm;
using tc::testing::EmulatedWorld;
using tc::testing::LaunchMode;
using tc::testing::RunConfig;

namespace {

__global__ void empty_kernel() {}

struct Row {
  std::string what;
  double mean_us, p50_us, p99_us, max_us;
  std::string note;
};

std::vector<Row> g_rows;

void add(const Row& r) {
  g_rows.push_back(r);
  if (r.p50_us < 0) {
    std::printf("%-62s mean %8.3f us  %s\n", r.what.c_str(), r.mean_us, r.note.c_str());
  } else {
    std::printf("%-62s mean %8.3f us  p50 %8.3f  p99 %8.3f  max %9.3f  %s\n", r.what.c_str(), r.mean_us, r.p50_us,
                r.p99_us, r.max_us, r.note.c_str());
  }
  std::fflush(stdout);
}

void bench_barrier(int ranks, uint32_t ctas, BarrierForm form, LaunchMode mode, uint32_t rounds) {
  EmulatedWorld world(ranks, ctas, 1);
  uint64_t* stamps = nullptr;
  TC_CHECK_CUDA(cudaMalloc(&stamps, 8ull * rounds * ranks));
  RunConfig c;
  c.form = form;
  c.mode = mode;
  c.ctas_per_rank = ctas;
  c.words = 0;
  c.rounds = rounds;
  c.timestamps = stamps;
  world.run(c);  // warm-up (module load, first touch)
  world.reset(0, 0);
  const auto r = world.run(c);
  if (r.error != cudaSuccess) {
    std::fprintf(stderr, "barrier run failed: %s\n", cudaGetErrorString(r.error));
    std::exit(1);
  }
  std::vector<uint64_t> t(rounds);
  TC_CHECK_CUDA(cudaMemcpy(t.data(), stamps, 8ull * rounds, cudaMemcpyDeviceToHost));  // rank 0's
  cudaFree(stamps);
  const auto l = tc::testing::round_gaps(t, rounds / 10);
  char what[128];
  std::snprintf(what, sizeof what, "%s barrier, R=%d, %u CTA%s/rank%s", form == BarrierForm::kPhaseSign ? "phase/sign" : "epoch",
                ranks, ctas, ctas > 1 ? "s" : "", mode == LaunchMode::kOneKernel ? " (one kernel)" : "");
  add({what, 1000.0 * r.ms / rounds, l.p50_us, l.p99_us, l.max_us,
       ctas > 1 ? "grid sync + signal + grid sync" : "signal + wait only"});
}

void bench_grid_sync(int ctas, uint32_t rounds) {
  uint32_t *counter, *slots;
  tc::testing::RoundStats* stats;
  TC_CHECK_CUDA(cudaMalloc(&counter, 4));
  TC_CHECK_CUDA(cudaMemset(counter, 0, 4));
  TC_CHECK_CUDA(cudaMalloc(&slots, 8ull * ctas));
  TC_CHECK_CUDA(cudaMalloc(&stats, sizeof *stats));
  TC_CHECK_CUDA(cudaMemset(stats, 0, sizeof *stats));
  const tc::testing::GridRoundArgs a{counter, slots, rounds, tc::WaitPolicy{10'000'000'000ull, nullptr}, stats, nullptr};
  tc::launch_cooperative(tc::testing::grid_rounds_kernel, ctas, 128, 0, nullptr, "grid rounds", a);
  TC_CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  tc::launch_cooperative(tc::testing::grid_rounds_kernel, ctas, 128, 0, nullptr, "grid rounds", a);
  cudaEventRecord(e1);
  TC_CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  add({"grid sync alone, " + std::to_string(ctas) + " CTAs", 1000.0 * ms / rounds, -1, -1, -1, "mean only"});
  cudaFree(counter);
  cudaFree(slots);
  cudaFree(stats);
}

void bench_launch_boundary(int ctas, int launches) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int i = 0; i < 100; ++i) empty_kernel<<<ctas, 128, 0, s>>>();
  cudaStreamSynchronize(s);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0, s);
  for (int i = 0; i < launches; ++i) empty_kernel<<<ctas, 128, 0, s>>>();
  cudaEventRecord(e1, s);
  TC_CHECK_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  add({"kernel boundary: empty kernel, " + std::to_string(ctas) + " CTAs, back to back", 1000.0 * ms / launches, -1, -1, -1,
       "stream launches"});
  // The same boundaries replayed from a CUDA graph (no CPU launch cost).
  cudaGraph_t g;
  cudaGraphExec_t ge;
  const int per_graph = 1000;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < per_graph; ++i) empty_kernel<<<ctas, 128, 0, s>>>();
  cudaStreamEndCapture(s, &g);
  TC_CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  cudaGraphLaunch(ge, s);
  cudaStreamSynchronize(s);
  cudaEventRecord(e0, s);
  for (int i = 0; i < 5; ++i) cudaGraphLaunch(ge, s);
  cudaEventRecord(e1, s);
  TC_CHECK_CUDA(cudaEventSynchronize(e1));
  cudaEventElapsedTime(&ms, e0, e1);
  add({"kernel boundary: empty kernel, " + std::to_string(ctas) + " CTAs, CUDA graph", 1000.0 * ms / (5 * per_graph), -1,
       -1, -1, "graph replay"});
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

// NCCL on one GPU can only be a one-rank communicator, which has nothing to exchange: the in-place
// all-reduce may enqueue nothing at all, the out-of-place one a copy. Both are shown, as GPU time
// between events and as host time per call, so that nobody mistakes them for a barrier.
void bench_nccl(int iters) {
  ncclComm_t comm;
  int dev = 0;
  tc::check_nccl(ncclCommInitAll(&comm, 1, &dev), "ncclCommInitAll");
  int* buf;
  TC_CHECK_CUDA(cudaMalloc(&buf, 8));
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int version = 0;
  ncclGetVersion(&version);
  for (bool in_place : {true, false}) {
    int* recv = in_place ? buf : buf + 1;
    for (int i = 0; i < 100; ++i) ncclAllReduce(buf, recv, 1, ncclInt32, ncclSum, comm, s);
    cudaStreamSynchronize(s);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const auto t0 = std::chrono::steady_clock::now();
    cudaEventRecord(e0, s);
    for (int i = 0; i < iters; ++i) tc::check_nccl(ncclAllReduce(buf, recv, 1, ncclInt32, ncclSum, comm, s), "ncclAllReduce");
    cudaEventRecord(e1, s);
    TC_CHECK_CUDA(cudaEventSynchronize(e1));
    const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    char note[96];
    std::snprintf(note, sizeof note, "GPU time between events; host %.3f us per call", host_us);
    add({std::string("NCCL ") + std::to_string(version) + " all-reduce of one int32, 1 rank, " +
             (in_place ? "in place" : "out of place"),
         1000.0 * ms / iters, -1, -1, -1, note});
  }
  cudaFree(buf);
  ncclCommDestroy(comm);
}

void write_markdown(const std::string& path, uint32_t rounds) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::fprintf(f, "| what | mean us | p50 us | p99 us | max us | note |\n|---|---|---|---|---|---|\n");
  for (const Row& r : g_rows) {
    auto cell = [](double v) {
      char b[32] = "-";
      if (v >= 0) std::snprintf(b, sizeof b, "%.3f", v);
      return std::string(b);
    };
    std::fprintf(f, "| %s | %.3f | %s | %s | %s | %s |\n", r.what.c_str(), r.mean_us, cell(r.p50_us).c_str(),
                 cell(r.p99_us).c_str(), cell(r.max_us).c_str(), r.note.c_str());
  }
  std::fprintf(f, "\n%s, %d SMs, driver API %d, %s, %u rounds per barrier row\n", p.name, p.multiProcessorCount, driver,
               date, rounds);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t rounds = 20000;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = static_cast<uint32_t>(std::atoi(argv[++i]));
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else {
      std::fprintf(stderr, "usage: tilecast-barrier-bench [--rounds N] [--out FILE.md]\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 77;
  }
  try {
    for (int ranks : {2, 4, 8}) {
      for (BarrierForm form : {BarrierForm::kPhaseSign, BarrierForm::kEpoch}) {
        bench_barrier(ranks, 1, form, LaunchMode::kKernelPerRank, rounds);
        bench_barrier(ranks, 128 / ranks, form, LaunchMode::kKernelPerRank, rounds);
      }
    }
    bench_barrier(8, 1, BarrierForm::kPhaseSign, LaunchMode::kOneKernel, rounds);
    bench_barrier(8, 1, BarrierForm::kEpoch, LaunchMode::kOneKernel, rounds);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    bench_grid_sync(sms, rounds);
    bench_launch_boundary(1, 10000);
    bench_launch_boundary(sms, 10000);
    bench_nccl(10000);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilecast-barrier-bench: %s\n", e.what());
    return 1;
  }
  if (!out.empty()) write_markdown(out, rounds);
  return 0;
}
