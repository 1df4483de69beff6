// Timing on the GPU, as METHOD.md and STYLE.md habit 14 ask: warm-up first, then each iteration
// timed alone with CUDA events after the L2 was flushed by writing a large buffer (256 MiB by
// default, 4x an H200's L2; or by reading it, L2Flusher), median of the iterations. cuBLAS and
// tilecast use the same policy.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "machine_info.hpp"
#include "tilecast_test/device_matrix.hpp"

namespace tilecast::bench {

// Writes `bytes` of a device buffer (cudaMemsetAsync) so that no input of the next kernel is left
// in L2. bytes 0: no flush (numbers then include L2 hits; the report says so). With `read`, reads
// them instead (a cuBLAS sum into a device scalar): the written flush leaves L2 full of dirty
// lines, which the next kernel's reads evict and HBM then writes back, so that a memory-bound
// kernel's time also pays for writing up to L2's size; after a read the lines are clean.
class L2Flusher {
 public:
  explicit L2Flusher(size_t bytes, bool read = false);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream) const;
  size_t bytes() const { return buffer_.bytes(); }

 private:
  test::DeviceBuffer buffer_;
  test::DeviceBuffer sum_;  // read: the sum's destination
  void* cublas_ = nullptr;  // read: its cublasHandle_t (cublas_v2.h stays out of this header)
};

struct TimingStats {
  int iters = 0;
  double median_us = 0, min_us = 0, mean_us = 0, p10_us = 0, p90_us = 0;
  ClockSample during;  // SM clock, power and temperature sampled while the timed loop ran
  // The host enqueued the loop in about as long as the GPU took to run it: the GPU may have
  // waited for launches, so the times may include host overhead.
  bool host_bound = false;
  double host_us_per_iter = 0, gpu_us_per_iter = 0;  // gpu: flushes included
  // Every timed run of this function in round order, and where it sat: function `loop_index` of
  // `loop_functions` in the interleaved loop, `balanced` or not (interleave.hpp gives each run's
  // position and neighbours). For --json-rounds.
  std::vector<double> rounds_us;
  uint32_t loop_index = 0, loop_functions = 1;
  bool balanced = false;
  uint64_t relabel = 0;  // the labels' seed (0: the design's own labels)
};

using Enqueue = std::function<void(cudaStream_t)>;

// Runs fn `warmup` times, then `iters` timed times, each after a flush. Throws on CUDA errors
// (and passes on what fn throws).
TimingStats time_on_gpu(const Enqueue& fn, cudaStream_t stream, const L2Flusher& flusher, int warmup,
                        int iters, const ClockProbe* probe);

// The functions in turn (f0, f1, ..., f0, f1, ...), each run timed alone after a flush, so that
// all of them see the same clocks, power and temperature: under a 700 W limit the SM clock moves
// by up to 25% within seconds, which skews a comparison timed one loop after the other. With
// `balanced` the rounds follow a Williams design (interleave.hpp) for whole periods of it (`iters`
// rounded up), so that no function always follows the same one. A run is `calls_per_run` back-to-back calls of its function (no flush
// between them), timed as one and divided by the count: what a chain of calls costs, the launch
// gaps between them included. With `min_loop_ms` > 0 and a warm-up, the loop runs as many rounds
// more as make it last that long at the warm-up rounds' pace (short rows get more rounds).
// Balanced with a nonzero `relabel`, each period of the design gives the functions fresh labels
// drawn from it (interleave.hpp). One TimingStats per function; the host-bound figures describe
// the whole loop.
std::vector<TimingStats> time_interleaved(const std::vector<Enqueue>& fns, cudaStream_t stream,
                                          const L2Flusher& flusher, int warmup, int iters, const ClockProbe* probe,
                                          bool balanced, int calls_per_run = 1, double min_loop_ms = 0,
                                          uint64_t relabel = 0);

// Host time of enqueueing each function (its call returns, nothing waits for the GPU): `rounds`
// rounds, the functions in turn, each round `calls` back-to-back calls of one function after the
// stream drained; the per-call time of a round is its wall time / calls, and the median of the
// rounds is reported (in TimingStats::median_us etc., here host microseconds).
std::vector<TimingStats> time_host_enqueue(const std::vector<Enqueue>& fns, cudaStream_t stream, int rounds,
                                           int calls);

}  // namespace tilecast::bench
