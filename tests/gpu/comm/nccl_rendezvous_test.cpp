// NcclRendezvous on one GPU: a rank whose peers never join gives up at its deadline with an
// error (the communicator aborted) instead of hanging; a one-rank communicator gathers its bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tilecast/comm/rendezvous.hpp"
#include "tilecast/types.hpp"

namespace tc = tilecast::comm;

namespace {

TEST(CommNcclRendezvousGpu, AJoinThatNoOtherRankMakesTimesOut) {
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  constexpr double kTimeoutS = 3.0;
  // Generous: NCCL's own setup before the wait, and the abort after it.
  constexpr double kSlackS = 30.0;
  const auto start = std::chrono::steady_clock::now();
  std::string what;
  try {
    tc::NcclRendezvous::join(id, 2, 0, 0, kTimeoutS);  // rank 1 never comes
  } catch (const tilecast::Error& e) {
    what = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(what.empty()) << "joining a two-rank communicator alone returned after " << waited << " s";
  EXPECT_NE(what.find("ncclCommInitRank"), std::string::npos) << what;
  EXPECT_NE(what.find("did not finish within"), std::string::npos) << what;
  EXPECT_NE(what.find("aborted"), std::string::npos) << what;
  EXPECT_GE(waited, kTimeoutS);
  EXPECT_LT(waited, kTimeoutS + kSlackS);
}

TEST(CommNcclRendezvousGpu, AOneRankCommunicatorGathersItsOwnBytes) {
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  const auto r = tc::NcclRendezvous::join(id, 1, 0, 0, 30.0);
  ASSERT_EQ(r->rank(), 0);
  ASSERT_EQ(r->size(), 1);
  for (size_t bytes : {size_t{16}, size_t{4096}}) {  // the second grows the staging buffer
    std::vector<uint8_t> in(bytes), out(bytes, 0xAB);
    for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + bytes);
    r->allgather(in.data(), out.data(), bytes);
    EXPECT_EQ(out, in) << bytes << " bytes";
  }
}

}  // namespace
