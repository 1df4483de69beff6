// R ranks emulated on one GPU: one allocation split into R regions (the same flat layout the
// symmetric heap maps across processes), a barrier channel and a payload area in each, and the
// launches: a cooperative kernel per rank on its own stream, running concurrently, or one
// cooperative kernel playing every rank.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "round_kernel.cuh"
#include "tilecast/comm/launch.hpp"
#include "tilecast/comm/rendezvous.hpp"

namespace tilecast::comm::testing {

#define TC_CHECK_CUDA(call) ::tilecast::comm::check_cuda((call), #call)

enum class LaunchMode { kKernelPerRank, kOneKernel };

struct RunConfig {
  BarrierForm form = BarrierForm::kPhaseSign;
  LaunchMode mode = LaunchMode::kKernelPerRank;
  uint32_t ctas_per_rank = 4;
  uint32_t threads = 128;
  uint32_t words = 8;
  uint32_t rounds = 1000;
  uint64_t timeout_ns = 10ull * 1000 * 1000 * 1000;
  int32_t stop_rank = -1;
  uint32_t stop_after = 0;
  int32_t skew_rank = -1;
  uint32_t skew_round = 0;
  uint64_t skew_ns = 0;
  uint64_t* timestamps = nullptr;  // device memory, ranks x rounds, or null
  TimeoutReport* report = nullptr; // mapped host memory, or null
};

struct RunResult {
  cudaError_t error;   // of the synchronize: a trap shows up here
  RoundStats stats;
  double ms;           // event time of the whole run, all ranks
};

class EmulatedWorld {
 public:
  static constexpr uint64_t kChannelOffset = 0;
  static constexpr uint64_t kPayloadOffset = 4096;

