// Per-stream state is keyed by stream_key: one handle is one stream in every thread, but
// cudaStreamPerThread is each thread's own stream, so each thread's key differs.
#include <gtest/gtest.h>

#include <thread>

#include "api/stream_key.hpp"

namespace tilecast::api {
namespace {

StreamKey key_in_another_thread(cudaStream_t stream) {
  StreamKey key;
  std::thread([&] { key = stream_key(stream); }).join();
  return key;
}

TEST(StreamKey, PerThreadStreamIsEachThreadsOwn) {
  EXPECT_NE(stream_key(cudaStreamPerThread), key_in_another_thread(cudaStreamPerThread));
  EXPECT_EQ(stream_key(cudaStreamPerThread), stream_key(cudaStreamPerThread));
}

TEST(StreamKey, OtherHandlesAreOneStreamInEveryThread) {
  const cudaStream_t created = reinterpret_cast<cudaStream_t>(0x1000);  // a handle's value is all that counts
  for (cudaStream_t s : {cudaStream_t{nullptr}, cudaStreamLegacy, created}) {
    EXPECT_EQ(stream_key(s), key_in_another_thread(s));
    EXPECT_NE(stream_key(s), stream_key(cudaStreamPerThread));
  }
  EXPECT_NE(stream_key(nullptr), stream_key(created));
}

}  // namespace
}  // namespace tilecast::api
