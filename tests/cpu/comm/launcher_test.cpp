// tilecast-launch end to end on the CPU: environment, rendezvous, exit codes, fail-fast, timeout.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Result {
  int code;
  std::string output;
  double seconds;
};

Result run(const std::string& args) {
  const std::string cmd = std::string(TILECAST_LAUNCH) + " " + args + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = p != nullptr ? ::pclose(p) : -1;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, s};
}

const std::string kWorker = TILECAST_RDZV_WORKER;

}  // namespace

// Each run names its GPU count, so that the tests mean the same on a machine with GPUs (where
// the launcher would otherwise count them) as on CI's without.
TEST(CommLauncher, RanksMeetAndSwapDescriptors) {
  for (const char* how : {"socket", "auto"}) {
    const Result r = run("-n 4 --gpus 4 -- " + kWorker + " " + how);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("worker: 4 ranks exchanged descriptors"), std::string::npos) << r.output;
  }
}

TEST(CommLauncher, SeveralRanksPerGpuGetTheirDevice) {
  const Result r = run("-n 6 --gpus 3 --procs-per-gpu 2 -- " + kWorker + " socket");
  EXPECT_EQ(r.code, 0) << r.output;  // the worker exits 3 if TILECAST_DEVICE != rank / 2
}

// Rank 2 exits 42 right after the first collective; the others block in the next one and would
// wait out the rendezvous timeout (120 s) if the launcher did not stop them. A peer may notice the
// closed socket and exit before rank 2 is reaped, so the exit code is whichever failure came
// first; rank 2's own is always named.
namespace {
void expect_rank_2_named(const std::string& worker_args) {
  const Result r = run("-n 4 --gpus 4 -- " + kWorker + " socket fail-rank 2" + worker_args);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 2 exited with code 42"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopping the other"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 30.0);
}
}  // namespace

TEST(CommLauncher, OneFailingRankStopsTheOthers) { expect_rank_2_named(""); }

// The same, but rank 2 is still exiting when its peers see its socket close and fail: it is
// named with its own code all the same (the launcher lets a failing group settle before it stops
// the rest, kExitGrace in tools/launch/launch.cpp).
TEST(CommLauncher, AFailingRankStillExitingIsNamed) { expect_rank_2_named(" slow-exit"); }

// A rank that fails while another never reaches a collective: the other is stopped once the
// grace has passed, and the launcher exits with the failure's code.
TEST(CommLauncher, AHungRankIsStoppedAfterTheGrace) {
  const Result r = run("-n 2 --gpus 2 -- sh -c 'if [ \"$TILECAST_RANK\" = 0 ]; then exit 5; fi; exec sleep 60'");
  EXPECT_EQ(r.code, 5) << r.output;
  EXPECT_NE(r.output.find("rank 0 exited with code 5"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 20.0);
}

TEST(CommLauncher, TimeoutAndBadUsage) {
  Result r = run("-n 2 --gpus 2 --timeout 1 -- sleep 60");
  EXPECT_EQ(r.code, 124) << r.output;
  EXPECT_LT(r.seconds, 20.0);
  r = run("-n 2 --gpus 2 -- sh -c 'exit 77'");
  EXPECT_EQ(r.code, 77) << r.output;
  r = run("-n 3 --gpus 1 -- true");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("raise --procs-per-gpu"), std::string::npos) << r.output;
  r = run("-n 2");
  EXPECT_EQ(r.code, 2) << r.output;
  r = run("-n 2 --gpus 2 -- /nonexistent/program");
  EXPECT_EQ(r.code, 127) << r.output;
}