  EmulatedWorld(int ranks, uint32_t max_ctas_per_rank, uint32_t max_words) : ranks_(ranks) {
    stride_ = kPayloadOffset + payload_bytes(ranks, max_ctas_per_rank, max_words);
    stride_ = (stride_ + 4095) / 4096 * 4096;
    TC_CHECK_CUDA(cudaMalloc(&base_, stride_ * ranks));
    streams_.resize(ranks);
    for (auto& s : streams_) TC_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    TC_CHECK_CUDA(cudaMalloc(&stats_, sizeof(RoundStats)));
    TC_CHECK_CUDA(cudaEventCreate(&start_));
    TC_CHECK_CUDA(cudaEventCreate(&stop_));
    reset(0, 0);
  }
  ~EmulatedWorld() {
    // After a trap the context is gone and these fail; nothing to do about it.
    for (auto& s : streams_) cudaStreamDestroy(s);
    cudaFree(base_);
    cudaFree(stats_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EmulatedWorld(const EmulatedWorld&) = delete;
  EmulatedWorld& operator=(const EmulatedWorld&) = delete;

  SymmetricMap map() const { return {reinterpret_cast<uint64_t>(base_), stride_, 0, ranks_}; }
  int ranks() const { return ranks_; }

  // Zeroes every region and writes each rank's initial barrier words. Also poisons the payload,
  // so that a round that read before anyone wrote fails its check.
  void reset(uint32_t first_counter, uint32_t first_epoch) {
    TC_CHECK_CUDA(cudaMemset(base_, 0xA5, stride_ * ranks_));
    std::vector<char> block(BarrierLayout::bytes(ranks_));
    barrier_initial_block(block.data(), ranks_, first_counter, first_epoch);
    for (int r = 0; r < ranks_; ++r) {
      TC_CHECK_CUDA(cudaMemcpy(static_cast<char*>(base_) + r * stride_ + kChannelOffset, block.data(), block.size(),
                               cudaMemcpyHostToDevice));
    }
    next_round_ = 0;
  }

  // The barrier words of one rank, as they are now.
  struct Words {
    uint32_t grid_counter, phase_counter, epoch;
    int32_t signal[2];
    std::vector<uint32_t> inbox;
  };
  Words words(int rank) const {
    std::vector<char> block(BarrierLayout::bytes(ranks_));
    TC_CHECK_CUDA(cudaMemcpy(block.data(), static_cast<char*>(base_) + rank * stride_ + kChannelOffset, block.size(),
                             cudaMemcpyDeviceToHost));
    Words w{};
    auto u32 = [&](uint32_t off) { return *reinterpret_cast<uint32_t*>(block.data() + off); };
    w.grid_counter = u32(BarrierLayout::kGridCounter);
    w.phase_counter = u32(BarrierLayout::kPhaseCounter);
    w.epoch = u32(BarrierLayout::kEpoch);
    w.signal[0] = static_cast<int32_t>(u32(BarrierLayout::kSignal));
    w.signal[1] = static_cast<int32_t>(u32(BarrierLayout::kSignal + 4));
    for (int r = 0; r < ranks_; ++r) w.inbox.push_back(u32(BarrierLayout::kInbox + 4 * r));
    return w;
  }

  RunResult run(const RunConfig& c) {
    TC_CHECK_CUDA(cudaMemset(stats_, 0, sizeof(RoundStats)));
    TC_CHECK_CUDA(cudaDeviceSynchronize());
    RoundArgs a{};
    a.map = map();
    a.channel_offset = kChannelOffset;
    a.payload_offset = kPayloadOffset;
    a.ctas_per_rank = c.ctas_per_rank;
    a.words = c.words;
    a.rounds = c.rounds;
    a.first_round = next_round_;
    a.policy = WaitPolicy{c.timeout_ns, c.report};
    a.stop_rank = c.stop_rank;
    a.stop_after = c.stop_after;
    a.skew_rank = c.skew_rank;
    a.skew_round = c.skew_round;
    a.skew_ns = c.skew_ns;
    a.timestamps = c.timestamps;
    a.stats = stats_;
    auto kernel = c.form == BarrierForm::kPhaseSign ? barrier_rounds_kernel<BarrierForm::kPhaseSign>
                                                    : barrier_rounds_kernel<BarrierForm::kEpoch>;
    TC_CHECK_CUDA(cudaEventRecord(start_, nullptr));
    // Every rank's stream starts after the start event, so the event brackets all of them.
    for (auto& s : streams_) TC_CHECK_CUDA(cudaStreamWaitEvent(s, start_));
    if (c.mode == LaunchMode::kOneKernel) {
      a.rank_base = 0;
      if (c.timestamps != nullptr) a.timestamps = c.timestamps;
      launch_cooperative(kernel, ranks_ * static_cast<int>(c.ctas_per_rank), static_cast<int>(c.threads), 0,
                         streams_[0], "emulated ranks (one kernel)", a);
    } else {
      // Each rank's own grid must be co-resident (a cooperative launch guarantees it), and all R
      // kernels must run at once, which no launch attribute guarantees: the total is checked
      // against the GPU's capacity, and the timeout catches the rest.
      int device = 0;
      TC_CHECK_CUDA(cudaGetDevice(&device));
      require_coresident(reinterpret_cast<const void*>(kernel), ranks_ * static_cast<int>(c.ctas_per_rank),
                         static_cast<int>(c.threads), 0, device, "emulated ranks (all kernels together)");
      const char* how = std::getenv("TILECAST_EMULATION_LAUNCH");
      const bool plain = how != nullptr && std::string(how) == "plain";
      for (int r = 0; r < ranks_; ++r) {
        a.rank_base = r;
        a.timestamps = c.timestamps != nullptr ? c.timestamps + static_cast<uint64_t>(r) * c.rounds : nullptr;
        if (plain) {
          kernel<<<c.ctas_per_rank, c.threads, 0, streams_[r]>>>(a);
          TC_CHECK_CUDA(cudaGetLastError());
        } else {
          launch_cooperative(kernel, static_cast<int>(c.ctas_per_rank), static_cast<int>(c.threads), 0, streams_[r],
                             "emulated rank", a);
        }
      }
    }
    for (auto& s : streams_) {
      cudaEvent_t done;
      TC_CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      TC_CHECK_CUDA(cudaEventRecord(done, s));
      TC_CHECK_CUDA(cudaStreamWaitEvent(nullptr, done));
      cudaEventDestroy(done);
    }
    TC_CHECK_CUDA(cudaEventRecord(stop_, nullptr));
    RunResult r{};
    r.error = cudaDeviceSynchronize();
    if (r.error != cudaSuccess) return r;
    float ms = 0;
    TC_CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    r.ms = ms;
    TC_CHECK_CUDA(cudaMemcpy(&r.stats, stats_, sizeof r.stats, cudaMemcpyDeviceToHost));
    next_round_ += c.rounds;
    return r;
  }

 private:
  int ranks_;
  uint64_t stride_ = 0;
  void* base_ = nullptr;
  std::vector<cudaStream_t> streams_;
  RoundStats* stats_ = nullptr;
  cudaEvent_t start_{}, stop_{};
  uint32_t next_round_ = 0;
};

}  // namespace tilecast::comm::testing
