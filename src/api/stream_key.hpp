// Which stream a GEMM's per-stream state (the split-K workspace, the unit counters, the lock that
// keeps a call's two launches together) belongs to. A handle names the same stream in every
// thread but cudaStreamPerThread, which names each calling thread's own stream: two threads that
// pass it run concurrently, so each gets state of its own.
#pragma once

#include <cuda_runtime_api.h>

#include <compare>
#include <thread>

namespace tilecast::api {

struct StreamKey {
  cudaStream_t stream = nullptr;
  std::thread::id thread;  // the caller's with cudaStreamPerThread, else the default id
  auto operator<=>(const StreamKey&) const = default;
};

inline StreamKey stream_key(cudaStream_t stream) {
  return {stream, stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id{}};
}

}  // namespace tilecast::api
