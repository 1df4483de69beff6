#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "interleave.hpp"
#include "tilecast_test/cuda_check.hpp"

namespace tilecast::bench {
namespace {

// Events, destroyed however the timing loop ends.
class Events {
 public:
  explicit Events(size_t n) : ev_(n, nullptr) {
    for (cudaEvent_t& e : ev_) TC_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (cudaEvent_t e : ev_)
      if (e) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return ev_[i]; }

 private:
  std::vector<cudaEvent_t> ev_;
};

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// Order statistics of per-run times (sorts `us`).
TimingStats stats_of(std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  TimingStats st;
  st.iters = static_cast<int>(us.size());
  st.min_us = us.front();
  st.median_us = percentile(us, 0.5);
  st.p10_us = percentile(us, 0.1);
  st.p90_us = percentile(us, 0.9);
  double sum = 0;
  for (double x : us) sum += x;
  st.mean_us = sum / static_cast<double>(us.size());
  return st;
}

}  // namespace

L2Flusher::L2Flusher(size_t bytes, bool read) : buffer_(bytes) {
  if (!read || bytes == 0) return;
  TC_CUDA_CHECK(cudaMemset(buffer_.get(), 0, bytes));  // finite floats to sum
  sum_ = test::DeviceBuffer(sizeof(float));
  cublasHandle_t h = nullptr;
  TC_CUBLAS_CHECK(cublasCreate(&h));
  cublas_ = h;
  // The sum lands in device memory: no copy back, no wait on the host.
  TC_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
}

L2Flusher::~L2Flusher() {
  if (cublas_) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
}

void L2Flusher::flush(cudaStream_t stream) const {
  if (!buffer_.bytes()) return;
  if (!cublas_) {
    TC_CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, buffer_.bytes(), stream));
    return;
  }
  const auto h = static_cast<cublasHandle_t>(cublas_);
  TC_CUBLAS_CHECK(cublasSetStream(h, stream));
  TC_CUBLAS_CHECK(cublasSasum_64(h, static_cast<int64_t>(buffer_.bytes() / sizeof(float)),
                                 static_cast<const float*>(buffer_.get()), 1, static_cast<float*>(sum_.get())));
}

std::vector<TimingStats> time_interleaved(const std::vector<Enqueue>& fns, cudaStream_t stream,
                                          const L2Flusher& flusher, int warmup, int iters, const ClockProbe* probe,
                                          bool balanced, int calls_per_run, double min_loop_ms,
                                          uint64_t relabel) {
  const size_t n = fns.size();
  std::vector<TimingStats> out(n);
  if (n == 0) return out;
  if (iters < 1) iters = 1;
  if (calls_per_run < 1) calls_per_run = 1;
  const auto run = [&](const Enqueue& fn) {
    for (int c = 0; c < calls_per_run; ++c) fn(stream);
  };
  Events warm(2);
  TC_CUDA_CHECK(cudaEventRecord(warm[0], stream));
  for (int i = 0; i < warmup; ++i)
    for (const Enqueue& fn : fns) {
      flusher.flush(stream);
      run(fn);
    }
  TC_CUDA_CHECK(cudaEventRecord(warm[1], stream));
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  TC_CUDA_CHECK(cudaGetLastError());
  if (min_loop_ms > 0 && warmup > 0) {
    float warm_ms = 0;
    TC_CUDA_CHECK(cudaEventElapsedTime(&warm_ms, warm[0], warm[1]));
    iters = static_cast<int>(rounds_for_min_loop(static_cast<size_t>(iters), min_loop_ms, warm_ms / warmup));
  }
  if (balanced) iters = static_cast<int>(balanced_rounds(static_cast<size_t>(iters), n));

  // Run r (round r / n, position r % n) runs function which[r] and is timed by events 2 * r and
  // the one after.
  const size_t runs = static_cast<size_t>(iters) * n;
  std::vector<size_t> which(runs);
  for (size_t r = 0; r < runs; ++r) which[r] = interleaved_function(r / n, r % n, n, balanced, relabel);
  Events ev(2 * runs + 2);
  const size_t begin = 2 * runs, end = begin + 1;
  TC_CUDA_CHECK(cudaEventRecord(ev[begin], stream));
  const auto host0 = std::chrono::steady_clock::now();
  for (size_t r = 0; r < runs; ++r) {
    flusher.flush(stream);
    TC_CUDA_CHECK(cudaEventRecord(ev[2 * r], stream));
    run(fns[which[r]]);
    TC_CUDA_CHECK(cudaEventRecord(ev[2 * r + 1], stream));
  }
  TC_CUDA_CHECK(cudaEventRecord(ev[end], stream));
  const auto host1 = std::chrono::steady_clock::now();
  ClockSample during;
  if (probe) during = probe->sample();  // the loop is most likely still running
  TC_CUDA_CHECK(cudaEventSynchronize(ev[end]));
  TC_CUDA_CHECK(cudaGetLastError());

  float total_ms = 0;
  TC_CUDA_CHECK(cudaEventElapsedTime(&total_ms, ev[begin], ev[end]));
  const double host_us = std::chrono::duration<double, std::micro>(host1 - host0).count();
  // Each function's runs in round order (every round runs each function once).
  std::vector<std::vector<double>> rounds_us(n);
  for (size_t r = 0; r < runs; ++r) {
    float ms = 0;
    TC_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
    rounds_us[which[r]].push_back(ms * 1e3 / calls_per_run);
  }
  for (size_t j = 0; j < n; ++j) {
    TimingStats& st = out[j];
    std::vector<double> us = rounds_us[j];  // stats_of sorts its copy
    st = stats_of(us);
    st.rounds_us = std::move(rounds_us[j]);
    st.loop_index = static_cast<uint32_t>(j);
    st.loop_functions = static_cast<uint32_t>(n);
    st.balanced = balanced;
    st.relabel = balanced ? relabel : 0;
    st.during = during;
    // Shared by the interleaved functions: the loop as a whole.
    st.host_us_per_iter = host_us / static_cast<double>(runs);
    st.gpu_us_per_iter = total_ms * 1e3 / static_cast<double>(runs);
    st.host_bound = host_us > 0.9 * total_ms * 1e3;
  }
  return out;
}

std::vector<TimingStats> time_host_enqueue(const std::vector<Enqueue>& fns, cudaStream_t stream, int rounds,
                                           int calls) {
  std::vector<std::vector<double>> per_call(fns.size());
  for (const Enqueue& fn : fns) fn(stream);  // every plan, kernel and descriptor cached
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < fns.size(); ++j) {
      TC_CUDA_CHECK(cudaStreamSynchronize(stream));
      const auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) fns[j](stream);
      const auto t1 = std::chrono::steady_clock::now();
      per_call[j].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
  TC_CUDA_CHECK(cudaStreamSynchronize(stream));
  TC_CUDA_CHECK(cudaGetLastError());
  std::vector<TimingStats> out;
  for (std::vector<double>& us : per_call) out.push_back(stats_of(us));
  return out;
}

TimingStats time_on_gpu(const Enqueue& fn, cudaStream_t stream, const L2Flusher& flusher, int warmup,
                        int iters, const ClockProbe* probe) {
  return time_interleaved({fn}, stream, flusher, warmup, iters, probe, /*balanced=*/false).front();  // one: no order
}

}  // namespace tilecast::bench
